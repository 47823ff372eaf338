// static/js/events/log.js: the seq/eventId gate and the clocks both pages share.
import assert from "node:assert/strict";
import { test } from "node:test";

import { MALFORMED, T0, ev, live, log } from "./helpers.js";

test("a stored event is fresh once; at or below the last seq it is a replay", () => {
  let g = log.gate();
  let result = log.admit(g, ev(1, "bot_ready"));
  assert.equal(result.fresh, true);
  g = result.gate;
  assert.equal(g.lastSeq, 1);
  assert.equal(log.admit(g, ev(1, "bot_ready")).fresh, false);
  result = log.admit(g, ev(3, "node_entered"));
  assert.equal(result.fresh, true);
  assert.equal(log.admit(result.gate, ev(2, "node_exited")).fresh, false, "older than the last seq shown");
});

test("a live-only event is fresh once per eventId and leaves lastSeq alone", () => {
  const first = log.admit(log.gate(), live("d-1", "transcript_delta"));
  assert.equal(first.fresh, true);
  assert.equal(first.gate.lastSeq, 0);
  assert.equal(log.admit(first.gate, live("d-1", "transcript_delta")).fresh, false);
  assert.equal(log.admit(first.gate, live("d-2", "transcript_delta")).fresh, true);
});

test("admit never changes the gate it is given", () => {
  const g = log.gate();
  log.admit(g, ev(5, "bot_ready"));
  log.admit(g, live("d-1", "transcript_delta"));
  assert.equal(g.lastSeq, 0);
  assert.equal(g.seen.size, 0);
});

test("malformed events are never fresh and leave the gate as it was", () => {
  const g = log.gate();
  for (const event of MALFORMED) {
    const result = log.admit(g, event);
    assert.equal(result.fresh, false, JSON.stringify(event));
    assert.equal(result.gate, g);
  }
});

test("a clock counts active time only, and re-anchoring sets what is left", () => {
  let c = log.clock(60000);
  c = log.run(c, T0);
  assert.equal(log.active(c, T0 + 10000), 10000);
  c = log.stop(c, T0 + 10000);
  assert.equal(log.active(c, T0 + 50000), 10000, "stopped: paused time does not count");
  assert.equal(log.remaining(c, T0 + 50000), 50000);
  c = log.run(c, T0 + 50000);
  assert.equal(log.run(c, T0 + 55000), c, "running already: run changes nothing");
  c = log.reanchor(c, T0 + 60000, 120000);
  assert.equal(log.remaining(c, T0 + 60000), 120000);
  assert.equal(log.remaining(c, T0 + 70000), 110000);
  assert.equal(log.remaining(log.clock(null), T0), null);
});

test("clock functions ignore an unreadable instant instead of corrupting the clock", () => {
  const c = log.run(log.clock(1000), T0);
  assert.equal(log.stop(c, NaN), c);
  assert.equal(log.run(log.clock(1000), NaN).since, null);
  assert.equal(log.reanchor(c, NaN, 5), c);
  assert.equal(log.reanchor(c, T0, "5"), c);
});

test("reanchoring reads remainingMs, then remainingSec, for the exam or the node only", () => {
  assert.equal(log.reanchoring({ scope: "exam", remainingMs: 5000, remainingSec: 9 }), 5000);
  assert.equal(log.reanchoring({ scope: "node", remainingSec: 7 }), 7000);
  assert.equal(log.reanchoring({ scope: "part", remainingMs: 5000 }), null);
  assert.equal(log.reanchoring({ scope: "exam" }), null);
});

test("at and payload read what is there and nothing else", () => {
  assert.equal(log.at(ev(1, "x", {}, 2)), T0 + 2000);
  assert.ok(Number.isNaN(log.at({ timestamp: 5 })));
  assert.deepEqual(log.payload({ payload: null }), {});
  assert.deepEqual(log.payload({ payload: [1] }), {});
  assert.deepEqual(log.payload({ payload: { a: 1 } }), { a: 1 });
});
