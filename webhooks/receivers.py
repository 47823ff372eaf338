"""The facts webhooks tell integrators of, heard from the apps below (connected by
``WebhooksConfig.ready()``; sessions and marking never import webhooks):

* ``sessions.signals.events_appended`` — a stored ``exam_completed`` → ``exam.completed``; a stored
  proctor's ``flag_irregularity`` → ``irregularity.reported``. An author's exam-room preview
  (``sessions.previews``) is never told of.
* ``marking.signals.marks_locked`` → ``marks.locked`` (once per moderation cycle).

Each arrives after its transaction committed. The data names the objects (ids an integrator's
token can read through the REST API) and the facts' enumerated fields, never a person's name,
email, answers, or a proctor's free-text reason.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime

from django.utils.dateparse import parse_datetime

from ioa.events import EventType
from marking import signals as marking_signals
from sessions import signals as session_signals
from sessions.event_store import StoredEvent
from sessions.models import ExamSession
from webhooks.events import WebhookEvent
from webhooks.services import emit


def _when(event: StoredEvent) -> datetime:
    moment = parse_datetime(str(event.wire.get("timestamp", "")))
    if moment is None:  # stored events are validated: an ISO 8601 timestamp is always there
        raise ValueError(f"event {event.event_id} has no readable timestamp")
    return moment


def _payload(event: StoredEvent) -> Mapping[str, object]:
    payload = event.wire.get("payload")
    return payload if isinstance(payload, Mapping) else {}


def _fact(session: ExamSession, event: StoredEvent) -> tuple[str, dict[str, object]] | None:
    """The webhook event and data a stored event is, or None."""
    common: dict[str, object] = {
        "sessionId": str(session.pk),
        "sittingId": str(session.sitting_id),
        "eventId": event.event_id,
        "seq": event.seq,
    }
    payload = _payload(event)
    if event.type == EventType.EXAM_COMPLETED:
        return WebhookEvent.EXAM_COMPLETED, {**common, "reason": payload.get("reason")}
    if event.type == EventType.PROCTOR_ACTION and payload.get("action") == "flag_irregularity":
        return WebhookEvent.IRREGULARITY_REPORTED, {**common, "category": payload.get("category")}
    return None


def on_events_appended(
    *, session_id: uuid.UUID, events: Sequence[StoredEvent], **_: object
) -> None:
    """exam.completed and irregularity.reported for the newly stored events."""
    wanted = {EventType.EXAM_COMPLETED, EventType.PROCTOR_ACTION}
    if not any(event.type in wanted for event in events):
        return
    session = ExamSession.objects.filter(
        pk=session_id, is_preview=False, sitting__is_preview=False
    ).first()
    if session is None:
        return
    for event in events:
        fact = _fact(session, event)
        if fact is not None:
            name, data = fact
            key = f"{name}:{session.pk}:{event.event_id}"
            emit(event=name, event_key=key, occurred_at=_when(event), data=data)


def on_marks_locked(
    *, mark_id: int, session_id: uuid.UUID, cycle: int, locked_at: datetime, **_: object
) -> None:
    """marks.locked, once per moderation cycle of a session's marks."""
    emit(
        event=WebhookEvent.MARKS_LOCKED,
        event_key=f"{WebhookEvent.MARKS_LOCKED}:{mark_id}:{cycle}",
        occurred_at=locked_at,
        data={"sessionId": str(session_id), "markId": mark_id, "cycle": cycle},
    )


def connect() -> None:
    """Subscribe (idempotent: the dispatch uids keep one connection each)."""
    session_signals.events_appended.connect(on_events_appended, dispatch_uid="webhooks.events")
    marking_signals.marks_locked.connect(on_marks_locked, dispatch_uid="webhooks.marks_locked")
