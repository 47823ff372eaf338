"""Rebuilding a controller's state from a session's stored events (our 03 chapter §10).

:func:`rebuild_state` folds stored events (envelopes, or the wire objects the event store
returns) with the same reducer the live controller applies to every event it emits
(:func:`ioa.runtime.evolve.apply_event`), so the rebuilt state equals the live one.
:func:`controller_from_events` gives a controller ready to continue the session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ioa.errors import ReplayError
from ioa.events import EventEnvelope, EventValidationError, validate_event
from ioa.runtime.clock import Clock
from ioa.runtime.controller import RuntimeController
from ioa.runtime.evolve import apply_event
from ioa.runtime.ids import Rng
from ioa.runtime.plan import ExamPlan
from ioa.runtime.state import RuntimeState
from ioa.schema import AssessmentPackage

StoredEvent = EventEnvelope | Mapping[str, Any]


def envelopes(events: Iterable[StoredEvent], session_id: str) -> list[EventEnvelope]:
    """Validate stored events into envelopes, in ``seq`` order, refusing another session's
    events and gaps or repeats in ``seq``."""
    out: list[EventEnvelope] = []
    last = 0
    for item in events:
        if isinstance(item, EventEnvelope):
            envelope = item
        else:
            try:
                envelope = validate_event(item)
            except EventValidationError as exc:
                raise ReplayError(f"stored event cannot be read: {exc}") from exc
            seq = item.get("seq")
            if isinstance(seq, int):
                envelope = envelope.with_seq(seq)
        if envelope.sessionId != session_id:
            raise ReplayError(f"event {envelope.eventId} belongs to session {envelope.sessionId}")
        if envelope.seq is None:
            continue  # live-only events are never stored and never replayed
        if envelope.seq != last + 1:
            raise ReplayError(f"seq {envelope.seq} follows {last}: the log has a gap or repeat")
        last = envelope.seq
        out.append(envelope)
    return out


def rebuild_state(plan: ExamPlan, session_id: str, events: Iterable[StoredEvent]) -> RuntimeState:
    """The controller state the stored ``events`` describe."""
    state = RuntimeState(session_id=session_id)
    for envelope in envelopes(events, session_id):
        apply_event(state, envelope, plan)
    return state


def controller_from_events(
    package: AssessmentPackage | ExamPlan,
    *,
    session_id: str,
    events: Iterable[StoredEvent],
    clock: Clock,
    rng: Rng | None = None,
) -> RuntimeController:
    """A controller that continues the session the stored ``events`` describe."""
    return RuntimeController.restore(
        package,
        session_id=session_id,
        events=envelopes(events, session_id),
        clock=clock,
        rng=rng,
    )
