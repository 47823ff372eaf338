"""Writes of the webhooks app: turning a fact into one delivery per endpoint that hears of it.

:func:`emit` is called by the receivers (``webhooks.receivers``) once the fact's transaction has
committed. It stores the deliveries (the fact's ``event_key`` is unique per endpoint, so a fact
reported twice is delivered once) and enqueues each first attempt when they commit.
:func:`resend_due` (the ``webhooks_resend_due`` command, run from cron) enqueues again the
deliveries whose task was lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from functools import partial

from django.db import transaction
from django.db.models import Q

from webhooks import events, tasks
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


def emit(
    *, event: str, event_key: str, occurred_at: datetime, data: Mapping[str, object]
) -> list[WebhookDelivery]:
    """Store and enqueue one delivery of ``event`` per active endpoint subscribed to it; the
    deliveries created now (none for a fact already delivered, or with no subscriber)."""
    endpoints = [e for e in WebhookEndpoint.objects.filter(active=True) if e.hears(event)]
    if not endpoints:
        return []
    text = events.body(event=event, occurred_at=occurred_at, data=data)
    created = []
    with transaction.atomic():
        for endpoint in endpoints:
            delivery, new = WebhookDelivery.objects.get_or_create(
                endpoint=endpoint, event_key=event_key, defaults={"event": event, "body": text}
            )
            if new:
                created.append(delivery)
                transaction.on_commit(partial(_first_attempt, delivery.pk), robust=True)
    return created


def _first_attempt(delivery_id: str) -> None:
    """Enqueue a new delivery's first attempt. Run on commit with ``robust``: with the broker
    down the error is logged and the committed delivery waits for the relay's sweep
    (``webhooks.receivers.sweep_lost_deliveries``); raised, it would fail whatever committed
    the delivery (it killed ``relay_outbox`` during a Redis outage, issue #33)."""
    tasks.deliver.delay(delivery_id, 1)


def resend_due(*, now: datetime, grace: timedelta) -> list[tuple[str, int]]:
    """Enqueue the next attempt of every pending delivery whose task seems lost: never attempted
    and created more than ``grace`` ago, or overdue by more than ``grace`` (a broker that lost a
    scheduled task, a worker pool that was down). Returns ``(delivery id, attempt number)`` of
    each enqueued. A task still alive as well costs nothing: the attempt's claim lets one run."""
    cutoff = now - grace
    due = WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING).filter(
        Q(attempts=0, created_at__lt=cutoff) | Q(next_attempt_at__lt=cutoff)
    )
    enqueued = []
    for delivery in due.order_by("created_at"):
        logged = WebhookAttempt.objects.filter(delivery=delivery, number=delivery.attempts).exists()
        number = delivery.attempts + 1 if logged or delivery.attempts == 0 else delivery.attempts
        tasks.deliver.delay(delivery.pk, number)
        enqueued.append((delivery.pk, number))
    return enqueued
