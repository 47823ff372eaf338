"""Deliveries in-process against a real HTTP receiver on 127.0.0.1: signed the Standard
Webhooks way, logged attempt by attempt, retried with exponential back-off, never sent twice for
one fact or one attempt number."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from tests.support.webhook_receiver import Received, webhook_receiver
from webhooks.delivery import attempt, backoff_seconds
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.services import emit

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loopback_allowed")]
MOMENT = datetime(2026, 11, 25, 14, 0, tzinfo=UTC)


def verified(endpoint: WebhookEndpoint, request: Received) -> Any:
    """The body, verified by the Standard Webhooks library with the endpoint's secret."""
    return Webhook(endpoint.secret).verify(request.body, request.headers)


def store(endpoint: WebhookEndpoint, key: str = "exam.completed:s1:e1") -> WebhookDelivery:
    return WebhookDelivery.objects.create(
        endpoint=endpoint,
        event="exam.completed",
        event_key=key,
        body=json.dumps({"type": "exam.completed", "data": {"sessionId": "s1"}}),
    )


def test_a_delivery_is_signed_over_id_timestamp_and_body(make_endpoint: Callable[..., Any]) -> None:
    with webhook_receiver() as receiver:
        endpoint = make_endpoint(receiver.url)
        delivery = store(endpoint)
        assert attempt(delivery.pk, 1).status == "delivered"
        (request,) = receiver.received
    assert request.path == "/hooks/viva"
    assert verified(endpoint, request) == {"type": "exam.completed", "data": {"sessionId": "s1"}}
    # The same check by hand, from the documented recipe (docs/webhooks.md).
    headers = request.headers
    assert headers["webhook-id"] == delivery.pk and delivery.pk.startswith("msg_")
    assert headers["content-type"] == "application/json"
    key = base64.b64decode(endpoint.secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + request.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    assert headers["webhook-signature"] == f"v1,{expected}"
    with pytest.raises(Exception, match="No matching signature"):
        Webhook(endpoint.secret).verify(request.body + b" ", headers)
    other = WebhookEndpoint(secret="whsec_" + base64.b64encode(b"x" * 32).decode())
    with pytest.raises(Exception, match="No matching signature"):
        verified(other, request)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 1)
    assert delivery.delivered_at is not None and delivery.next_attempt_at is None
    log = WebhookAttempt.objects.get(delivery=delivery)
    assert (log.number, log.status_code, log.error) == (1, 200, "")
    assert log.response_excerpt == '{"ok": true}' and log.latency_ms >= 0


def test_failures_are_logged_and_retried_with_exponential_backoff(
    make_endpoint: Callable[..., Any], settings: Any
) -> None:
    settings.VIVA_WEBHOOK_MAX_ATTEMPTS = 3
    settings.VIVA_WEBHOOK_RETRY_BASE_SECONDS = 30
    with webhook_receiver(statuses=[500, 503, 502]) as receiver:
        delivery = store(make_endpoint(receiver.url))
        outcomes = [attempt(delivery.pk, n) for n in (1, 2, 3)]
        assert [o.status for o in outcomes] == ["retry", "retry", "failed"]
        assert [o.retry_in for o in outcomes] == [30, 60, None]
        assert len({r.headers["webhook-id"] for r in receiver.received}) == 1
    log = list(WebhookAttempt.objects.filter(delivery=delivery))
    assert [a.status_code for a in log] == [500, 503, 502]
    assert [a.response_excerpt for a in log] == ["receiver says no"] * 3
    assert log[0].next_attempt_at is not None and log[2].next_attempt_at is None
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", 3)


def test_backoff_doubles_and_is_capped(settings: Any) -> None:
    settings.VIVA_WEBHOOK_RETRY_BASE_SECONDS = 30
    settings.VIVA_WEBHOOK_RETRY_MAX_SECONDS = 3600
    assert [backoff_seconds(n) for n in range(1, 9)] == [30, 60, 120, 240, 480, 960, 1920, 3600]


def test_an_attempt_number_runs_once_and_a_finished_delivery_sends_nothing(
    make_endpoint: Callable[..., Any],
) -> None:
    with webhook_receiver(statuses=[500]) as receiver:
        delivery = store(make_endpoint(receiver.url))
        assert attempt(delivery.pk, 1).status == "retry"
        assert attempt(delivery.pk, 1).status == "skipped"  # a redelivered task
        assert attempt(delivery.pk, 2).status == "delivered"
        assert attempt(delivery.pk, 3).status == "skipped"
        assert len(receiver.received) == 2
    assert WebhookAttempt.objects.filter(delivery=delivery).count() == 2


def test_an_unreachable_receiver_and_a_redirect_are_failures(
    make_endpoint: Callable[..., Any],
) -> None:
    with webhook_receiver(statuses=[302]) as receiver:
        redirected = store(make_endpoint(receiver.url), key="a")
        assert attempt(redirected.pk, 1).status == "retry"
    closed = store(make_endpoint(receiver.url), key="b")  # the server is gone
    assert attempt(closed.pk, 1).status == "retry"
    log = WebhookAttempt.objects.get(delivery=closed)
    assert log.status_code is None and "Error" in log.error


def test_an_inactive_endpoint_gets_nothing(make_endpoint: Callable[..., Any]) -> None:
    with webhook_receiver() as receiver:
        endpoint = make_endpoint(receiver.url)
        delivery = store(endpoint)
        endpoint.active = False
        endpoint.save()
        assert attempt(delivery.pk, 1).status == "skipped"
        assert receiver.received == []
    delivery.refresh_from_db()
    assert delivery.status == "failed"


def test_one_delivery_per_subscribed_endpoint_and_fact(
    make_endpoint: Callable[..., Any], eager: None, django_capture_on_commit_callbacks: Any
) -> None:
    with webhook_receiver() as receiver:
        both = make_endpoint(receiver.url)
        completed_only = make_endpoint(receiver.url, events=["exam.completed"])
        make_endpoint(receiver.url, events=["marks.locked"])
        make_endpoint(receiver.url, active=False)
        data = {"sessionId": "s1"}
        with django_capture_on_commit_callbacks(execute=True):
            first = emit(event="exam.completed", event_key="k1", occurred_at=MOMENT, data=data)
        with django_capture_on_commit_callbacks(execute=True) as repeated:
            again = emit(event="exam.completed", event_key="k1", occurred_at=MOMENT, data=data)
        assert repeated == []  # nothing enqueued for a fact already delivered
        assert {d.endpoint for d in first} == {both, completed_only} and again == []
        received = receiver.wait_for(2)
    body = json.loads(received[0].body)
    assert body == {"type": "exam.completed", "timestamp": MOMENT.isoformat(), "data": data}
    assert WebhookDelivery.objects.filter(status="delivered").count() == 2


def test_an_attempt_whose_worker_died_before_logging_runs_again(
    make_endpoint: Callable[..., Any],
) -> None:
    with webhook_receiver() as receiver:
        delivery = store(make_endpoint(receiver.url))
        WebhookDelivery.objects.filter(pk=delivery.pk).update(attempts=1)  # claimed, never logged
        assert attempt(delivery.pk, 1).status == "delivered"  # the redelivered task
        assert len(receiver.received) == 1
    assert [a.number for a in WebhookAttempt.objects.filter(delivery=delivery)] == [1]
