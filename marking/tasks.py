"""Celery tasks of the marking pipeline (queue ``marking``)."""

from __future__ import annotations

from celery import shared_task
from django.db import transaction
from django.db.models import F

from marking.models import MarkingRequest


@shared_task(name="marking.tasks.mark_session", acks_late=True)
def mark_session(session_id: str) -> int:
    """Record that ``session_id`` completed and awaits marking; returns the request's id.

    Idempotent: a re-delivered task finds the existing request and only counts the delivery.
    Enqueued by ``sessions.event_store`` with ``delay_on_commit`` when ``exam_completed`` is
    stored. Issue 10 replaces the body with the marker (replaying the marking events).
    """
    from sessions.models import SessionEvent

    completed = (
        SessionEvent.objects.filter(session_id=session_id, type="exam_completed")
        .order_by("seq")
        .values_list("seq", flat=True)
        .first()
    )
    with transaction.atomic():
        request, created = MarkingRequest.objects.get_or_create(
            session_id=session_id, defaults={"completed_seq": completed}
        )
        if not created:
            MarkingRequest.objects.filter(pk=request.pk).update(deliveries=F("deliveries") + 1)
    return request.pk
