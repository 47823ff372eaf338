// Properties of both pages' folds over generated logs (a seeded generator: no npm dependency):
// whatever arrives, a fold never throws; a log folded again (a reload's replay, a reconnect)
// changes nothing and shows nothing; repeats and stale events in a stream change nothing.
import assert from "node:assert/strict";
import { test } from "node:test";

import { T0, examRoom, fixture, proctorSession } from "./helpers.js";

function random(seed) {
  // mulberry32: small, seedable, good enough to pick and mangle events
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const JUNK = [null, undefined, 0, -1, 1.5, "", "x", [], {}, true, "2027-01-15T08:00:00Z", NaN];
// Types an event may be given with another type's payload (every reader must cope).
const RETYPED = ["recognition_check", "transcript_corrected", "transcript_final", "node_entered"];

/** The fixture's candidate log as a voice exam (issue 30): after each of the candidate's turns a
 * recognition check names it; the candidate answers in turn by typing, by confirming, by saying it
 * again, or not at all (the next part closes it). */
function withRecognitionChecks(log) {
  const out = [];
  let seq = 0;
  let n = 0;
  const add = (event, type, payload) => {
    seq += 1;
    out.push({ ...event, eventId: `${event.eventId}-${type}-${seq}`, seq, type, payload: { ...payload, type } });
  };
  for (const event of log) {
    seq += 1;
    out.push({ ...event, seq });
    const p = event.payload || {};
    if (event.type !== "transcript_final" || p.speaker !== "candidate") continue;
    n += 1;
    add(event, "recognition_check", { nodeId: p.nodeId, turnIds: n % 5 === 0 ? [] : [p.turnId] });
    const how = ["typed", "confirmed", "again", "none", "typed"][n % 5];
    if (how === "none") continue;
    const turnId = `${p.turnId}-c`;
    add(event, "transcript_final", { ...p, turnId, text: how === "confirmed" ? p.text : `${p.text} (as said)` });
    if (how !== "again") add(event, "transcript_corrected", { nodeId: p.nodeId, turnId: n % 5 === 0 ? null : p.turnId, correctionTurnId: turnId, how });
  }
  return out;
}

const VOICE = withRecognitionChecks(fixture.candidate);

function mangle(event, rnd) {
  const copy = structuredClone(event);
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const roll = rnd();
  if (roll < 0.15) copy.payload = pick(JUNK);
  else if (roll < 0.3 && copy.payload) {
    for (const key of Object.keys(copy.payload)) if (rnd() < 0.4) copy.payload[key] = pick(JUNK);
  } else if (roll < 0.38) copy.timestamp = pick(JUNK);
  else if (roll < 0.44) copy.type = pick(JUNK.concat(["heartbeat", "no_such_type"], RETYPED));
  else if (roll < 0.5) delete copy.seq; // as a live-only event
  return copy;
}

/** A stream of `n` events: the fixture's, in order, some mangled, some repeated or stale. */
function stream(log, rnd) {
  const out = [];
  for (const event of log) {
    out.push(rnd() < 0.2 ? mangle(event, rnd) : event);
    if (rnd() < 0.1) out.push(event); // a repeat
    if (rnd() < 0.05 && out.length > 3) out.push(out[Math.floor(rnd() * out.length)]); // stale
  }
  return out;
}

const PAGES = [
  ["exam room", examRoom, fixture.candidate, () => examRoom.initial("scheduled", fixture.room.totalBudgetSec), { now: T0, parts: fixture.room.parts }],
  ["proctor page", proctorSession, fixture.proctor, () => proctorSession.initial("scheduled"), { now: T0 }],
  ["exam room, voice with recognition checks", examRoom, VOICE, () => examRoom.initial("scheduled", fixture.room.totalBudgetSec), { now: T0, parts: fixture.room.parts }],
];

test("exam room, voice: every check is shown, each correction marks a turn shown before, the end closes it", () => {
  const { state, out } = examRoom.replay(examRoom.initial("scheduled", fixture.room.totalBudgetSec), VOICE, { now: T0, parts: fixture.room.parts });
  const checks = VOICE.filter((e) => e.type === "recognition_check").length;
  assert.ok(checks > 3);
  assert.equal(out.filter((o) => o.kind === "recognition_check").length, checks);
  const shown = [];
  for (const item of out) {
    if (item.kind === "turn") shown.push(item.key);
    if (item.kind === "superseded") assert.ok(shown.includes(item.key), item.key);
  }
  assert.ok(out.some((o) => o.kind === "superseded" && o.how === "confirmed"));
  assert.equal(state.check, null);
});

for (const [name, reducer, log, initial, ctx] of PAGES) {
  test(`${name}: any stream folds without throwing, and folding it again changes nothing`, () => {
    for (let seed = 1; seed <= 150; seed += 1) {
      const events = stream(log, random(seed));
      let once;
      assert.doesNotThrow(() => {
        once = reducer.replay(initial(), events, ctx);
      }, `seed ${seed}`);
      const again = reducer.replay(once.state, events, ctx);
      assert.deepEqual(again.state, once.state, `seed ${seed}`);
      assert.deepEqual(again.out, [], `seed ${seed}`);
    }
  });

  test(`${name}: repeats and stale events in the stream change nothing`, () => {
    const clean = reducer.replay(initial(), log, ctx);
    for (let seed = 1; seed <= 150; seed += 1) {
      const rnd = random(seed);
      const events = [];
      log.forEach((event, i) => {
        events.push(event);
        if (rnd() < 0.3) events.push(event);
        if (rnd() < 0.1) events.push(log[Math.floor(rnd() * (i + 1))]); // one already shown
      });
      const noisy = reducer.replay(initial(), events, ctx);
      assert.deepEqual(noisy.state, clean.state, `seed ${seed}`);
      assert.deepEqual(noisy.out, clean.out, `seed ${seed}`);
    }
  });
}
