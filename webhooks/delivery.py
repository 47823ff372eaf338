"""One attempt at a delivery, its log row, and when the next one is due (exponential back-off).

:func:`attempt` is what the Celery task runs. It claims attempt ``number`` under the delivery's
row lock: a repeated task whose attempt was logged, an older one, or one for a finished delivery
does nothing; a task redelivered after its worker died between claiming and logging runs the
attempt again (the receiver may see that request twice, with the same ``webhook-id``). A claim
sets ``next_attempt_at`` to the send's deadline (now + ``VIVA_WEBHOOK_TIMEOUT_SECONDS``), so a
delivery whose worker was killed mid-send is overdue and the relay's sweep sends it again. It sends
outside any transaction, then logs the attempt (unique per number: of two copies running at
once, one logs and the other stops) and moves the delivery to *delivered*, to *failed* after the
last attempt, or leaves it *pending* with ``next_attempt_at``. The caller schedules the next
attempt (``retry_in``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from webhooks import sending
from webhooks.models import WebhookAttempt, WebhookDelivery
from webhooks.signing import signed_headers

Status = WebhookDelivery.Status


def max_attempts() -> int:
    return int(settings.VIVA_WEBHOOK_MAX_ATTEMPTS)


def backoff_seconds(number: int) -> float:
    """Wait after failed attempt ``number`` (1-based): base * 2^(number-1), capped."""
    base = float(settings.VIVA_WEBHOOK_RETRY_BASE_SECONDS)
    return min(base * 2.0 ** (number - 1), float(settings.VIVA_WEBHOOK_RETRY_MAX_SECONDS))


@dataclass(frozen=True)
class AttemptOutcome:
    """``status``: ``delivered``, ``retry``, ``failed``, or ``skipped`` (stale or repeated
    task, finished delivery, inactive endpoint). ``retry_in``: seconds until the next attempt."""

    status: str
    retry_in: float | None = None


def _claim(delivery_id: str, number: int) -> WebhookDelivery | None:
    """Take attempt ``number`` of a pending delivery of an active endpoint, or None."""
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(of=("self",))
            .select_related("endpoint")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None or delivery.status != Status.PENDING or delivery.attempts > number:
            return None
        if WebhookAttempt.objects.filter(delivery=delivery, number=number).exists():
            return None  # this attempt ran; a claimed attempt without a log row died: run it
        if not delivery.endpoint.active:
            delivery.status = Status.FAILED
            delivery.next_attempt_at = None
            delivery.save(update_fields=["status", "next_attempt_at"])
            return None
        delivery.attempts = number
        # Until the attempt is logged, ``next_attempt_at`` is when it must be over (the send's
        # timeout): a worker killed mid-send leaves the delivery overdue, so the relay's sweep
        # (``services.resend_due``) sends it again (issue #33).
        delivery.next_attempt_at = timezone.now() + timedelta(
            seconds=float(settings.VIVA_WEBHOOK_TIMEOUT_SECONDS)
        )
        delivery.save(update_fields=["attempts", "next_attempt_at"])
    return delivery


def attempt(delivery_id: str, number: int) -> AttemptOutcome:
    """Send attempt ``number`` of a delivery and log it (see the module's docstring)."""
    delivery = _claim(delivery_id, number)
    if delivery is None:
        return AttemptOutcome("skipped")
    started_at = timezone.now()
    headers = signed_headers(
        secret=delivery.endpoint.secret, message_id=delivery.pk, body=delivery.body, at=started_at
    )
    answer = sending.post(
        delivery.endpoint.url,
        body=delivery.body.encode("utf-8"),
        headers=headers,
        timeout=float(settings.VIVA_WEBHOOK_TIMEOUT_SECONDS),
    )
    retry_in = None if answer.ok or number >= max_attempts() else backoff_seconds(number)
    next_at = timezone.now() + timedelta(seconds=retry_in) if retry_in is not None else None
    try:
        _log(delivery, number, started_at, answer, next_at)
    except IntegrityError:  # a copy of this task logged the same attempt first
        return AttemptOutcome("skipped")
    if answer.ok:
        return AttemptOutcome("delivered")
    return AttemptOutcome("failed") if retry_in is None else AttemptOutcome("retry", retry_in)


def _log(
    delivery: WebhookDelivery,
    number: int,
    started_at: datetime,
    answer: sending.Answer,
    next_at: datetime | None,
) -> None:
    """Log the attempt and move the delivery on, in one transaction."""
    with transaction.atomic():
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            started_at=started_at,
            status_code=answer.status_code,
            latency_ms=answer.latency_ms,
            response_excerpt=answer.excerpt[: sending.EXCERPT_BYTES],
            error=answer.error,
            next_attempt_at=next_at,
        )
        if answer.ok:
            delivery.status, delivery.delivered_at = Status.DELIVERED, timezone.now()
        elif next_at is None:
            delivery.status = Status.FAILED
        delivery.next_attempt_at = next_at
        delivery.save(update_fields=["status", "delivered_at", "next_attempt_at"])
