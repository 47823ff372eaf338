/* One session, live, for proctors (templates/sessions/proctor_session.html; docs/proctoring.md).
 *
 * Socket: the session's event socket, ws/sessions/<id>/events/?after_seq=N (sessions/consumers.py),
 * which gives staff the proctor view of every event. The page replays the log from the start,
 * then follows it live, and builds: the summary (status, part, clocks, counts), the transcript
 * (both speakers), the evidence ledger per target, guardrail interceptions (original and
 * replacement text), recoveries, and the timeline grouped by correlationId. After a dropped
 * connection it reconnects with after_seq = the last seq it has: nothing is shown twice.
 * The socket also sends {"kind":"presence"} frames (the candidate's exam room connection,
 * proctoring/presence.py): "Candidate's connection" shows connected / reconnecting / disconnected
 * since, ticking from reconnecting to disconnected after presence.reconnectingMs, and changes
 * are announced. What the events mean (status, node, clocks, counts, recoveries, ledger,
 * timeline lines) is folded by the pure static/js/events/proctor-session.js (loaded before this
 * file; unit-tested in frontend/test/events against the summary proctoring/overview.py folds);
 * this file only shows it. Alerts (one per kind, guardrails one per type, issue #31) are listed
 * newest first and updated in place with their count; a new one is announced once when live, a
 * repeat at most once a minute per alert (ALERT_UPDATE_MS), never once per hit.
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
  const events = window.VivaEvents;
  const TERMINAL = new Set(events.log.TERMINAL);

  const S = {
    view: events.proctorSession.initial(cfg.summary.examState), // never changed in place
    live: false,
    retry: 0,
    socket: null,
    recoveries: new Map(), // recoveryId -> its <li>
    groups: new Map(), // timeline group -> its <ol>
    partial: null, // the <li> of the candidate's words being recognised
    presence: cfg.summary.candidateConnection || null,
  };
  const CANDIDATE = {
    connected: "Connected",
    reconnecting: "Reconnecting",
    disconnected: "Disconnected",
    not_connected: "Not connected yet",
  };

  const ALERT_UPDATE_MS = 60000;
  const announcedAlerts = new Map(); // alert id -> when a repeat of it was last announced
  const serverNow = () => Date.now() + S.view.offset;
  const fmt = events.proctorSession.fmt;

  function renderSummary() {
    const now = serverNow();
    const view = S.view;
    const started = view.exam.since !== null || view.exam.active > 0;
    $("sum-status").textContent = events.proctorSession.statusLabel(view, cfg.summary.statusLabel);
    $("sum-node").textContent = view.nodeId || "—";
    $("sum-elapsed").textContent = started ? fmt(events.log.active(view.exam, now)) : "—";
    $("sum-exam-left").textContent = started ? fmt(events.log.remaining(view.exam, now)) : "—";
    $("sum-node-left").textContent = view.nodeId ? fmt(events.log.remaining(view.node, now)) : "—";
    $("sum-follow-ups").textContent = String(view.followUps);
    $("sum-guardrails").textContent = String(view.guardrails);
    $("sum-recoveries").textContent = String(view.recoveries.size);
    if (TERMINAL.has(view.examState)) $("sum-health").textContent = "ended";
    document.body.dataset.examState = view.examState;
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
    const list = $("transcript");
    list.append(turn(speaker, text));
    if (S.live) list.lastChild.scrollIntoView({ block: "nearest" });
  }

  function renderPartial(text) {
    if (text === null) {
      if (S.partial) S.partial.remove();
      S.partial = null;
      return;
    }
    if (!S.partial) {
      S.partial = turn("candidate", "", "is-partial");
      $("transcript").append(S.partial);
    }
    S.partial.lastChild.textContent = text;
  }

  // --- ledger ----------------------------------------------------------------------------------
  function renderLedger(nodeId, targetIds) {
    for (const targetId of targetIds) {
      const row = document.querySelector(
        `.ledger-node[data-node-id="${CSS.escape(nodeId)}"] tr[data-target-id="${CSS.escape(targetId)}"]`,
      );
      if (!row) continue;
      const entry = events.proctorSession.ledger(S.view, nodeId, targetId);
      row.querySelector(".ledger-state").textContent = entry.status;
      row.classList.toggle("is-covered", entry.covered);
      row.querySelector(".ledger-signals").replaceChildren(
        ...entry.lines.map((text) => {
          const line = document.createElement("p");
          line.textContent = text;
          return line;
        }),
      );
    }
  }

  // --- interceptions and recoveries ----------------------------------------------------------------
  function guardrailRow(row) {
    const tr = document.createElement("tr");
    const cells = [new Date(row.timestamp).toLocaleTimeString(), row.what, row.action, row.original, row.replacement];
    for (const text of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    tr.title = row.description;
    $("guardrail-rows").append(tr);
    $("no-guardrails").hidden = true;
  }

  function renderRecovery(id) {
    let li = S.recoveries.get(id);
    if (!li) {
      li = document.createElement("li");
      S.recoveries.set(id, li);
      $("recoveries").append(li);
      $("no-recoveries").hidden = true;
    }
    li.textContent = events.proctorSession.recoveryText(S.view.recoveries.get(id));
  }

  // --- alerts ------------------------------------------------------------------------------------
  function renderAlert(id, first) {
    const item = S.view.alerts.get(id);
    const text = events.proctorSession.alertText(item);
    let li = $("session-alerts").querySelector(`li[data-alert-id="${CSS.escape(id)}"]`);
    if (!li) {
      li = document.createElement("li");
      li.className = `alert alert-${item.severity}`;
      li.dataset.alertId = id;
      const label = document.createElement("span");
      label.className = "alert-label";
      const when = document.createElement("span");
      when.className = "hint alert-when";
      li.append(label, " ", when);
      $("session-alerts").prepend(li);
      $("no-session-alerts").hidden = true;
    }
    li.querySelector(".alert-label").textContent = text.label;
    li.querySelector(".alert-when").textContent = text.when;
    if (first) {
      announcedAlerts.set(id, Date.now());
      announce(`${item.label}.`);
    } else if (S.live && Date.now() - (announcedAlerts.get(id) || 0) >= ALERT_UPDATE_MS) {
      announcedAlerts.set(id, Date.now());
      announce(`${text.label}.`);
    }
  }

  // --- timeline ----------------------------------------------------------------------------------
  function timeline(line) {
    let group = S.groups.get(line.group);
    if (!group) {
      const li = document.createElement("li");
      li.className = "timeline-group";
      if (line.correlationId) {
        const label = document.createElement("p");
        label.className = "group-label";
        label.textContent = line.correlationId;
        li.append(label);
      }
      group = document.createElement("ol");
      li.append(group);
      $("timeline").append(li);
      S.groups.set(line.group, group);
    }
    const item = document.createElement("li");
    item.textContent = line.text;
    group.append(item);
  }

  // --- events ------------------------------------------------------------------------------------
  // Folded by static/js/events/proctor-session.js; shown here: what the fold lists (`out`), then
  // the summary.
  function handle(e) {
    const before = S.view;
    const { state, out } = events.proctorSession.step(before, e, { now: Date.now() });
    if (state === before) return; // already shown, or unreadable
    S.view = state;
    for (const item of out) show(item);
    if (state.partial !== before.partial) renderPartial(state.partial);
    renderSummary();
  }

  function show(item) {
    switch (item.kind) {
      case "timeline":
        timeline(item);
        break;
      case "turn":
        addTurn(item.speaker, item.text);
        break;
      case "guardrail":
        guardrailRow(item);
        break;
      case "recovery":
        renderRecovery(item.id);
        break;
      case "ledger":
        renderLedger(item.nodeId, item.targetIds);
        break;
      case "alert":
        renderAlert(item.id, item.first);
        break;
      case "entered": {
        const node = document.querySelector(`.ledger-node[data-node-id="${CSS.escape(item.nodeId)}"]`);
        if (node) node.classList.add("is-entered");
        break;
      }
      case "announce":
        announce(item.text);
        break;
      default:
        break;
    }
  }

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${window.location.host}${cfg.socketPath}?after_seq=${S.view.gate.lastSeq}`);
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
      return S.view.gate.lastSeq;
    },
  };

  renderSummary();
  connect();
})();
