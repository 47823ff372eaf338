// static/js/events/exam-room.js: every event type the exam room folds, malformed and unknown
// events, replays, and the Python's log (frontend/test/fixtures/session-log.json).
import assert from "node:assert/strict";
import { test } from "node:test";

import { MALFORMED, T0, ev, examRoom, fixture, live } from "./helpers.js";

const PARTS = [
  { number: 1, label: "Warm-up", nodeIds: ["warmup"] },
  { number: 2, label: "Question", nodeIds: ["q-1", "q-2"] },
];
const ctx = { now: T0, parts: PARTS };
const fold = (events, state = examRoom.initial("scheduled", 1200)) => examRoom.replay(state, events, ctx);
const started = [
  ev(1, "bot_ready", { estimatedDurationSec: 600 }),
  ev(2, "exam_state_changed", { fromState: "scheduled", toState: "scaffolding" }),
  ev(3, "exam_state_changed", { fromState: "scaffolding", toState: "in_progress" }, 10),
  ev(4, "node_entered", { nodeId: "q-1", nodeKind: "question", timeBudgetSec: 300, timeBudgetMs: 300000 }, 10),
];

test("bot_ready: the examiner is ready, its estimate is the exam's budget, announced before the start", () => {
  const { state, out } = fold([ev(1, "bot_ready", { estimatedDurationSec: 600 })]);
  assert.equal(state.botReady, true);
  assert.equal(state.exam.budget, 600000);
  assert.deepEqual(out, [{ kind: "bot_ready" }]);
  const inProgress = fold([ev(1, "bot_ready", {})], examRoom.initial("in_progress", 1200));
  assert.deepEqual(inProgress.out, [], "no announcement once the exam runs");
  assert.equal(inProgress.state.exam.budget, 1200000, "no estimate: the package's budget stays");
});

test("exam_state_changed: the clocks run in progress only, a terminal state finishes the exam", () => {
  let { state, out } = fold(started);
  assert.equal(state.examState, "in_progress");
  assert.equal(state.exam.since, T0 + 10000);
  assert.deepEqual(out.filter((o) => o.kind === "state").map((o) => o.to), ["scaffolding", "in_progress"]);
  ({ state } = examRoom.step(state, ev(5, "exam_state_changed", { fromState: "in_progress", toState: "paused" }, 70), ctx));
  assert.equal(state.exam.since, null);
  assert.equal(state.exam.active, 60000);
  assert.equal(state.node.active, 60000);
  ({ state, out } = examRoom.step(state, ev(6, "exam_state_changed", { fromState: "paused", toState: "completed" }, 80), ctx));
  assert.equal(state.finished, true);
  assert.deepEqual(out, [{ kind: "state", from: "paused", to: "completed" }]);
});

test("proctor_action: a proctor's pause is the proctor's to resume; an extension re-anchors the clock", () => {
  let { state } = fold([
    ...started,
    ev(5, "proctor_action", { action: "pause" }, 20),
    ev(6, "exam_state_changed", { fromState: "in_progress", toState: "paused" }, 20),
  ]);
  assert.equal(state.pausedBy, "proctor");
  ({ state } = examRoom.step(state, ev(7, "exam_state_changed", { fromState: "paused", toState: "in_progress" }, 30), ctx));
  assert.equal(state.pausedBy, null, "resumed: nobody holds the pause");
  ({ state } = examRoom.step(state, ev(8, "proctor_action", { action: "extend_time", scope: "exam", seconds: 60, remainingMs: 700000 }, 40), ctx));
  assert.equal(state.exam.budget - (state.exam.active + (T0 + 40000 - state.exam.since)), 700000);
  ({ state } = examRoom.step(state, ev(9, "proctor_action", { action: "extend_time", scope: "node", seconds: 60, remainingMs: 400000 }, 40), ctx));
  assert.equal(state.node.budget, 20000 + 400000);
});

test("exam_state_changed: a fault's pause lifts itself, a recognition pause is the candidate's to end", () => {
  const paused = (reason) =>
    fold([...started, ev(5, "exam_state_changed", { fromState: "in_progress", toState: "paused", reason }, 20)]).state;
  assert.equal(paused("technical_fault").pausedBy, "system");
  assert.equal(paused("candidate_disconnected").pausedBy, "system");
  assert.equal(paused("recovery_escalation:stt_low_confidence").pausedBy, "recognition");
  assert.equal(paused("candidate_request").pausedBy, null, "the candidate's own pause");
  const state = examRoom.step(
    paused("technical_fault"),
    ev(6, "exam_state_changed", { fromState: "paused", toState: "in_progress", reason: "fault_cleared" }, 30),
    ctx,
  ).state;
  assert.equal(state.pausedBy, null, "resumed: nobody holds the pause");
});

test("node_entered: the part, its budget and clock, a fresh warning and no recovery", () => {
  const { state, out } = fold([...started, ev(5, "recovery_started", { recoveryId: "r-1" }, 12), ev(6, "node_entered", { nodeId: "q-2", timeBudgetMs: 90000 }, 15)]);
  assert.equal(state.nodeId, "q-2");
  assert.equal(state.partIndex, 1);
  assert.equal(state.node.budget, 90000);
  assert.equal(state.node.since, T0 + 15000, "the exam runs: so does the part's clock");
  assert.equal(state.nodeEntry, 2);
  assert.equal(state.recovering.size, 0);
  assert.deepEqual(out.filter((o) => o.kind === "part"), [{ kind: "part", partIndex: 1 }, { kind: "part", partIndex: 1 }]);
  const end = examRoom.step(state, ev(7, "node_entered", { nodeId: "end-normal", timeBudgetMs: 0 }, 20), ctx);
  assert.equal(end.state.partIndex, -1);
  assert.equal(end.state.node.budget, null);
  assert.deepEqual(end.out, [], "an end node is no part");
});

test("examiner utterances: the turn appears when speaking starts and gets its text at the end", () => {
  const { state, out } = fold([
    ev(1, "examiner_utterance_started", { utteranceId: "u-1" }),
    ev(2, "examiner_utterance_final", { utteranceId: "u-1", text: "What is a heap?" }),
    ev(3, "examiner_utterance_final", { utteranceId: "u-2", text: "Go on." }),
    ev(4, "examiner_utterance_started", { utteranceId: "u-1" }),
  ]);
  assert.deepEqual(out, [
    { kind: "turn", key: "u:u-1", speaker: "examiner", text: "…", pending: true },
    { kind: "turn_text", key: "u:u-1", text: "What is a heap?" },
    { kind: "examiner_said", text: "What is a heap?" },
    { kind: "turn", key: "e:evt-3", speaker: "examiner", text: "Go on.", pending: false },
    { kind: "examiner_said", text: "Go on." },
  ]);
  assert.equal(state.caption, "Go on.");
  assert.equal(state.speaking, true, "u-1 started again: speaking, but no second turn");
});

test("transcript: partials are captions only, the candidate's final words are a turn", () => {
  let { state, out } = fold([
    live("d-1", "transcript_delta", { speaker: "candidate", text: "a bin" }),
    live("d-2", "transcript_delta", { speaker: "examiner", text: "Tell me" }),
  ]);
  assert.equal(state.liveCaption, "a bin");
  assert.equal(state.caption, "Tell me");
  assert.deepEqual(out, []);
  ({ state, out } = examRoom.step(state, ev(1, "transcript_final", { speaker: "candidate", text: "a binary heap" }), ctx));
  assert.equal(state.liveCaption, "");
  assert.deepEqual(out, [{ kind: "turn", key: "e:evt-1", speaker: "candidate", text: "a binary heap", pending: false }]);
  assert.deepEqual(examRoom.step(state, ev(2, "transcript_final", { speaker: "examiner", text: "x" }), ctx).out, []);
});

test("candidate_command_received, time_warning, system_error: said to the candidate", () => {
  const { state, out } = fold([
    ...started,
    ev(5, "candidate_command_received", { commandId: "c-1", command: "repeat", accepted: true }, 20),
    ev(6, "time_warning", { scope: "node", remainingMs: 60000, remainingSec: 60 }, 30),
    ev(7, "time_warning", { scope: "exam", remainingSec: 120, wrapUp: true }, 30),
    ev(8, "system_error", { code: "x", severity: "fatal", userMessage: "Please wait." }, 31),
    ev(9, "system_error", { code: "y", severity: "error" }, 31),
  ]);
  assert.deepEqual(out.slice(-4), [
    { kind: "command_ack", commandId: "c-1", command: "repeat", accepted: true },
    { kind: "time_warning", scope: "node", remainingMs: 60000, wrapUp: false },
    { kind: "time_warning", scope: "exam", remainingMs: 120000, wrapUp: true },
    { kind: "system_error", code: "x", userMessage: "Please wait.", severity: "fatal" },
  ]);
  assert.equal(state.node.budget, 20000 + 60000, "20 s of the part spent, 60 s left");
  assert.equal(state.exam.budget, 20000 + 120000);
});

test("recoveries: the banner shows while one runs", () => {
  let { state } = fold([ev(1, "recovery_started", { recoveryId: "r-1" }), ev(2, "recovery_started", { recoveryId: "r-2" })]);
  assert.deepEqual([...state.recovering], ["r-1", "r-2"]);
  ({ state } = examRoom.step(state, ev(3, "recovery_resolved", { recoveryId: "r-1" }), ctx));
  assert.deepEqual([...state.recovering], ["r-2"]);
});

test("exam_completed: finished, clocks stopped", () => {
  const { state } = fold([...started, ev(5, "exam_completed", { reason: "candidate_ended" }, 70)]);
  assert.equal(state.finished, true);
  assert.equal(state.exam.since, null);
  assert.equal(state.exam.active, 60000);
});

test("heartbeat: the clock offset, nothing else", () => {
  const state = examRoom.initial("in_progress", null);
  const beat = live("hb-1", "heartbeat", {}, 5);
  const { state: next, out } = examRoom.step(state, beat, { now: T0 });
  assert.equal(next.offset, 5000);
  assert.deepEqual(out, []);
  assert.equal(examRoom.step(next, { ...beat, timestamp: "soon" }, { now: T0 }).state, next);
});

test("malformed and unknown events are ignored safely", () => {
  const { state } = fold(started);
  for (const event of MALFORMED) assert.deepEqual(examRoom.step(state, event, ctx), { state, out: [] });
  const broken = [
    ev(10, "exam_state_changed", { toState: 42 }),
    ev(11, "node_entered", {}),
    ev(12, "time_warning", { scope: "node" }),
    ev(13, "transcript_final", { speaker: "candidate" }),
    { ...ev(14, "bot_ready"), payload: "garbage" },
    ev(15, "a_type_from_the_future", { anything: true }),
  ];
  const after = fold(broken, state);
  assert.deepEqual(after.out, []);
  assert.deepEqual({ ...after.state, gate: null }, { ...state, botReady: true, gate: null });
  assert.equal(after.state.gate.lastSeq, 15, "each moved the gate: not read twice");
});

test("step never changes the state it is given", () => {
  const state = fold(started).state;
  const copy = structuredClone(state);
  fold([ev(5, "recovery_started", { recoveryId: "r" }), ev(6, "exam_completed", {}, 40), live("d", "transcript_delta", { speaker: "candidate", text: "x" })], state);
  assert.deepEqual(state, copy);
  assert.ok(Object.isFrozen(state));
});

test("replays: the same log twice (a reload, a reconnect) gives the same state and shows nothing twice", () => {
  const once = fold(fixture.candidate, examRoom.initial("scheduled", fixture.room.totalBudgetSec));
  const twice = fold(fixture.candidate, once.state);
  assert.deepEqual(twice.state, once.state);
  assert.deepEqual(twice.out, []);
  const half = Math.floor(fixture.candidate.length / 2);
  const first = fold(fixture.candidate.slice(0, half), examRoom.initial("scheduled", fixture.room.totalBudgetSec));
  const resumed = fold(fixture.candidate, first.state); // reconnect after_seq: the log again
  assert.deepEqual(resumed.state, once.state);
  assert.deepEqual([...first.out, ...resumed.out], once.out);
});

test("the Python's log: the exam room's clocks, state and node are the overview's after every event", () => {
  const overview = new Map(fixture.proctor.map((event, i) => [event.seq, fixture.overview[i]]));
  let state = examRoom.initial("scheduled", fixture.room.totalBudgetSec);
  for (const event of fixture.candidate) {
    state = examRoom.step(state, event, { now: T0, parts: fixture.room.parts }).state;
    const python = overview.get(event.seq);
    const clock = (c) => ({ budgetMs: c.budget, activeMs: c.active, sinceMs: c.since });
    const mine = { examState: state.examState, nodeId: state.nodeId, exam: clock(state.exam), node: clock(state.node) };
    const theirs = { examState: python.examState, nodeId: python.nodeId, exam: python.exam, node: python.node };
    assert.deepEqual(mine, theirs, `after seq ${event.seq} (${event.type})`);
  }
  assert.equal(state.finished, true);
});

test("the Python's log: the transcript the candidate sees", () => {
  const start = examRoom.initial("scheduled", fixture.room.totalBudgetSec);
  const { state, out } = examRoom.replay(start, fixture.candidate, { now: T0, parts: fixture.room.parts });
  const spoken = fixture.candidate.filter((e) => e.type === "examiner_utterance_final").map((e) => e.payload.text);
  const answers = fixture.candidate.filter((e) => e.type === "transcript_final").map((e) => e.payload.text);
  assert.deepEqual(out.filter((o) => o.kind === "examiner_said").map((o) => o.text), spoken);
  assert.deepEqual(out.filter((o) => o.kind === "turn" && o.speaker === "candidate").map((o) => o.text), answers);
  const turns = out.filter((o) => o.kind === "turn" && o.speaker === "examiner").length;
  assert.equal(turns, spoken.length, "one turn per utterance");
  assert.equal(state.speaking, false);
  const parts = out.filter((o) => o.kind === "part").map((o) => fixture.room.parts[o.partIndex].label);
  assert.deepEqual(parts, ["Warm-up", "Question"]);
});

// --- recognition checks and corrections (issue 30) ---------------------------------------------------
const misheard = [
  ...started,
  ev(5, "transcript_final", { turnId: "turn-002", speaker: "candidate", text: "it settles the ear rest vortex", nodeId: "q-1" }, 20),
  ev(6, "recognition_check", { nodeId: "q-1", turnIds: ["turn-002"] }, 21),
];

test("recognition_check: the check shows what was heard of the named turns", () => {
  const { state, out } = fold(misheard);
  assert.deepEqual({ ...state.check }, { nodeId: "q-1", turnIds: ["turn-002"], heard: "it settles the ear rest vortex" });
  assert.deepEqual(out.at(-1), { kind: "recognition_check" });
  const unheard = fold([...started, ev(5, "recognition_check", { nodeId: "q-1", turnIds: [] }, 20)]).state;
  assert.deepEqual({ ...unheard.check }, { nodeId: "q-1", turnIds: [], heard: "" }, "no words heard: nothing to show");
  const unknown = fold([...started, ev(5, "recognition_check", { nodeId: "q-1", turnIds: ["turn-404", 7] }, 20)]).state;
  assert.deepEqual({ ...unknown.check }, { nodeId: "q-1", turnIds: ["turn-404"], heard: "" }, "a turn the page never saw: named, nothing shown");
});

test("recognition_check: several misheard turns show all their words, in order", () => {
  const { state } = fold([
    ...started,
    ev(5, "transcript_final", { turnId: "turn-002", speaker: "candidate", text: "it settles", nodeId: "q-1" }, 20),
    ev(6, "transcript_final", { turnId: "turn-003", speaker: "candidate", text: "the ear rest vortex", nodeId: "q-1" }, 22),
    ev(7, "recognition_check", { nodeId: "q-1", turnIds: ["turn-002", "turn-003"] }, 23),
  ]);
  assert.deepEqual({ ...state.check }, { nodeId: "q-1", turnIds: ["turn-002", "turn-003"], heard: "it settles the ear rest vortex" });
});

test("recognition_check: unreadable or after the end, no check", () => {
  for (const payload of [{}, { nodeId: 7, turnIds: ["turn-002"] }]) {
    const { state, out } = fold([...misheard.slice(0, -1), ev(6, "recognition_check", payload, 21)]);
    assert.equal(state.check, null);
    assert.deepEqual(out.filter((o) => o.kind === "recognition_check"), []);
  }
  const ended = fold([...misheard.slice(0, -1), ev(6, "exam_completed", {}, 21), ev(7, "recognition_check", { nodeId: "q-1", turnIds: [] }, 22)]);
  assert.equal(ended.state.check, null);
});

test("transcript_corrected: the misheard turn is marked superseded and the check closes", () => {
  const { state, out } = fold([
    ...misheard,
    ev(7, "transcript_final", { turnId: "turn-003", speaker: "candidate", text: "It settles the nearest vertex.", nodeId: "q-1" }, 30),
    ev(8, "transcript_corrected", { nodeId: "q-1", turnId: "turn-002", correctionTurnId: "turn-003", how: "typed" }, 30),
  ]);
  assert.equal(state.check, null);
  assert.deepEqual(out.at(-1), { kind: "superseded", key: "e:evt-5", how: "typed" });
  assert.equal(out.filter((o) => o.kind === "turn" && o.speaker === "candidate").length, 2);
});

test("transcript_corrected: a confirmation says so; a correction of unheard speech supersedes nothing", () => {
  const confirmed = fold([
    ...misheard,
    ev(7, "transcript_final", { turnId: "turn-003", speaker: "candidate", text: "it settles the ear rest vortex", nodeId: "q-1" }, 30),
    ev(8, "transcript_corrected", { nodeId: "q-1", turnId: "turn-002", correctionTurnId: "turn-003", how: "confirmed" }, 30),
  ]);
  assert.deepEqual(confirmed.out.at(-1), { kind: "superseded", key: "e:evt-5", how: "confirmed" });
  const unheard = fold([
    ...started,
    ev(5, "recognition_check", { nodeId: "q-1", turnIds: [] }, 20),
    ev(6, "transcript_final", { turnId: "turn-002", speaker: "candidate", text: "Dijkstra's algorithm.", nodeId: "q-1" }, 30),
    ev(7, "transcript_corrected", { nodeId: "q-1", turnId: null, correctionTurnId: "turn-002", how: "typed" }, 30),
  ]);
  assert.equal(unheard.state.check, null);
  assert.deepEqual(unheard.out.filter((o) => o.kind === "superseded"), []);
  assert.deepEqual(unheard.out.at(-1), { kind: "turn", key: "e:evt-6", speaker: "candidate", text: "Dijkstra's algorithm.", pending: false });
});

test("transcript_corrected alone (its transcript_final was already shown) closes the check", () => {
  const { state, out } = fold([...misheard, ev(7, "transcript_corrected", { nodeId: "q-1", turnId: "turn-002", correctionTurnId: "turn-003", how: "typed" }, 30)]);
  assert.equal(state.check, null);
  assert.deepEqual(out.at(-1), { kind: "superseded", key: "e:evt-5", how: "typed" });
});

test("a recognition check closes when the candidate says it again, the part changes or the exam ends", () => {
  const closers = [
    ev(7, "transcript_final", { turnId: "turn-003", speaker: "candidate", text: "It settles the nearest vertex.", nodeId: "q-1" }, 30),
    ev(7, "node_entered", { nodeId: "q-2", nodeKind: "question" }, 30),
    ev(7, "exam_completed", { reason: "all_nodes_visited" }, 30),
  ];
  for (const closer of closers) {
    assert.equal(fold([...misheard, closer]).state.check, null, closer.type);
  }
  const examiner = ev(7, "transcript_final", { turnId: "turn-003", speaker: "examiner", text: "Go on.", nodeId: "q-1" }, 30);
  assert.notEqual(fold([...misheard, examiner]).state.check, null, "the examiner's words do not answer it");
});

test("a recognition check replays to the same view, and a repeat changes nothing", () => {
  const once = fold(misheard);
  const again = examRoom.step(once.state, misheard.at(-1), ctx);
  assert.equal(again.state, once.state);
  assert.deepEqual(again.out, []);
  const corrected = [
    ...misheard,
    ev(7, "transcript_final", { turnId: "turn-003", speaker: "candidate", text: "It settles the nearest vertex.", nodeId: "q-1" }, 30),
    ev(8, "transcript_corrected", { nodeId: "q-1", turnId: "turn-002", correctionTurnId: "turn-003", how: "typed" }, 30),
  ];
  const whole = fold(corrected);
  let stepped = examRoom.initial("scheduled", 1200);
  const out = [];
  for (const event of corrected) {
    const result = examRoom.step(stepped, event, ctx);
    stepped = result.state;
    out.push(...result.out);
  }
  assert.deepEqual(stepped, whole.state, "event by event (live) as a reload's replay");
  assert.deepEqual(out, whole.out);
  const reloaded = fold([...corrected, ...corrected], examRoom.initial("scheduled", 1200));
  assert.deepEqual(reloaded.state, whole.state, "a log folded twice: the same view");
  assert.deepEqual(reloaded.out, whole.out, "each turn and mark shown once");
  assert.deepEqual(fold(corrected, whole.state).out, [], "a reconnect's backlog shows nothing again");
});

test("the state is never changed in place by a check or a correction", () => {
  const before = fold(misheard.slice(0, -1)).state;
  const turns = new Map(before.candidateTurns);
  const { state } = examRoom.step(before, misheard.at(-1), ctx);
  assert.equal(before.check, null);
  assert.deepEqual(before.candidateTurns, turns);
  assert.ok(Object.isFrozen(state.check) && Object.isFrozen(state.check.turnIds));
  const after = examRoom.step(state, ev(7, "transcript_final", { turnId: "turn-003", speaker: "candidate", text: "x", nodeId: "q-1" }, 30), ctx).state;
  assert.notEqual(after.candidateTurns, state.candidateTurns);
  assert.equal(state.candidateTurns.has("turn-003"), false);
  assert.notEqual(state.check, null);
});

test("a skip or finish in the candidate's words opens a confirmation; its answer, the next part or the end closes it", () => {
  const asked = (n, command) => ev(n, "candidate_command_received", { commandId: `c-${n}`, command, commandType: command, accepted: true }, 20);
  const answered = (n, command, accepted) =>
    ev(n, "candidate_command_received", { commandId: `c-${n}`, command, commandType: `${command}_confirmation`, accepted }, 25);
  assert.equal(fold([...started, asked(5, "skip")]).state.confirming, "skip");
  assert.equal(fold([...started, asked(5, "finish")]).state.confirming, "finish");
  assert.equal(fold([...started, asked(5, "skip"), answered(6, "skip", false)]).state.confirming, null, "a no cancels");
  assert.equal(fold([...started, asked(5, "skip"), answered(6, "skip", true)]).state.confirming, null);
  assert.equal(
    fold([...started, asked(5, "skip"), ev(6, "node_entered", { nodeId: "q-2", nodeKind: "question" }, 30)]).state.confirming,
    null,
  );
  assert.equal(fold([...started, asked(5, "finish"), ev(6, "exam_completed", { reason: "candidate_ended" }, 30)]).state.confirming, null);
  const repeat = ev(5, "candidate_command_received", { commandId: "c-5", command: "repeat", commandType: "repeat", accepted: true }, 20);
  assert.equal(fold([...started, repeat]).state.confirming, null, "only consequential commands are confirmed");
  const refused = ev(5, "candidate_command_received", { commandId: "c-5", command: "skip", commandType: "skip", accepted: false }, 20);
  assert.equal(fold([...started, refused]).state.confirming, null, "a refused skip asks nothing");
});
