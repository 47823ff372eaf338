// static/js/events/proctor-session.js: every event type the proctor's session page folds,
// malformed and unknown events, replays, and the summary proctoring/overview.py folds from the
// same log (frontend/test/fixtures/session-log.json).
import assert from "node:assert/strict";
import { test } from "node:test";

import { MALFORMED, T0, ev, fixture, live, proctorSession } from "./helpers.js";

const ctx = { now: T0 };
const fold = (events, state = proctorSession.initial("scheduled")) => proctorSession.replay(state, events, ctx);
const kinds = (out, kind) => out.filter((o) => o.kind === kind);
const started = [
  ev(1, "bot_ready", { estimatedDurationSec: 600 }),
  ev(2, "exam_state_changed", { fromState: "ready", toState: "in_progress" }, 10),
  ev(3, "node_entered", { nodeId: "q-1", nodeKind: "question", timeBudgetMs: 300000 }, 10),
];

test("bot_ready and exam_state_changed: the budget, the state, the clocks, an announcement", () => {
  let { state, out } = fold(started);
  assert.equal(state.exam.budget, 600000);
  assert.equal(state.examState, "in_progress");
  assert.equal(state.exam.since, T0 + 10000);
  assert.equal(state.node.since, T0 + 10000);
  assert.deepEqual(kinds(out, "announce"), [{ kind: "announce", text: "The exam is now In progress." }]);
  ({ state } = proctorSession.step(state, ev(4, "exam_state_changed", { fromState: "in_progress", toState: "paused" }, 40), ctx));
  assert.equal(state.exam.active, 30000);
  assert.equal(state.node.since, null);
  assert.equal(proctorSession.statusLabel(state), "Paused");
});

test("node_entered: the node, its budget, its clock running with the exam's, its ledger marked", () => {
  const { state, out } = fold(started);
  assert.equal(state.nodeId, "q-1");
  assert.equal(proctorSession.fmt(proctorSession.summary(state).node.budgetMs), "5:00");
  assert.deepEqual(kinds(out, "entered"), [{ kind: "entered", nodeId: "q-1" }]);
});

test("follow_up_used and guardrail_triggered: counted; the interception is a row", () => {
  const { state, out } = fold([
    ...started,
    ev(4, "follow_up_used", { followUpIndex: 1, maxFollowUps: 3 }, 20),
    ev(5, "guardrail_triggered", { guardrailType: "answer_leak", severity: "high", actionTaken: "replaced", originalText: "The answer is X", replacementText: "", description: "d" }, 21),
    ev(6, "guardrail_triggered", { guardrailType: "command_refused", severity: "low", actionTaken: "command_refused" }, 22),
  ]);
  assert.equal(state.followUps, 1);
  assert.equal(state.guardrails, 2);
  const rows = kinds(out, "guardrail");
  assert.deepEqual(rows.map((r) => [r.what, r.action, r.original, r.replacement, r.description]), [
    ["answer_leak (high)", "replaced", "The answer is X", "(nothing)", "d"],
    ["command_refused (low)", "command_refused", "—", "—", ""],
  ]);
});

test("recoveries: attempts, resolution, the status while one runs, announced once", () => {
  let { state, out } = fold([
    ...started,
    ev(4, "recovery_started", { recoveryId: "r-1", recoveryType: "silence", nodeId: "q-1" }, 20),
    ev(5, "recovery_started", { recoveryId: "r-1", recoveryType: "silence" }, 40),
  ]);
  assert.equal(proctorSession.statusLabel(state), "Recovering");
  assert.equal(proctorSession.recoveryText(state.recoveries.get("r-1")), "silence at q-1: 2 attempts, running");
  assert.deepEqual(kinds(out, "announce").slice(1), [{ kind: "announce", text: "Recovery started: silence." }]);
  ({ state, out } = proctorSession.step(state, ev(6, "recovery_resolved", { recoveryId: "r-1", resolution: "candidate_resumed" }, 45), ctx));
  assert.equal(proctorSession.recoveryText(state.recoveries.get("r-1")), "silence at q-1: 2 attempts, candidate_resumed");
  assert.equal(proctorSession.statusLabel(state), "In progress");
  assert.deepEqual(kinds(out, "recovery"), [{ kind: "recovery", id: "r-1" }]);
  const stray = proctorSession.step(state, ev(7, "recovery_resolved", { recoveryId: "r-9" }, 46), ctx);
  assert.equal(stray.state.recoveries.size, 1, "a resolution of a recovery never seen is no recovery (as the overview)");
});

test("transcript: both speakers' final words are turns; the candidate's partial is replaced by them", () => {
  let { state, out } = fold([live("d-1", "transcript_delta", { speaker: "candidate", text: "a bin" })]);
  assert.deepEqual(out, [{ kind: "partial", text: "a bin …" }]);
  assert.equal(state.partial, "a bin …");
  ({ state, out } = fold(
    [
      ev(1, "transcript_final", { speaker: "candidate", text: "a binary heap" }),
      ev(2, "examiner_utterance_final", { utteranceId: "u", text: "Why?", purpose: "follow_up" }),
      ev(3, "transcript_final", { speaker: "examiner", text: "Why?" }),
      live("d-2", "transcript_delta", { speaker: "examiner", text: "Wh" }),
    ],
    state,
  ));
  assert.equal(state.partial, null);
  assert.deepEqual(kinds(out, "turn"), [
    { kind: "turn", speaker: "candidate", text: "a binary heap" },
    { kind: "turn", speaker: "examiner", text: "Why?" },
  ]);
});

test("evidence_signal: the ledger row of each target, covered by a positive signal", () => {
  const { state, out } = fold([
    ev(1, "evidence_signal", { signalId: "s-1", nodeId: "q-1", targetIds: ["t-a", "t-b"], signalKind: "partial", confidence: 0.5 }),
    ev(2, "evidence_signal", { signalId: "s-2", nodeId: "q-1", targetIds: ["t-a"], signalKind: "positive", confidence: 0.9, excerpt: "greedy" }),
    ev(3, "evidence_signal", { signalId: "s-3", targetIds: ["t-a"], signalKind: "positive" }),
  ]);
  assert.deepEqual(kinds(out, "ledger"), [
    { kind: "ledger", nodeId: "q-1", targetIds: ["t-a", "t-b"] },
    { kind: "ledger", nodeId: "q-1", targetIds: ["t-a"] },
  ]);
  assert.deepEqual(proctorSession.ledger(state, "q-1", "t-a"), {
    status: "covered",
    covered: true,
    lines: ["partial (50%)", "positive (90%) “greedy”"],
  });
  assert.equal(proctorSession.ledger(state, "q-1", "t-b").status, "partial");
  assert.equal(proctorSession.ledger(state, "q-2", "t-a").status, "none yet");
});

test("time_warning and proctor_action: extensions and warnings re-anchor the exam or the node", () => {
  const { state } = fold([
    ...started,
    ev(4, "proctor_action", { action: "extend_time", scope: "exam", seconds: 60, remainingMs: 700000, actor: "p" }, 30),
    ev(5, "time_warning", { scope: "node", remainingMs: 60000 }, 40),
    ev(6, "proctor_action", { action: "pause", actor: "p" }, 41),
  ]);
  assert.equal(state.exam.budget, 20000 + 700000);
  assert.equal(state.node.budget, 30000 + 60000);
});

test("exam_completed: the clocks stop and nothing is running any more", () => {
  const { state } = fold([...started, ev(4, "recovery_started", { recoveryId: "r" }, 20), ev(5, "exam_completed", { reason: "x" }, 70)]);
  assert.equal(state.exam.since, null);
  assert.equal(state.exam.active, 60000);
  assert.equal(state.open.size, 0);
});

test("the timeline: one line per stored event, grouped by correlationId", () => {
  const { out } = fold([
    ev(1, "node_exited", { nodeId: "q-1", reason: "evidence_sufficient" }, 0, { correlationId: "c-1" }),
    ev(2, "transition_decision", { fromNodeId: "q-1", toNodeId: "q-2", reason: "evidence" }, 0, { correlationId: "c-1" }),
    ev(3, "candidate_command_received", { command: "skip", accepted: false, rejectionReason: "core" }),
    ev(4, "a_type_from_the_future", {}),
    live("d-1", "transcript_delta", { speaker: "candidate", text: "x" }),
  ]);
  const lines = kinds(out, "timeline");
  assert.deepEqual(lines.map((l) => l.group), ["c-1", "c-1", "seq-3", "seq-4"]);
  assert.match(lines[0].text, /^#1 .* node_exited — left q-1: evidence_sufficient$/);
  assert.match(lines[2].text, /candidate_command_received — skip refused \(core\)$/);
  assert.match(lines[3].text, /a_type_from_the_future$/, "an unknown type: a line, no description");
});

test("every type the timeline describes has a description", () => {
  const types = ["node_entered", "node_exited", "exam_state_changed", "proctor_action", "proctor_instruction", "transcript_final", "examiner_utterance_final", "evidence_signal", "guardrail_triggered", "recovery_started", "recovery_resolved", "candidate_command_received", "follow_up_used", "transition_decision", "time_warning", "system_error", "exam_completed", "candidate_connection_changed", "bot_handover", "transition_held", "material_attached", "passage_drawn"];
  for (const type of types) assert.notEqual(proctorSession.describe(ev(1, type, {})), "", type);
  assert.equal(proctorSession.describe(ev(1, "candidate_connection_changed", { status: "connected", offlineMs: 65000, reconnects: 1 })), "candidate connected after 1:05 offline, 1 reconnect");
});

test("a grounded node's passage (issue #35) is on the timeline", () => {
  const drawn = { nodeId: "q-own", outcome: "drawn", materialKind: "report", cue: "choice", text: "We chose a heap.", passageId: "m1:0" };
  assert.equal(proctorSession.describe(ev(1, "passage_drawn", drawn)), "q-own asks about the candidate's report (choice): “We chose a heap.”");
  assert.equal(proctorSession.describe(ev(2, "passage_drawn", { nodeId: "q-own", outcome: "no_material" })), "q-own: no material, the fallback question");
  assert.equal(proctorSession.describe(ev(3, "material_attached", { materialKind: "report", passages: [{}, {}] })), "report attached: 2 passages to ask about");
});

test("bot_handover (a drain, issue #33): a timeline line, no alert, no recovery", () => {
  let state = proctorSession.initial("in_progress");
  for (const [seq, phase] of [[1, "released"], [2, "resumed"]]) {
    const result = proctorSession.step(state, ev(seq, "bot_handover", { phase, reason: "worker_shutdown" }), { now: T0 });
    state = result.state;
    assert.deepEqual(result.out.filter((o) => o.kind !== "timeline"), []);
  }
  assert.equal(state.alerts.size, 0);
  assert.equal(state.open.size, 0);
  assert.equal(proctorSession.describe(ev(1, "bot_handover", { phase: "released" })), "examiner bot handed over (worker shutting down)");
});

test("heartbeat: the clock offset only", () => {
  const { state, out } = proctorSession.step(proctorSession.initial("in_progress"), live("hb", "heartbeat", {}, -2), { now: T0 });
  assert.equal(state.offset, -2000);
  assert.deepEqual(out, []);
});

test("malformed and unknown events are ignored safely", () => {
  const { state } = fold(started);
  for (const event of MALFORMED) assert.deepEqual(proctorSession.step(state, event, ctx), { state, out: [] });
  const broken = [
    ev(10, "exam_state_changed", { toState: null }),
    ev(11, "node_entered", { nodeId: 3 }),
    ev(12, "time_warning", { scope: "galaxy", remainingMs: 5 }),
    ev(13, "evidence_signal", { targetIds: "t-a" }),
    { ...ev(14, "follow_up_used"), payload: null },
    ev(15, "a_type_from_the_future", { anything: true }),
  ];
  const after = fold(broken, state);
  assert.deepEqual(after.out.map((o) => o.kind), ["timeline", "timeline", "timeline", "timeline", "timeline", "timeline"]);
  assert.deepEqual({ ...after.state, gate: null }, { ...state, followUps: 1, gate: null });
});

test("replays: the same log twice gives the same state and adds nothing", () => {
  const once = fold(fixture.proctor);
  const twice = fold(fixture.proctor, once.state);
  assert.deepEqual(twice.state, once.state);
  assert.deepEqual(twice.out, []);
  const copy = structuredClone(once.state);
  fold(started, once.state);
  assert.deepEqual(once.state, copy, "folding on never changes an earlier state");
});

test("the Python's log: the summary is proctoring/overview.py's after every event", () => {
  assert.equal(fixture.overview.length, fixture.proctor.length);
  let state = proctorSession.initial("scheduled");
  fixture.proctor.forEach((event, i) => {
    state = proctorSession.step(state, event, ctx).state;
    assert.deepEqual(proctorSession.summary(state), fixture.overview[i], `after seq ${event.seq} (${event.type})`);
  });
});

test("the Python's log: every stored event is on the timeline, every final word in the transcript", () => {
  const { out } = fold(fixture.proctor);
  assert.equal(kinds(out, "timeline").length, fixture.proctor.length);
  const said = fixture.proctor.filter((e) => e.type === "examiner_utterance_final" || (e.type === "transcript_final" && e.payload.speaker !== "examiner"));
  assert.deepEqual(kinds(out, "turn").map((t) => t.text), said.map((e) => e.payload.text));
  assert.equal(kinds(out, "guardrail").length, fixture.proctor.filter((e) => e.type === "guardrail_triggered").length);
});

test("alerts (issue #31): repeated guardrails of one type are one alert with a count and the latest time", () => {
  const hit = (seq, second, type = "blocked_action") =>
    ev(seq, "guardrail_triggered", { guardrailType: type, severity: "block", actionTaken: "event_only", description: "completion refused" }, second);
  const hits = Array.from({ length: 12 }, (_, i) => hit(4 + i, 20 + i));
  const { state, out } = fold([...started, hit(3, 5, "persona_break"), ...hits]);
  assert.deepEqual([...state.alerts.keys()], ["guardrails:blocked_action"]);
  const alert = state.alerts.get("guardrails:blocked_action");
  assert.equal(alert.count, 12);
  assert.equal(alert.at, hits[11].timestamp);
  assert.equal(alert.firstAt, hits[0].timestamp);
  assert.equal(alert.detail, "blocked_action: completion refused");
  const raised = kinds(out, "alert");
  assert.equal(raised.length, 10, "from the third hit on, each hit updates it");
  assert.deepEqual(raised.map((a) => a.first), [true, ...Array(9).fill(false)]);
  assert.equal(proctorSession.alertText(alert).label, "Repeated guardrail hits ×12");
});

test("alerts: other kinds are one each, counted", () => {
  const hand = (seq, second) => ev(seq, "candidate_command_received", { command: "raise_hand", commandType: "raise_hand", accepted: true }, second);
  const { state } = fold([
    ...started,
    hand(4, 20),
    hand(5, 40),
    ev(6, "system_error", { code: "bot_fault", message: "restarted" }, 50),
    ev(7, "recovery_started", { recoveryId: "r-1", recoveryType: "silence" }, 60),
    ev(8, "recovery_started", { recoveryId: "r-1", recoveryType: "silence" }, 70),
  ]);
  assert.deepEqual(
    [...state.alerts.values()].map((a) => [a.id, a.count]),
    [["raise_hand", 2], ["bot_restart", 1], ["silence", 1]],
  );
});
