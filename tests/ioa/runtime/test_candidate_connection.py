"""``candidate_connection_changed`` is stored by the web tier (docs/proctoring.md) and folded in
by the bot like any foreign event. A drop shorter than the grace period (here: a reload, gone
and back at the same instant) leaves the controller's decisions, clocks and timers as they
would be without it, and replay still equals live; longer absences are
``tests/ioa/runtime/test_absence.py``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ioa.events import EventFactory, EventSource
from ioa.events import payloads as p
from ioa.runtime.evolve import apply_event
from tests.ioa.builders import example
from tests.ioa.runtime.harness import Harness

KIND = "candidate_connection_changed"


def _script() -> list[Callable[[Harness], Any]]:
    """An exam up to a follow-up at the second node, then a silence timer firing."""
    return [
        lambda h: h.start(),
        lambda h: h.say("Hello, I liked recursion most.", at=5),
        lambda h: h.observe(at=6, spoken="Thank you, let us begin.", done=True),
        lambda h: h.say("Dijkstra keeps a priority queue of tentative distances.", at=30),
        lambda h: h.observe(at=31, spoken="Why does it need non-negative weights?", follow_up=True),
        lambda h: h.tick(200),
    ]


def _connection(h: Harness, status: str, reconnects: int) -> None:
    """Fold a stored ``candidate_connection_changed`` in, as the bot's journal adopts events
    another writer stored (``bot.journal.Journal.adopt``)."""
    state = h.controller.state
    at = datetime.fromtimestamp(h.clock.now_ms() / 1000, tz=UTC)
    make = EventFactory(session_id=h.session_id, source=EventSource.SYSTEM, clock=lambda: at)
    payload = p.CandidateConnectionChanged(
        status=status,  # type: ignore[arg-type]
        reconnects=reconnects,
        offlineMs=4_000 if status == "connected" else None,
        closeCode=1006 if status == "disconnected" else None,
    )
    envelope = make(payload).with_seq(state.last_seq + 1)
    apply_event(state, envelope, h.controller.plan)
    h.controller.log.append(envelope)
    h.events.append(envelope)


def _facts(h: Harness) -> dict[str, Any]:
    """What the exam is, without the presence events and bookkeeping (counts, ids)."""
    state = h.controller.state
    return {
        "types": [t for t in h.types() if t != KIND],
        "spoken": h.texts(),
        "node": h.node,
        "exam_state": state.exam_state,
        "follow_ups": state.total_follow_ups,
        "deadline": h.controller.next_deadline_ms(),
        "evidence": len(h.of("evidence_signal")),
    }


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=5), max_size=4))
def test_connection_events_change_no_decision(gaps: list[int]) -> None:
    """Disconnections and returns folded in after any steps: the same exam."""
    plain, connected = Harness(example()), Harness(example())
    after = set(gaps)
    flips = 0
    for index, step in enumerate(_script()):
        step(plain)
        step(connected)
        if index in after:
            _connection(connected, "disconnected", flips)
            flips += 1
            _connection(connected, "connected", flips)
    assert _facts(connected) == _facts(plain)
    assert connected.replayed_equal()
    assert len(connected.of(KIND)) == 2 * len(after)
