/* What every page that follows a session's event socket does with an event before it looks at
 * its type: pure functions, no DOM, no clock of their own (docs/exam-room.md §5.1,
 * docs/proctoring.md). Loaded as a plain script before the page's own (window.VivaEvents.log);
 * under Node (frontend/test, `node --test`) the same file is a CommonJS module.
 *
 * - The gate: {lastSeq, seen}. A stored event (with a seq) at or below lastSeq was shown before
 *   (a replay after a reconnect, a repaired connection): refused. An event without a seq (live
 *   only: captions, heartbeats) is refused when its eventId was seen. Stored events are unique
 *   by eventId and come in seq order, so only live-only ids need remembering.
 * - Clocks, as proctoring/overview.py's Clock: a budget (ms or null) and the active time spent
 *   against it; paused time does not count; an extension or a time warning re-anchors it.
 * - at(event): an event's timestamp in epoch ms (NaN when it cannot be read).
 */
(function (root, factory) {
  "use strict";
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else (root.VivaEvents = root.VivaEvents || {}).log = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const TERMINAL = Object.freeze(["completed", "aborted", "expired"]);
  const NOT_STARTED = Object.freeze(["scheduled", "scaffolding", "ready"]);

  function gate() {
    return { lastSeq: 0, seen: new Set() };
  }

  function hasSeq(event) {
    return event.seq !== undefined && event.seq !== null;
  }

  /** Whether `event` is new to `g` and the gate after it: {fresh, gate}. Malformed input (not
   * an object, no type, a seq that is not a positive integer) is never fresh. */
  function admit(g, event) {
    if (!event || typeof event !== "object" || typeof event.type !== "string") return { fresh: false, gate: g };
    if (hasSeq(event)) {
      if (!Number.isInteger(event.seq) || event.seq <= 0 || event.seq <= g.lastSeq) return { fresh: false, gate: g };
      return { fresh: true, gate: { lastSeq: event.seq, seen: g.seen } };
    }
    if (typeof event.eventId !== "string" || g.seen.has(event.eventId)) return { fresh: false, gate: g };
    const seen = new Set(g.seen);
    seen.add(event.eventId);
    return { fresh: true, gate: { lastSeq: g.lastSeq, seen } };
  }

  function at(event) {
    return typeof event.timestamp === "string" ? Date.parse(event.timestamp) : NaN;
  }

  function payload(event) {
    const p = event.payload;
    return p && typeof p === "object" && !Array.isArray(p) ? p : {};
  }

  // --- clocks (immutable: each function returns a new clock) -----------------------------------
  function clock(budget) {
    return { budget: budget === undefined ? null : budget, active: 0, since: null };
  }

  function active(c, now) {
    return c.active + (c.since !== null ? Math.max(0, now - c.since) : 0);
  }

  function run(c, now) {
    return c.since === null && Number.isFinite(now) ? { budget: c.budget, active: c.active, since: now } : c;
  }

  function stop(c, now) {
    if (c.since === null || !Number.isFinite(now)) return c;
    return { budget: c.budget, active: c.active + Math.max(0, now - c.since), since: null };
  }

  function remaining(c, now) {
    return c.budget === null ? null : c.budget - active(c, now);
  }

  /** After this, `left` ms remain (an extension or a time warning). */
  function reanchor(c, now, left) {
    if (!Number.isFinite(now) || typeof left !== "number" || !Number.isFinite(left)) return c;
    return { budget: active(c, now) + left, active: c.active, since: c.since };
  }

  /** The ms a time_warning or a proctor's extend_time leaves, for `scope` ("exam" or "node"),
   * or null when the event re-anchors nothing. */
  function reanchoring(p) {
    if (p.scope !== "exam" && p.scope !== "node") return null;
    if (typeof p.remainingMs === "number") return p.remainingMs;
    if (typeof p.remainingSec === "number") return p.remainingSec * 1000;
    return null;
  }

  // --- the fold both pages share ---------------------------------------------------------------

  /** A page's reading of the log from its `handlers` (event type -> (state, payload, at, event,
   * ctx) -> [changes, out]): {step, replay}. step(state, event, ctx) -> {state, out}: a heartbeat
   * without a seq only sets `offset` (the server's clock minus ctx.now); an event the gate
   * refuses (seen, malformed) changes nothing; an unknown type moves only the gate. `after(event,
   * out)`, when given, may add to a fresh event's `out` (the proctor's timeline line). The state
   * is never changed: each step returns a new frozen one. replay folds a whole log. */
  function reducer(handlers, after) {
    function step(state, event, ctx) {
      const context = ctx || {};
      if (event && event.type === "heartbeat" && !hasSeq(event)) {
        const when = at(event);
        if (Number.isNaN(when) || typeof context.now !== "number") return { state, out: [] };
        return { state: Object.freeze({ ...state, offset: when - context.now }), out: [] };
      }
      const admitted = admit(state.gate, event);
      if (!admitted.fresh) return { state, out: [] };
      const handler = Object.prototype.hasOwnProperty.call(handlers, event.type) ? handlers[event.type] : null;
      const [changes, out] = handler ? handler(state, payload(event), at(event), event, context) : [null, []];
      const shown = [...out];
      if (after) after(event, shown);
      return { state: Object.freeze({ ...state, ...(changes || {}), gate: admitted.gate }), out: shown };
    }

    function replay(state, events, ctx) {
      let current = state;
      const out = [];
      for (const event of events) {
        const result = step(current, event, ctx);
        current = result.state;
        out.push(...result.out);
      }
      return { state: current, out };
    }

    return { step, replay };
  }

  return { TERMINAL, NOT_STARTED, gate, admit, at, payload, clock, active, run, stop, remaining, reanchor, reanchoring, reducer };
});
