"""``webhooks_resend_due`` enqueues the deliveries whose task was lost, and only those; the
admin's *send again* retries a failed delivery with the same webhook-id."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from tests.factories import AdminFactory
from tests.support.webhook_receiver import webhook_receiver
from webhooks.delivery import attempt
from webhooks.models import WebhookAttempt, WebhookDelivery

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loopback_allowed", "eager")]


def pending(endpoint: Any, key: str, **fields: Any) -> WebhookDelivery:
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint, event="exam.completed", event_key=key, body=json.dumps({"k": key})
    )
    WebhookDelivery.objects.filter(pk=delivery.pk).update(**fields)
    delivery.refresh_from_db()
    return delivery


def test_only_overdue_pending_deliveries_are_enqueued_again(
    make_endpoint: Callable[..., Any],
) -> None:
    long_ago = timezone.now() - timedelta(minutes=10)
    with webhook_receiver(statuses=[500]) as receiver:
        endpoint = make_endpoint(receiver.url)
        never_sent = pending(endpoint, "never", created_at=long_ago)
        fresh = pending(endpoint, "fresh")  # its task may still be on its way
        retried = pending(endpoint, "retried", created_at=long_ago)
        assert attempt(retried.pk, 1).status == "retry"  # receiver: 500
        WebhookDelivery.objects.filter(pk=retried.pk).update(next_attempt_at=long_ago)
        later = pending(endpoint, "later", created_at=long_ago, attempts=1)
        WebhookDelivery.objects.filter(pk=later.pk).update(
            next_attempt_at=timezone.now() + timedelta(minutes=5)
        )
        done = pending(endpoint, "done", created_at=long_ago, status="delivered")
        out = io.StringIO()
        call_command("webhooks_resend_due", stdout=out)
        keys = sorted(json.loads(r.body)["k"] for r in receiver.received)
    assert keys == ["never", "retried", "retried"]
    assert "2 overdue deliveries enqueued" in out.getvalue()
    assert f"{retried.pk}: attempt 2 enqueued" in out.getvalue()
    for delivery, status in [
        (never_sent, "delivered"),
        (retried, "delivered"),
        (fresh, "pending"),
        (later, "pending"),
        (done, "delivered"),
    ]:
        delivery.refresh_from_db()
        assert delivery.status == status, delivery.event_key


def test_an_admin_sends_a_failed_delivery_again(
    make_endpoint: Callable[..., Any], settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.VIVA_WEBHOOK_MAX_ATTEMPTS = 1
    with webhook_receiver(statuses=[500]) as receiver:
        delivery = pending(make_endpoint(receiver.url), "k")
        assert attempt(delivery.pk, 1).status == "failed"
        client = Client()
        client.force_login(AdminFactory())
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/admin/webhooks/webhookdelivery/",
                {"action": "send_again", "_selected_action": [delivery.pk]},
            )
        assert response.status_code == 302
        first, second = receiver.wait_for(2)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == delivery.pk
    delivery.refresh_from_db()
    assert delivery.status == "delivered"
    assert [a.status_code for a in WebhookAttempt.objects.filter(delivery=delivery)] == [500, 200]
