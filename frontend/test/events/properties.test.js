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

function mangle(event, rnd) {
  const copy = structuredClone(event);
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const roll = rnd();
  if (roll < 0.15) copy.payload = pick(JUNK);
  else if (roll < 0.3 && copy.payload) {
    for (const key of Object.keys(copy.payload)) if (rnd() < 0.4) copy.payload[key] = pick(JUNK);
  } else if (roll < 0.38) copy.timestamp = pick(JUNK);
  else if (roll < 0.44) copy.type = pick(JUNK.concat(["heartbeat", "no_such_type"]));
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
];

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
