"""The facts webhooks tell integrators of, heard from the apps below (connected by
``WebhooksConfig.ready()``; sessions and marking never import webhooks):

* stored events (``sessions.outbox.watch``) — ``exam_completed`` → ``exam.completed``; a
  proctor's ``flag_irregularity`` → ``irregularity.reported``. An author's exam-room preview
  (``sessions.previews``) and a practice attempt (docs/spec/practice-sittings.md) are never
  told of.
* ``marking.signals.marks_locked`` → ``marks.locked`` (once per moderation cycle).

Each is heard inside its fact's transaction and becomes a ``webhooks.emit`` outbox message
there (issue #33: a broker outage or a crash after the commit loses none); the relay's
handler (:func:`emit_message`) stores the deliveries (``webhooks.services.emit``, unique per
endpoint and fact). The data names the objects (ids an integrator's
token can read through the REST API) and the facts' enumerated fields, never a person's name,
email, answers, or a proctor's free-text reason.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.utils.dateparse import parse_datetime

from ioa.events import EventType
from marking import signals as marking_signals
from sessions import outbox
from sessions.event_store import StoredEvent
from sessions.models import ExamSession
from webhooks.events import WebhookEvent
from webhooks.models import WebhookEndpoint
from webhooks.services import emit, resend_due

logger = logging.getLogger(__name__)


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


EMIT = "webhooks.emit"


def _enqueue(*, event: str, event_key: str, occurred_at: str, data: Mapping[str, object]) -> None:
    """The fact's ``webhooks.emit`` message, when an active endpoint hears of ``event`` now."""
    if not any(e.hears(event) for e in WebhookEndpoint.objects.filter(active=True)):
        return
    outbox.enqueue(
        topic=EMIT,
        key=event_key,
        payload={"event": event, "eventKey": event_key, "occurredAt": occurred_at, "data": data},
    )


def on_facts(session_id: uuid.UUID, events: Sequence[Mapping[str, object]]) -> None:
    """exam.completed and irregularity.reported for the newly stored events (inside their
    transaction)."""
    session = ExamSession.objects.filter(
        pk=session_id, is_preview=False, sitting__is_preview=False, sitting__is_practice=False
    ).first()
    if session is None:
        return
    for event in events:
        stored = StoredEvent(dict(event), _seq(event), None, None)
        fact = _fact(session, stored)
        if fact is not None:
            name, data = fact
            key = f"{name}:{session.pk}:{stored.event_id}"
            _enqueue(event=name, event_key=key, occurred_at=_when(stored).isoformat(), data=data)


def _seq(event: Mapping[str, object]) -> int | None:
    seq = event.get("seq")
    return seq if isinstance(seq, int) else None


def on_marks_locked(
    *, mark_id: int, session_id: uuid.UUID, cycle: int, locked_at: datetime, **_: object
) -> None:
    """marks.locked, once per moderation cycle of a session's marks (inside the lock's
    transaction)."""
    _enqueue(
        event=WebhookEvent.MARKS_LOCKED,
        event_key=f"{WebhookEvent.MARKS_LOCKED}:{mark_id}:{cycle}",
        occurred_at=locked_at.isoformat(),
        data={"sessionId": str(session_id), "markId": mark_id, "cycle": cycle},
    )


def emit_message(payload: Mapping[str, object]) -> None:
    """The relay's handler: store the deliveries of one fact (idempotent by its key)."""
    occurred_at = parse_datetime(str(payload["occurredAt"]))
    data = payload["data"]
    if occurred_at is None or not isinstance(data, Mapping):
        raise ValueError(f"webhook message {payload.get('eventKey')!r} is malformed")
    emit(
        event=str(payload["event"]),
        event_key=str(payload["eventKey"]),
        occurred_at=occurred_at,
        data=data,
    )


def sweep_lost_deliveries(now: datetime) -> int:
    """The relay's sweep for deliveries whose Celery task was lost: pending and not attempted,
    or overdue, for more than ``VIVA_WEBHOOK_RESEND_GRACE_SECONDS`` (a task published just
    before Redis restarted without persistence, or taken by a worker that was killed), enqueued
    again (``webhooks.services.resend_due``; the attempt's claim lets one task run). Returns
    how many; with the broker down, none (the next pass tries again)."""
    grace = timedelta(seconds=settings.VIVA_WEBHOOK_RESEND_GRACE_SECONDS)
    try:
        return len(resend_due(now=now, grace=grace))
    except Exception as exc:  # the broker is down: the deliveries wait for the next pass
        logger.warning("lost webhook deliveries wait for the next relay pass: %s", exc)
        return 0


def connect() -> None:
    """Subscribe (idempotent: each registration is kept once, by name)."""
    outbox.watch(
        "webhooks",
        {EventType.EXAM_COMPLETED.value, EventType.PROCTOR_ACTION.value},
        on_facts,
    )
    outbox.register(EMIT, emit_message)
    outbox.register_sweep("webhooks.lost_deliveries", sweep_lost_deliveries)
    marking_signals.marks_locked.connect(on_marks_locked, dispatch_uid="webhooks.marks_locked")
