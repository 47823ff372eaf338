/* The proctor's session page's reading of the event log (static/js/proctor-session.js renders it;
 * docs/proctoring.md). The summary it keeps is the one proctoring/overview.py's SessionView folds
 * in Python (status, node, clocks, follow-ups, guardrails, recoveries): frontend/test checks both
 * against the same log (frontend/test/fixtures/session-log.json, built by the Python).
 *
 * step(state, event, ctx) -> {state, out}: pure, no DOM; `state` is never changed. `ctx` =
 * {now: the page's Date.now() when the frame arrived}. `out` lists what the page adds once, in
 * order: timeline lines ({kind:"timeline", group, correlationId, text}), transcript turns
 * ({kind:"turn", speaker, text}), the candidate's live partial ({kind:"partial", text}), guardrail
 * rows ({kind:"guardrail", ...}), a recovery or ledger row to redraw ({kind:"recovery", id},
 * {kind:"ledger", nodeId, targetIds}), a node entered ({kind:"entered", nodeId}), an alert
 * raised or updated ({kind:"alert", id, first}: state.alerts holds it), and things to announce
 * when live ({kind:"announce", text}).
 *
 * Alerts follow proctoring/overview.py's SessionView (issue #31): one per kind, guardrails one per
 * guardrail type (raised at the GUARDRAIL_BURST-th hit of a type within GUARDRAIL_WINDOW_MS, then
 * updated by every hit of that type), each {id, kind, severity, label, detail, count, at, firstAt}
 * with the count of occurrences and the latest time. An event already folded (replay, reconnect) or
 * unreadable changes nothing and gives an empty `out`; an unknown type gets a timeline line only.
 */
(function (root, factory) {
  "use strict";
  const node = typeof module === "object" && module.exports;
  const api = factory(node ? require("./log.js") : root.VivaEvents.log);
  if (node) module.exports = api;
  else root.VivaEvents.proctorSession = api;
})(typeof self !== "undefined" ? self : this, function (log) {
  "use strict";

  const TERMINAL = new Set(log.TERMINAL);
  const COVERING = new Set(["positive", "self_correction"]);
  const LABELS = {
    scaffolding: "Waiting",
    ready: "Waiting",
    in_progress: "In progress",
    paused: "Paused",
    completed: "Completed",
    aborted: "Aborted",
    expired: "Expired",
  };

  const GUARDRAIL_BURST = 3;
  const GUARDRAIL_WINDOW_MS = 120000;
  const ALERT_KINDS = {
    emergency_stop: ["urgent", "Emergency stop pressed"],
    distress: ["urgent", "Candidate in distress"],
    raise_hand: ["attention", "Hand raised"],
    guardrails: ["warning", "Repeated guardrail hits"],
    silence: ["warning", "Long silence"],
    away: ["urgent", "Candidate left the exam"],
    bot_restart: ["warning", "Examiner bot restarted"],
  };

  function initial(examState) {
    return Object.freeze({
      gate: log.gate(),
      offset: 0,
      examState: examState || "scheduled",
      nodeId: null,
      exam: log.clock(null),
      node: log.clock(null),
      followUps: 0,
      guardrails: 0,
      recoveries: new Map(), // recoveryId -> {type, attempts, resolution, nodeId}
      open: new Set(), // recoveryIds running
      signals: new Map(), // signalId -> evidence_signal payload
      partial: null, // the candidate's words being recognised
      alerts: new Map(), // alert key -> {id, kind, severity, label, detail, count, at, firstAt}
      guardrailHits: new Map(), // guardrail type -> {count, firstAt, recent: [ms within the window]}
    });
  }

  /** m:ss of a duration in ms (− for overtime), "—" for none. */
  function fmt(ms) {
    if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
    const negative = ms < 0;
    const total = Math.round(Math.abs(ms) / 1000);
    const text = `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
    return negative ? `−${text}` : text;
  }

  function statusLabel(state, scheduledLabel) {
    if ((state.examState === "in_progress" || state.examState === "paused") && state.open.size) return "Recovering";
    if (state.examState === "scheduled") return scheduledLabel || "Scheduled";
    return LABELS[state.examState] || state.examState;
  }

  /** The timeline's description of an event (empty for types it does not describe). */
  function describe(e) {
    const p = log.payload(e);
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
        return `${p.signalKind} evidence for ${(Array.isArray(p.targetIds) ? p.targetIds : []).join(", ")}`;
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
      case "bot_handover":
        // A planned move of the bot to another worker (a drain, issue #33): no fault, no alert.
        return p.phase === "released" ? "examiner bot handed over (worker shutting down)" : "examiner bot took over";
      case "transition_held":
        // A completion waiting while the spoken answer may go on (issue #30): no alert.
        return p.phase === "held" ? `${p.nodeId} done; waiting in case the answer goes on` : `${p.nodeId}: the candidate went on, the answer continues`;
      case "material_attached": {
        // The candidate's material handed to the examiner (issue #35): its kind and how many
        // passages a grounded question may be about; the passages are on the marking page.
        const count = Array.isArray(p.passages) ? p.passages.length : 0;
        return `${p.materialKind || "material"} attached: ${count} passage${count === 1 ? "" : "s"} to ask about`;
      }
      case "passage_drawn":
        return p.outcome === "drawn"
          ? `${p.nodeId} asks about the candidate's ${p.materialKind} (${p.cue}): “${p.text || p.passageId}”`
          : `${p.nodeId}: ${p.outcome === "no_material" ? "no material" : "no passage to ask about"}, the fallback question`;
      case "candidate_connection_changed":
        return `candidate ${p.status}${p.offlineMs ? ` after ${fmt(p.offlineMs)} offline` : ""}${
          p.closeCode ? ` (close code ${p.closeCode})` : ""
        }, ${p.reconnects} reconnect${p.reconnects === 1 ? "" : "s"}`;
      default:
        return "";
    }
  }

  /** The ledger row of one target at one node: its state and one line per signal found. */
  function ledger(state, nodeId, targetId) {
    const found = [...state.signals.values()].filter(
      (s) => s.nodeId === nodeId && Array.isArray(s.targetIds) && s.targetIds.includes(targetId),
    );
    const covered = found.some((s) => COVERING.has(s.signalKind));
    return {
      status: covered ? "covered" : found.length ? "partial" : "none yet",
      covered,
      lines: found.map((s) => {
        const excerpt = s.excerpt ? ` “${s.excerpt}”` : "";
        const confidence = typeof s.confidence === "number" ? Math.round(s.confidence * 100) : 0;
        return `${s.signalKind} (${confidence}%)${excerpt}`;
      }),
    };
  }

  /** The recoveries list's line of one recovery. */
  function recoveryText(item) {
    const attempts = `${item.attempts} attempt${item.attempts === 1 ? "" : "s"}`;
    return `${item.type} at ${item.nodeId || "—"}: ${attempts}${item.resolution ? `, ${item.resolution}` : ", running"}`;
  }

  /** [changes, out] with the `name` alert raised, or updated in place when `s` has it. */
  function alerted(result, s, name, detail, e, opts) {
    const [changes, out] = result;
    const key = (opts && opts.key) || name;
    const before = s.alerts.get(key);
    const [severity, label] = ALERT_KINDS[name];
    const count = opts && opts.count ? opts.count : before ? before.count + 1 : 1;
    const firstAt = (opts && opts.firstAt) || (before ? before.firstAt : e.timestamp);
    const item = { id: key, kind: name, severity, label, detail: String(detail || "").slice(0, 200), count, at: e.timestamp, firstAt };
    const alerts = new Map(s.alerts).set(key, item);
    return [{ ...(changes || {}), alerts }, [...out, { kind: "alert", id: key, first: !before }]];
  }

  function guardrailAlert(s, p, e, changes) {
    const type = String(p.guardrailType || "guardrail");
    const at = log.at(e);
    const seen = s.guardrailHits.get(type) || { count: 0, firstAt: e.timestamp, recent: [] };
    const recent = [...seen.recent, at].filter((t) => at - t <= GUARDRAIL_WINDOW_MS);
    const hit = { count: seen.count + 1, firstAt: seen.firstAt, recent };
    const result = [{ ...changes, guardrailHits: new Map(s.guardrailHits).set(type, hit) }, []];
    const key = `guardrails:${type}`;
    if (recent.length < GUARDRAIL_BURST && !s.alerts.has(key)) return result;
    const detail = `${type}: ${p.description || ""}`.replace(/[: ]+$/, "");
    return alerted(result, s, "guardrails", detail, e, { key, count: hit.count, firstAt: hit.firstAt });
  }

  function recoveryAlert(result, s, item, p, e) {
    if (item.attempts !== 1) return result;
    if (item.type === "candidate_distress") return alerted(result, s, "distress", p.triggerDescription, e);
    if (item.type === "anxiety") return alerted(result, s, "distress", "Signs of anxiety: the examiner is supporting the candidate", e);
    if (item.type === "silence") return alerted(result, s, "silence", "The candidate has been silent", e);
    return result;
  }

  function recovery(s, e, p) {
    const id = String(p.recoveryId);
    const before = s.recoveries.get(id);
    if (!before && e.type !== "recovery_started") return [null, []]; // nothing of it was seen running
    const item = before ? { ...before } : { type: p.recoveryType || "recovery", attempts: 0, resolution: null, nodeId: null };
    item.nodeId = p.nodeId || s.nodeId || null;
    const open = new Set(s.open);
    const out = [];
    if (e.type === "recovery_started") {
      item.attempts += 1;
      open.add(id);
      if (item.attempts === 1) out.push({ kind: "announce", text: `Recovery started: ${item.type}.` });
    } else {
      item.resolution = p.resolution || null;
      open.delete(id);
    }
    out.push({ kind: "recovery", id });
    const result = [{ recoveries: new Map(s.recoveries).set(id, item), open }, out];
    return e.type === "recovery_started" ? recoveryAlert(result, s, item, p, e) : result;
  }

  // Each handler: (state, payload, at, event) -> [changes, out].
  const HANDLERS = {
    bot_ready(s, p) {
      if (typeof p.estimatedDurationSec !== "number" || !p.estimatedDurationSec) return [null, []];
      return [{ exam: { ...s.exam, budget: Math.round(p.estimatedDurationSec * 1000) } }, []];
    },
    exam_state_changed(s, p, at, e) {
      if (typeof p.toState !== "string") return [null, []];
      const running = p.toState === "in_progress";
      const changes = {
        examState: p.toState,
        exam: running ? log.run(s.exam, at) : log.stop(s.exam, at),
        node: running ? (s.nodeId !== null ? log.run(s.node, at) : s.node) : log.stop(s.node, at),
      };
      if (TERMINAL.has(p.toState)) changes.open = new Set();
      const result = [changes, [{ kind: "announce", text: `The exam is now ${LABELS[p.toState] || p.toState}.` }]];
      if (p.reason !== "candidate_disconnected") return result;
      return alerted(result, s, "away", "The candidate's connection was lost: the exam paused itself", e);
    },
    node_entered(s, p, at) {
      if (typeof p.nodeId !== "string") return [null, []];
      const clock = log.clock(p.timeBudgetMs || null);
      const node = s.exam.since !== null ? log.run(clock, at) : clock;
      return [{ nodeId: p.nodeId, node }, [{ kind: "entered", nodeId: p.nodeId }]];
    },
    follow_up_used(s) {
      return [{ followUps: s.followUps + 1 }, []];
    },
    guardrail_triggered(s, p, at, e) {
      const row = {
        kind: "guardrail",
        timestamp: e.timestamp,
        what: `${p.guardrailType} (${p.severity})`,
        action: p.actionTaken,
        original: p.originalText === undefined || p.originalText === null ? "—" : p.originalText,
        replacement: p.replacementText === undefined || p.replacementText === null ? "—" : p.replacementText || "(nothing)",
        description: p.description || "",
      };
      const [changes, out] = guardrailAlert(s, p, e, { guardrails: s.guardrails + 1 });
      return [changes, [row, ...out]];
    },
    candidate_command_received(s, p, at, e) {
      if (p.command === "emergency_stop") return alerted([null, []], s, "emergency_stop", "The candidate stopped the exam", e);
      if (p.command === "raise_hand" && p.accepted) return alerted([null, []], s, "raise_hand", "The candidate asks for the proctor", e);
      return [null, []];
    },
    system_error(s, p, at, e) {
      if (p.code !== "bot_fault") return [null, []];
      return alerted([null, []], s, "bot_restart", p.message, e);
    },
    recovery_started(s, p, at, e) {
      return recovery(s, e, p);
    },
    recovery_resolved(s, p, at, e) {
      return recovery(s, e, p);
    },
    examiner_utterance_final(s, p) {
      return [{ partial: null }, [{ kind: "turn", speaker: "examiner", text: String(p.text ?? "") }]];
    },
    transcript_final(s, p) {
      if (p.speaker === "examiner") return [null, []];
      return [{ partial: null }, [{ kind: "turn", speaker: "candidate", text: String(p.text ?? "") }]];
    },
    transcript_delta(s, p) {
      if (p.speaker !== "candidate") return [null, []];
      const text = `${String(p.text ?? "")} …`;
      return [{ partial: text }, [{ kind: "partial", text }]];
    },
    evidence_signal(s, p) {
      if (typeof p.nodeId !== "string") return [null, []];
      const id = p.signalId === undefined ? `signal-${s.signals.size}` : String(p.signalId);
      const targetIds = Array.isArray(p.targetIds) ? p.targetIds : [];
      return [{ signals: new Map(s.signals).set(id, p) }, [{ kind: "ledger", nodeId: p.nodeId, targetIds }]];
    },
    time_warning(s, p, at) {
      const left = log.reanchoring(p);
      return left === null ? [null, []] : [{ [p.scope]: log.reanchor(s[p.scope], at, left) }, []];
    },
    proctor_action(s, p, at) {
      return HANDLERS.time_warning(s, p, at);
    },
    exam_completed(s, p, at) {
      return [{ exam: log.stop(s.exam, at), node: log.stop(s.node, at), open: new Set() }, []];
    },
  };

  function timeline(e) {
    const text = describe(e);
    const time = Number.isNaN(log.at(e)) ? "" : new Date(log.at(e)).toLocaleTimeString();
    return {
      kind: "timeline",
      group: e.correlationId || `seq-${e.seq}`,
      correlationId: e.correlationId || null,
      text: `#${e.seq} ${time} ${e.type}${text ? ` — ${text}` : ""}`,
    };
  }

  // Fold one event (each stored one also gets its timeline line first), or a whole log:
  // log.reducer (module docstring).
  const { step, replay } = log.reducer(HANDLERS, (event, out) => {
    if (event.seq) out.unshift(timeline(event));
  });

  /** What proctoring/overview.py's SessionView holds, in the fixture's terms. */
  function summary(state) {
    const clock = (c) => ({ budgetMs: c.budget, activeMs: c.active, sinceMs: c.since });
    return {
      lastSeq: state.gate.lastSeq,
      examState: state.examState,
      nodeId: state.nodeId,
      followUps: state.followUps,
      guardrails: state.guardrails,
      recoveries: state.recoveries.size,
      openRecoveries: state.open.size,
      exam: clock(state.exam),
      node: clock(state.node),
    };
  }

  /** An alert's texts on the page: "<label> ×<count>" and "latest <time>, first <time> · <detail>". */
  function alertText(item) {
    const time = (iso) => new Date(iso).toLocaleTimeString();
    const label = `${item.label}${item.count > 1 ? ` ×${item.count}` : ""}`;
    const when = item.count > 1 ? `latest ${time(item.at)}, first ${time(item.firstAt)}` : time(item.at);
    return { label, when: `${when}${item.detail ? ` · ${item.detail}` : ""}` };
  }

  return { initial, step, replay, summary, describe, ledger, recoveryText, statusLabel, alertText, fmt, LABELS };
});
