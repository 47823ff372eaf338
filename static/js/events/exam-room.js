/* The exam room's reading of the event log (static/js/exam-room.js renders it; docs/exam-room.md).
 *
 * step(state, event, ctx) -> {state, out}: pure, no DOM. `state` is never changed: the result is
 * a new state (sharing what did not change). `ctx` = {now: the page's Date.now() when the frame
 * arrived (heartbeats set the clock offset), parts: the room config's parts}. `out` lists what
 * the page shows once, in order: transcript turns ({kind:"turn", key, speaker, text, pending}),
 * an examiner turn's final text ({kind:"turn_text", key, text}), a candidate turn the candidate
 * corrected ({kind:"superseded", key, how}), a recognition check to show ({kind:
 * "recognition_check"}: `state.check` holds it), and things to announce or say
 * when the page is live (bot_ready, state, part, examiner_said, command_ack, time_warning,
 * system_error). An event already folded (replay, reconnect) or unreadable gives no change and
 * an empty `out`; an unknown type moves only the gate.
 *
 * The candidate receives the candidate projection only (no evidence, rubric text, scores or
 * guardrail internals): this module reads nothing else and needs nothing else.
 */
(function (root, factory) {
  "use strict";
  const node = typeof module === "object" && module.exports;
  const api = factory(node ? require("./log.js") : root.VivaEvents.log);
  if (node) module.exports = api;
  else root.VivaEvents.examRoom = api;
})(typeof self !== "undefined" ? self : this, function (log) {
  "use strict";

  const TERMINAL = new Set(log.TERMINAL);
  // Commands the runtime confirms with the candidate before carrying them out (ioa CONFIRMED_COMMANDS).
  const CONFIRMED = new Set(["finish", "skip", "revise_earlier_answer", "language_switch"]);
  const NOT_STARTED = new Set(log.NOT_STARTED);

  /** The state before any event: `examState` as the page was rendered, the exam's budget in
   * seconds (or null). */
  function initial(examState, totalBudgetSec) {
    return Object.freeze({
      gate: log.gate(),
      offset: 0,
      examState: examState || "scheduled",
      finished: false,
      // Who holds a pause: "proctor" (only the proctor resumes, issue 15), "system" (a lost
      // connection or a technical fault: it lifts itself), "recognition" (the recogniser kept
      // mishearing: speaking again or Resume ends it, issue 30), or null (the candidate's own).
      pausedBy: null,
      botReady: false,
      nodeId: null,
      partIndex: -1,
      nodeEntry: 0, // counts node_entered: the page warns once per part entered
      exam: log.clock(totalBudgetSec ? totalBudgetSec * 1000 : null),
      node: log.clock(null),
      recovering: new Set(),
      utterances: new Map(), // utteranceId -> "open" (its turn is on screen, text pending) | "done"
      speaking: false,
      caption: "",
      liveCaption: "",
      // The candidate's turns by turnId -> {key, text} (a recognition check names them), and the
      // open check (issue 30): {nodeId, turnIds, heard} or null.
      candidateTurns: new Map(),
      check: null,
      // A consequential command the candidate's words asked for and the examiner now asks them
      // to confirm (issue #31): "finish" | "skip" | "revise_earlier_answer" | "language_switch"
      // | null. The room offers Yes / No buttons.
      confirming: null,
    });
  }

  function text(value) {
    return typeof value === "string" ? value : "";
  }

  function partOf(parts, nodeId) {
    return (parts || []).findIndex((part) => Array.isArray(part.nodeIds) && part.nodeIds.indexOf(nodeId) >= 0);
  }

  const SYSTEM_PAUSES = new Set(["technical_fault", "candidate_disconnected"]);

  function pauseHolder(s, reason) {
    if (s.pausedBy) return s.pausedBy;
    if (SYSTEM_PAUSES.has(reason)) return "system";
    if (reason === "recovery_escalation:stt_low_confidence") return "recognition";
    return null;
  }

  function withState(s, to, at, reason) {
    const next = { examState: to, pausedBy: to === "paused" ? pauseHolder(s, reason) : null };
    if (to === "in_progress") {
      next.exam = log.run(s.exam, at);
      next.node = s.nodeId !== null ? log.run(s.node, at) : s.node;
    } else {
      next.exam = log.stop(s.exam, at);
      next.node = log.stop(s.node, at);
    }
    if (TERMINAL.has(to)) next.finished = true;
    return next;
  }

  // Each handler: (state, payload, at, event, ctx) -> [changes, out].
  const HANDLERS = {
    bot_ready(s, p) {
      const changes = { botReady: true };
      if (typeof p.estimatedDurationSec === "number" && p.estimatedDurationSec > 0) {
        changes.exam = { ...s.exam, budget: Math.round(p.estimatedDurationSec * 1000) };
      }
      return [changes, NOT_STARTED.has(s.examState) ? [{ kind: "bot_ready" }] : []];
    },
    exam_state_changed(s, p, at) {
      if (typeof p.toState !== "string") return [null, []];
      return [withState(s, p.toState, at, p.reason), [{ kind: "state", from: s.examState, to: p.toState }]];
    },
    proctor_action(s, p, at) {
      const changes = {};
      if (p.action === "pause") changes.pausedBy = "proctor";
      const left = p.action === "extend_time" ? log.reanchoring(p) : null;
      if (left !== null) changes[p.scope] = log.reanchor(s[p.scope], at, left);
      return [changes, []];
    },
    node_entered(s, p, at, event, ctx) {
      if (typeof p.nodeId !== "string") return [null, []];
      const budget = p.timeBudgetMs || (p.timeBudgetSec ? p.timeBudgetSec * 1000 : 0) || null;
      const partIndex = partOf(ctx.parts, p.nodeId);
      const changes = {
        nodeId: p.nodeId,
        node: s.exam.since !== null ? log.run(log.clock(budget), at) : log.clock(budget),
        partIndex,
        nodeEntry: s.nodeEntry + 1,
        recovering: new Set(),
        check: null,
        confirming: null,
      };
      return [changes, partIndex >= 0 ? [{ kind: "part", partIndex }] : []];
    },
    examiner_utterance_started(s, p) {
      // The turn takes its place when the examiner starts speaking (in voice mode the final
      // text comes when the speech ends, possibly after the candidate spoke).
      if (typeof p.utteranceId !== "string" || s.utterances.has(p.utteranceId)) return [{ speaking: true }, []];
      const utterances = new Map(s.utterances).set(p.utteranceId, "open");
      const turn = { kind: "turn", key: `u:${p.utteranceId}`, speaker: "examiner", text: "…", pending: true };
      return [{ speaking: true, utterances }, [turn]];
    },
    examiner_utterance_final(s, p, at, event) {
      const said = text(p.text);
      const changes = { speaking: false, caption: said };
      const out = [];
      if (typeof p.utteranceId === "string" && s.utterances.get(p.utteranceId) === "open") {
        out.push({ kind: "turn_text", key: `u:${p.utteranceId}`, text: said });
      } else {
        out.push({ kind: "turn", key: `e:${event.eventId || event.seq}`, speaker: "examiner", text: said, pending: false });
      }
      if (typeof p.utteranceId === "string") changes.utterances = new Map(s.utterances).set(p.utteranceId, "done");
      out.push({ kind: "examiner_said", text: said });
      return [changes, out];
    },
    transcript_delta(s, p) {
      // Live-only partials: the candidate's words as recognised; the examiner's as spoken.
      if (p.speaker === "candidate") return [{ liveCaption: text(p.text) }, []];
      if (p.speaker === "examiner") return [{ caption: text(p.text) }, []];
      return [null, []];
    },
    transcript_final(s, p, at, event) {
      if (p.speaker !== "candidate" || typeof p.text !== "string") return [null, []];
      const key = `e:${event.eventId || event.seq}`;
      const turn = { kind: "turn", key, speaker: "candidate", text: p.text, pending: false };
      const changes = { liveCaption: "", check: null }; // said again (or corrected): the check is answered
      if (typeof p.turnId === "string") changes.candidateTurns = new Map(s.candidateTurns).set(p.turnId, { key, text: p.text });
      return [changes, [turn]];
    },
    recognition_check(s, p) {
      // The examiner asks the candidate to check what was heard (voice; issue 30). The named
      // turns are kept as named (a correction names them all); `heard` is the words of those the
      // page has shown ("" when the recogniser heard speech and no words).
      if (typeof p.nodeId !== "string" || s.finished) return [null, []];
      const turnIds = Object.freeze((Array.isArray(p.turnIds) ? p.turnIds : []).filter((id) => typeof id === "string"));
      const heard = turnIds.filter((id) => s.candidateTurns.has(id)).map((id) => s.candidateTurns.get(id).text).join(" ");
      return [{ check: Object.freeze({ nodeId: p.nodeId, turnIds, heard }) }, [{ kind: "recognition_check" }]];
    },
    transcript_corrected(s, p) {
      const original = typeof p.turnId === "string" ? s.candidateTurns.get(p.turnId) : undefined;
      const out = original ? [{ kind: "superseded", key: original.key, how: p.how === "confirmed" ? "confirmed" : "typed" }] : [];
      return [{ check: null }, out];
    },
    candidate_command_received(s, p) {
      const ack = { kind: "command_ack", commandId: p.commandId, command: p.command, accepted: p.accepted === true };
      const asked = CONFIRMED.has(p.commandType) && p.commandType === p.command && p.accepted === true;
      const answered = typeof p.commandType === "string" && p.commandType.endsWith("_confirmation");
      if (asked) return [{ confirming: p.command }, [ack]];
      if (answered && s.confirming !== null) return [{ confirming: null }, [ack]];
      return [null, [ack]];
    },
    time_warning(s, p, at) {
      const left = log.reanchoring({ ...p, scope: p.scope === "node" ? "node" : "exam" });
      if (left === null) return [null, []];
      const scope = p.scope === "node" ? "node" : "exam";
      const warning = { kind: "time_warning", scope, remainingMs: left, wrapUp: p.wrapUp === true };
      return [{ [scope]: log.reanchor(s[scope], at, left) }, [warning]];
    },
    recovery_started(s, p) {
      return [{ recovering: new Set(s.recovering).add(String(p.recoveryId)) }, []];
    },
    recovery_resolved(s, p) {
      const recovering = new Set(s.recovering);
      recovering.delete(String(p.recoveryId));
      return [{ recovering }, []];
    },
    system_error(s, p) {
      if (typeof p.userMessage !== "string" || !p.userMessage) return [null, []];
      return [null, [{ kind: "system_error", code: typeof p.code === "string" ? p.code : "", userMessage: p.userMessage, severity: p.severity }]];
    },
    exam_completed(s, p, at) {
      return [{ finished: true, check: null, confirming: null, exam: log.stop(s.exam, at), node: log.stop(s.node, at) }, []];
    },
  };

  // Fold one event, or a whole log (a page load, a test): log.reducer (module docstring).
  const { step, replay } = log.reducer(HANDLERS);

  return { initial, step, replay, partOf };
});
