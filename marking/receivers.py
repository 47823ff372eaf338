"""Marking's subscriptions to the sessions app, connected by ``MarkingConfig.ready()``; sessions
never imports marking.

Each consequence is an outbox message written in the transaction of its fact
(``sessions.outbox``, issue #33), so a broker outage or a crash after the commit loses none:

* a stored ``exam_completed`` → ``marking.mark_session`` (key: the session); for a practice
  attempt the same message records its formative feedback instead of marks
  (``marking.services.practice_feedback_record``, docs/spec/practice-sittings.md);
* a stored irregularity report (``proctor_action`` with ``action: flag_irregularity``), from the
  bot's journal or the proctor service's direct recording alike → ``marking.irregularity``
  (key: the event);
* a fresh mark's ``marking.signals.panel_requested`` (sent inside the marking transaction) →
  ``marking.panel`` (key: the mark);
* a completed, non-preview session without a marking request (a lost message, or one completed
  before the outbox) is found by the relay's sweep (:func:`sweep_unmarked`);
* a personal-data erasure pseudonymises the session's marking records in the erasure's own
  transaction (``marking.erasure``).

The handlers are the marking services, idempotent: a message delivered twice marks once.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from django.db import transaction

from ioa.events import EventType
from marking import services
from marking import signals as marking_signals
from marking.erasure import on_personal_data_erased
from sessions import outbox, signals
from sessions.models import ExamSession, SessionEvent

MARK_SESSION = "marking.mark_session"
IRREGULARITY = "marking.irregularity"
PANEL = "marking.panel"
QUEUE = "marking"
"""The Celery queue of marking's messages (the marking workers')."""
SWEEP_AFTER = timedelta(minutes=2)
"""How long a completed exam may wait for its marking request before the sweep asks again."""


def on_facts(session_id: uuid.UUID, events: Sequence[Mapping[str, object]]) -> None:
    """Enqueue marking and irregularity reviews for newly stored events (in their transaction)."""
    for event in events:
        if event.get("type") == EventType.EXAM_COMPLETED:
            outbox.enqueue(
                topic=MARK_SESSION, key=str(session_id), payload={"sessionId": str(session_id)}
            )
        elif _is_irregularity(event):
            event_id = str(event["eventId"])
            outbox.enqueue(
                topic=IRREGULARITY,
                key=event_id,
                payload={"sessionId": str(session_id), "eventId": event_id},
            )


def _is_irregularity(event: Mapping[str, object]) -> bool:
    payload = event.get("payload")
    return (
        event.get("type") == EventType.PROCTOR_ACTION
        and isinstance(payload, Mapping)
        and payload.get("action") == "flag_irregularity"
    )


def on_panel_requested(*, mark_id: int, **_: object) -> None:
    """Enqueue the LLM marking panel in the mark's transaction."""
    outbox.enqueue(topic=PANEL, key=str(mark_id), payload={"markId": mark_id})


def sweep_unmarked(now: datetime) -> int:
    """Enqueue marking for completed, non-preview sessions without a marking request (or, for a
    practice attempt, without feedback), completed
    more than :data:`SWEEP_AFTER` ago; returns how many messages were new (one still waiting
    is kept as it is: the key makes the enqueue a no-op)."""
    completed = SessionEvent.objects.filter(
        type=EventType.EXAM_COMPLETED.value, recorded_at__lt=now - SWEEP_AFTER
    ).values("session_id")
    missing = ExamSession.objects.filter(
        pk__in=completed,
        is_preview=False,
        sitting__is_preview=False,
        marking_request__isnull=True,
        practice_feedback__isnull=True,
    ).values_list("pk", flat=True)
    found = 0
    for session_id in missing:
        with transaction.atomic():
            found += outbox.enqueue(
                topic=MARK_SESSION, key=str(session_id), payload={"sessionId": str(session_id)}
            )
    return found


def _mark(payload: Mapping[str, object]) -> None:
    services.session_mark(session_id=str(payload["sessionId"]))


def _irregularity(payload: Mapping[str, object]) -> None:
    services.irregularity_record(
        session_id=str(payload["sessionId"]), event_id=str(payload["eventId"])
    )


def _panel(payload: Mapping[str, object]) -> None:
    mark_id = payload["markId"]
    if not isinstance(mark_id, int):
        raise TypeError(f"markId is an integer, not {type(mark_id).__name__}")
    services.panel_run(mark_id=mark_id)


def connect() -> None:
    """Subscribe (idempotent: each registration is kept once, by name)."""
    outbox.watch(
        "marking",
        {EventType.EXAM_COMPLETED.value, EventType.PROCTOR_ACTION.value},
        on_facts,
    )
    outbox.register(MARK_SESSION, _mark, queue=QUEUE)
    outbox.register(IRREGULARITY, _irregularity, queue=QUEUE)
    outbox.register(PANEL, _panel, queue=QUEUE)
    outbox.register_sweep("marking.unmarked", sweep_unmarked)
    signals.personal_data_erased.connect(
        on_personal_data_erased, dispatch_uid="marking.personal_data_erased"
    )
    marking_signals.panel_requested.connect(on_panel_requested, dispatch_uid="marking.panel")
