// Shared by the event reducer tests: the modules the pages load, and a small event builder.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

export const log = require("../../../static/js/events/log.js");
export const examRoom = require("../../../static/js/events/exam-room.js");
export const proctorSession = require("../../../static/js/events/proctor-session.js");

/** The log the Python built (tests/sessions/event_log_fixture.py). */
export const fixture = JSON.parse(readFileSync(new URL("../fixtures/session-log.json", import.meta.url), "utf8"));

export const T0 = Date.parse("2027-01-15T08:00:00.000Z");

/** A stored event: seq, type, payload, at (seconds after T0). */
export function ev(seq, type, payload = {}, at = 0, extra = {}) {
  return {
    eventId: `evt-${seq}`,
    seq,
    type,
    timestamp: new Date(T0 + at * 1000).toISOString(),
    payload: { type, ...payload },
    ...extra,
  };
}

/** A live-only event (no seq). */
export function live(id, type, payload = {}, at = 0) {
  const event = ev(0, type, payload, at, { eventId: id });
  delete event.seq;
  return event;
}

/** Events that must change nothing but the gate. */
export const MALFORMED = [
  null,
  undefined,
  42,
  "exam_state_changed",
  [],
  {},
  { seq: 1 },
  { type: 7, seq: 1 },
  { type: "exam_state_changed", seq: "1", payload: { toState: "paused" } },
  { type: "exam_state_changed", seq: 1.5, payload: { toState: "paused" } },
  { type: "exam_state_changed", seq: -3, payload: { toState: "paused" } },
  { type: "exam_state_changed", payload: { toState: "paused" } }, // live-only without an eventId
];
