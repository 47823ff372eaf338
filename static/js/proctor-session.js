/* One session, live, for proctors (templates/sessions/proctor_session.html; docs/proctoring.md).
 *
 * Socket: the session's event socket, ws/sessions/<id>/events/?after_seq=N (sessions/consumers.py),
 * which gives staff the proctor view of every event. The page replays the log from the start,
 * then follows it live, and builds: the summary (status, part, clocks, counts), the transcript
 * (both speakers), the evidence ledger per target, guardrail interceptions (original and
 * replacement text), recoveries, and the timeline grouped by correlationId. After a dropped
 * connection it reconnects with after_seq = the last seq it has: nothing is shown twice.
 * The socket also sends {"kind":"presence"} frames (the candidate's exam room connection,
 * sessions/presence.py): "Candidate's connection" shows connected / reconnecting / disconnected
 * since, ticking from reconnecting to disconnected after presence.reconnectingMs, and changes
 * are announced.
 *
 * Actions: the forms work without JavaScript (POST, then a message on this page); here they are
 * sent to the REST API (POST /api/v1/sessions/<id>/actions/, JSON, CSRF header, one
 * Idempotency-Key per submission, so a double click acts once) and the answer is read out in
 * the "Action status" region. Terminating asks for confirmation first.
 */
(function () {
  "use strict";

  const cfg = JSON.parse(document.getElementById("proctor-session-config").textContent);
  const $ = (id) => document.getElementById(id);
  const TERMINAL = new Set(["completed", "aborted", "expired"]);
  const COVERING = new Set(["positive", "self_correction"]);
  const LABELS = {
    scheduled: cfg.summary.statusLabel,
    scaffolding: "Waiting",
    ready: "Waiting",
    in_progress: "In progress",
    paused: "Paused",
    completed: "Completed",
    aborted: "Aborted",
    expired: "Expired",
  };

  const S = {
    lastSeq: 0,
    seen: new Set(),
    live: false,
    retry: 0,
    socket: null,
    offset: 0,
    examState: cfg.summary.examState,
    nodeId: null,
    exam: { budget: null, active: 0, since: null },
    node: { budget: null, active: 0, since: null },
    followUps: 0,
    guardrails: 0,
    recoveries: new Map(),
    open: new Set(),
    groups: new Map(),
    signals: new Map(),
    partial: null,
    presence: cfg.summary.candidateConnection || null,
  };
  const CANDIDATE = {
    connected: "Connected",
    reconnecting: "Reconnecting",
    disconnected: "Disconnected",
    not_connected: "Not connected yet",
  };

  const serverNow = () => Date.now() + S.offset;

  function fmt(ms) {
    if (ms === null || ms === undefined) return "—";
    const negative = ms < 0;
    const total = Math.round(Math.abs(ms) / 1000);
    const text = `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
    return negative ? `−${text}` : text;
  }

  // --- clocks (active time only; extensions and time warnings re-anchor them) -------------------
  const active = (c, at) => c.active + (c.since !== null ? Math.max(0, at - c.since) : 0);
  const run = (c, at) => {
    if (c.since === null) c.since = at;
  };
  const stop = (c, at) => {
    if (c.since !== null) {
      c.active += Math.max(0, at - c.since);
      c.since = null;
    }
  };
  const remaining = (c, at) => (c.budget === null ? null : c.budget - active(c, at));

  function renderSummary() {
    const now = serverNow();
    const started = S.exam.since !== null || S.exam.active > 0;
    let status = LABELS[S.examState] || S.examState;
    if ((S.examState === "in_progress" || S.examState === "paused") && S.open.size) status = "Recovering";
    $("sum-status").textContent = status;
    $("sum-node").textContent = S.nodeId || "—";
    $("sum-elapsed").textContent = started ? fmt(active(S.exam, now)) : "—";
    $("sum-exam-left").textContent = started ? fmt(remaining(S.exam, now)) : "—";
    $("sum-node-left").textContent = S.nodeId ? fmt(remaining(S.node, now)) : "—";
    $("sum-follow-ups").textContent = String(S.followUps);
    $("sum-guardrails").textContent = String(S.guardrails);
    $("sum-recoveries").textContent = String(S.recoveries.size);
    if (TERMINAL.has(S.examState)) $("sum-health").textContent = "ended";
    document.body.dataset.examState = S.examState;
    renderPresence(now);
  }

  // --- the candidate's connection ------------------------------------------------------------------
  function presenceStatus(c, now) {
    if (c.status !== "reconnecting" && c.status !== "disconnected") return c.status;
    return c.since && now - Date.parse(c.since) >= c.reconnectingMs ? "disconnected" : "reconnecting";
  }

  function renderPresence(now) {
    const c = S.presence;
    if (!c) return;
    const status = presenceStatus(c, now);
    const when = c.since ? new Date(c.since).toLocaleTimeString() : "";
    let text = CANDIDATE[status] || status;
    if (status === "reconnecting") text += ` (offline since ${when})`;
    else if (status === "disconnected") text += ` since ${when}`;
    else if (status === "connected" && c.sockets > 1) text += ` in ${c.sockets} tabs`;
    if (c.reconnects) text += ` · ${c.reconnects} reconnect${c.reconnects === 1 ? "" : "s"}`;
    const dd = $("sum-candidate");
    if (dd.textContent !== text) dd.textContent = text;
    dd.dataset.status = status;
  }

  function presence(c) {
    const before = S.presence ? S.presence.status === "connected" : null;
    S.presence = c;
    const now = c.status === "connected";
    if (before !== null && before !== now) {
      announce(now ? "The candidate is connected again." : "The candidate's connection dropped.");
    }
    renderPresence(serverNow());
  }

  function announce(text) {
    if (!S.live) return;
    const line = document.createElement("p");
    line.textContent = text;
    $("session-announcer").append(line);
    window.setTimeout(() => line.remove(), 15000);
  }

  // --- transcript ------------------------------------------------------------------------------
  function turn(speaker, text, extra) {
    const li = document.createElement("li");
    li.className = `turn turn-${speaker}${extra ? ` ${extra}` : ""}`;
    const who = document.createElement("span");
    who.className = "turn-who";
    who.textContent = speaker === "examiner" ? `${cfg.examinerName}: ` : `${cfg.candidateName}: `;
    const said = document.createElement("span");
    said.textContent = text;
    li.append(who, said);
    return li;
  }

  function addTurn(speaker, text) {
    if (S.partial) {
      S.partial.remove();
      S.partial = null;
    }
    const list = $("transcript");
    list.append(turn(speaker, text));
    if (S.live) list.lastChild.scrollIntoView({ block: "nearest" });
  }

  // --- ledger ----------------------------------------------------------------------------------
  function ledgerSignal(p) {
    S.signals.set(p.signalId, p);
    for (const targetId of p.targetIds || []) {
      const row = document.querySelector(
        `.ledger-node[data-node-id="${CSS.escape(p.nodeId)}"] tr[data-target-id="${CSS.escape(targetId)}"]`,
      );
      if (!row) continue;
      const found = [...S.signals.values()].filter(
        (s) => s.nodeId === p.nodeId && (s.targetIds || []).includes(targetId),
      );
      const covered = found.some((s) => COVERING.has(s.signalKind));
      const state = row.querySelector(".ledger-state");
      state.textContent = covered ? "covered" : found.length ? "partial" : "none yet";
      row.classList.toggle("is-covered", covered);
      const cell = row.querySelector(".ledger-signals");
      cell.replaceChildren(
        ...found.map((s) => {
          const line = document.createElement("p");
          const excerpt = s.excerpt ? ` “${s.excerpt}”` : "";
          line.textContent = `${s.signalKind} (${Math.round(s.confidence * 100)}%)${excerpt}`;
          return line;
        }),
      );
    }
  }

  // --- interceptions and recoveries ----------------------------------------------------------------
  function guardrailRow(e) {
    const p = e.payload;
    const tr = document.createElement("tr");
    const cells = [
      new Date(e.timestamp).toLocaleTimeString(),
      `${p.guardrailType} (${p.severity})`,
      p.actionTaken,
      p.originalText === undefined || p.originalText === null ? "—" : p.originalText,
      p.replacementText === undefined || p.replacementText === null ? "—" : p.replacementText || "(nothing)",
    ];
    for (const text of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    tr.title = p.description || "";
    $("guardrail-rows").append(tr);
    $("no-guardrails").hidden = true;
  }

  function recovery(e) {
    const p = e.payload;
    let item = S.recoveries.get(p.recoveryId);
    if (!item) {
      item = { li: document.createElement("li"), attempts: 0, type: p.recoveryType || "recovery", resolution: null };
      S.recoveries.set(p.recoveryId, item);
      $("recoveries").append(item.li);
      $("no-recoveries").hidden = true;
    }
    if (e.type === "recovery_started") {
      item.attempts += 1;
      S.open.add(p.recoveryId);
      if (item.attempts === 1) announce(`Recovery started: ${item.type}.`);
    } else {
      item.resolution = p.resolution;
      S.open.delete(p.recoveryId);
    }
    item.li.textContent = `${item.type} at ${p.nodeId || S.nodeId || "—"}: ${item.attempts} attempt${
      item.attempts === 1 ? "" : "s"
    }${item.resolution ? `, ${item.resolution}` : ", running"}`;
  }

  // --- timeline ----------------------------------------------------------------------------------
  function describe(e) {
    const p = e.payload || {};
    switch (e.type) {
      case "node_entered":
        return `entered ${p.nodeId} (${p.nodeKind})`;
      case "node_exited":
        return `left ${p.nodeId}: ${p.reason}`;
      case "exam_state_changed":
        return `${p.fromState} → ${p.toState}${p.reason ? ` (${p.reason})` : ""}`;
      case "proctor_action":
        return `${p.action}${p.seconds ? ` +${p.seconds}s (${p.scope})` : ""}${p.category ? ` [${p.category}]` : ""} by ${p.actor}: ${p.reason || "no reason"}`;
      case "proctor_instruction":
        return `${p.mode} instruction ${p.status} by ${p.proctorId}: “${p.text}”${p.reason ? ` (${p.reason})` : ""}`;
      case "transcript_final":
        return `${p.speaker}: ${p.text}`;
      case "examiner_utterance_final":
        return `examiner (${p.purpose}): ${p.text}`;
      case "evidence_signal":
        return `${p.signalKind} evidence for ${(p.targetIds || []).join(", ")}`;
      case "guardrail_triggered":
        return `${p.guardrailType}: ${p.description}`;
      case "recovery_started":
        return `recovery ${p.recoveryType}: ${p.triggerDescription}`;
      case "recovery_resolved":
        return `recovery ${p.recoveryId} ${p.resolution}`;
      case "candidate_command_received":
        return `${p.command} ${p.accepted ? "accepted" : `refused (${p.rejectionReason})`}`;
      case "follow_up_used":
        return `follow-up ${p.followUpIndex} of ${p.maxFollowUps}`;
      case "transition_decision":
        return `${p.fromNodeId} → ${p.toNodeId} (${p.reason})`;
      case "time_warning":
        return `${fmt(p.remainingMs)} left (${p.scope})`;
      case "system_error":
        return `${p.code}: ${p.message}`;
      case "exam_completed":
        return `completed: ${p.reason}`;
      case "candidate_connection_changed":
        return `candidate ${p.status}${p.offlineMs ? ` after ${fmt(p.offlineMs)} offline` : ""}${
          p.closeCode ? ` (close code ${p.closeCode})` : ""
        }, ${p.reconnects} reconnect${p.reconnects === 1 ? "" : "s"}`;
      default:
        return "";
    }
  }

  function timeline(e) {
    const key = e.correlationId || `seq-${e.seq}`;
    let group = S.groups.get(key);
    if (!group) {
      const li = document.createElement("li");
      li.className = "timeline-group";
      if (e.correlationId) {
        const label = document.createElement("p");
        label.className = "group-label";
        label.textContent = e.correlationId;
        li.append(label);
      }
      const list = document.createElement("ol");
      li.append(list);
      $("timeline").append(li);
      group = list;
      S.groups.set(key, group);
    }
    const item = document.createElement("li");
    const time = new Date(e.timestamp).toLocaleTimeString();
    item.textContent = `#${e.seq} ${time} ${e.type}${describe(e) ? ` — ${describe(e)}` : ""}`;
    group.append(item);
  }

  // --- events ------------------------------------------------------------------------------------
  function handle(e) {
    if (e.seq !== undefined && e.seq !== null) {
      if (e.seq <= S.lastSeq) return;
      S.lastSeq = e.seq;
    }
    if (e.type === "heartbeat") {
      const at = Date.parse(e.timestamp);
      if (!Number.isNaN(at)) S.offset = at - Date.now();
      return;
    }
    if (S.seen.has(e.eventId)) return;
    S.seen.add(e.eventId);
    if (e.seq) timeline(e);
    const at = Date.parse(e.timestamp);
    const p = e.payload || {};
    switch (e.type) {
      case "bot_ready":
        if (p.estimatedDurationSec) S.exam.budget = Math.round(p.estimatedDurationSec * 1000);
        break;
      case "exam_state_changed":
        S.examState = p.toState;
        if (p.toState === "in_progress") {
          run(S.exam, at);
          if (S.nodeId) run(S.node, at);
        } else {
          stop(S.exam, at);
          stop(S.node, at);
        }
        if (TERMINAL.has(p.toState)) S.open.clear();
        announce(`The exam is now ${LABELS[p.toState] || p.toState}.`);
        break;
      case "node_entered": {
        S.nodeId = p.nodeId;
        S.node = { budget: p.timeBudgetMs || null, active: 0, since: null };
        if (S.exam.since !== null) run(S.node, at);
        const node = document.querySelector(`.ledger-node[data-node-id="${CSS.escape(p.nodeId)}"]`);
        if (node) node.classList.add("is-entered");
        break;
      }
      case "follow_up_used":
        S.followUps += 1;
        break;
      case "guardrail_triggered":
        S.guardrails += 1;
        guardrailRow(e);
        break;
      case "recovery_started":
      case "recovery_resolved":
        recovery(e);
        break;
      case "examiner_utterance_final":
        addTurn("examiner", p.text);
        break;
      case "transcript_final":
        if (p.speaker !== "examiner") addTurn("candidate", p.text);
        break;
      case "transcript_delta":
        if (p.speaker === "candidate") {
          if (!S.partial) {
            S.partial = turn("candidate", "", "is-partial");
            $("transcript").append(S.partial);
          }
          S.partial.lastChild.textContent = `${p.text} …`;
        }
        break;
      case "evidence_signal":
        ledgerSignal(p);
        break;
      case "time_warning":
      case "proctor_action":
        if (p.remainingMs !== undefined && p.remainingMs !== null && (p.scope === "exam" || p.scope === "node")) {
          const c = p.scope === "exam" ? S.exam : S.node;
          c.budget = active(c, at) + p.remainingMs;
        }
        break;
      case "exam_completed":
        stop(S.exam, at);
        stop(S.node, at);
        break;
      default:
        break;
    }
    renderSummary();
  }

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${window.location.host}${cfg.socketPath}?after_seq=${S.lastSeq}`);
    S.socket = socket;
    socket.addEventListener("message", (message) => {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch (error) {
        return;
      }
      if (frame.kind === "event") handle(frame.event);
      else if (frame.kind === "presence") presence(frame.presence);
      else if (frame.kind === "caught_up") {
        S.live = true;
        S.retry = 0;
        $("live-state").textContent = "Live: events appear as they happen.";
        document.body.dataset.sessionLive = "true";
        socket.send(JSON.stringify({ kind: "ping" }));
      }
    });
    socket.addEventListener("close", () => {
      if (S.socket !== socket) return;
      S.live = false;
      document.body.dataset.sessionLive = "false";
      $("live-state").textContent = "Connection lost. Reconnecting…";
      const delay = Math.min(10000, 500 * Math.pow(2, S.retry));
      S.retry += 1;
      window.setTimeout(connect, delay);
    });
  }

  // --- actions -----------------------------------------------------------------------------------
  function csrfToken() {
    const field = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (field) return field.value;
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function newKey() {
    return window.crypto.randomUUID
      ? window.crypto.randomUUID()
      : `${Date.now()}-${Math.random().toString(16).slice(2)}`;
  }

  function body(form, submitter) {
    const data = new FormData(form);
    const out = { action: submitter && submitter.name === "action" ? submitter.value : data.get("action"), reason: data.get("reason") };
    if (out.action === "extend_time") {
      out.seconds = Math.round(Number(data.get("minutes")) * 60);
      out.scope = data.get("scope");
    } else if (out.action === "instruct") {
      out.mode = data.get("mode");
      out.text = data.get("text");
    } else if (out.action === "flag_irregularity") {
      out.category = data.get("category");
    }
    return out;
  }

  function requestRow(request) {
    if (!request || !request.id) return;
    const tr = document.createElement("tr");
    const outcome = `${request.status}${request.message ? `: ${request.message}` : ""}`;
    const when = new Date(request.createdAt).toLocaleTimeString();
    for (const text of [when, request.action, request.proctor ? request.proctor.name : "", outcome, request.reason]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    $("request-rows").prepend(tr);
    $("no-requests").hidden = true;
  }

  async function send(form, submitter) {
    const status = $("action-status");
    const payload = body(form, submitter);
    const key = form.querySelector("input[name=idempotency_key]");
    const buttons = form.querySelectorAll("button");
    buttons.forEach((b) => (b.disabled = true));
    status.textContent = "Sending…";
    try {
      const response = await fetch(cfg.actionsUrl, {
        method: "POST",
        credentials: "same-origin",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          "X-CSRFToken": csrfToken(),
          "Idempotency-Key": `${key.value}:${payload.action}`,
        },
        body: JSON.stringify(payload),
      });
      const answer = await response.json().catch(() => ({}));
      requestRow(response.ok ? answer : (answer.error && answer.error.details || {}).request);
      if (response.ok) {
        status.textContent = answer.message || "Done.";
        status.dataset.outcome = "done";
        form.querySelectorAll("input[name=reason], textarea[name=text]").forEach((f) => (f.value = ""));
        key.value = newKey();
      } else {
        const error = answer.error || {};
        status.textContent = `Not done: ${error.message || response.statusText}`;
        status.dataset.outcome = "failed";
        if (error.code !== "invalid") key.value = newKey();
      }
    } catch (error) {
      status.textContent = "Not sent: the connection failed. Try again.";
      status.dataset.outcome = "failed";
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  let pending = null;
  document.querySelectorAll("form[data-action-form]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (form.dataset.confirm) {
        pending = { form, submitter: event.submitter };
        const dialog = $(form.dataset.confirm);
        if (typeof dialog.showModal === "function") dialog.showModal();
        else dialog.setAttribute("open", "");
        return;
      }
      send(form, event.submitter);
    });
  });
  const closeDialog = () => {
    const dialog = $("terminate-dialog");
    if (typeof dialog.close === "function") dialog.close();
    else dialog.removeAttribute("open");
  };
  $("terminate-confirm").addEventListener("click", () => {
    closeDialog();
    if (pending) send(pending.form, pending.submitter);
    pending = null;
  });
  $("terminate-cancel").addEventListener("click", () => {
    closeDialog();
    pending = null;
    $("reason-terminate").focus();
  });

  window.setInterval(renderSummary, 1000);
  window.setInterval(() => {
    if (S.socket && S.socket.readyState === WebSocket.OPEN) S.socket.send(JSON.stringify({ kind: "ping" }));
  }, 15000);

  // Test hook (docs/proctoring.md).
  window.vivaProctorSession = {
    get live() {
      return S.live;
    },
    get lastSeq() {
      return S.lastSeq;
    },
  };

  renderSummary();
  connect();
})();
