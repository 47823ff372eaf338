"""A webhook through a real Celery worker process to a real HTTP receiver: the receiver fails
twice (500) and then accepts; the worker retries with exponential back-off, logs three
attempts, and every attempt carries the same webhook-id and a signature that verifies."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from config.celery import app
from marking import services as marking
from marking.models import SessionMark
from tests.factories import AuthorFactory, CandidateFactory
from tests.marking.exams import completed_session
from tests.support.processes import celery_worker
from tests.support.webhook_receiver import webhook_receiver
from webhooks.models import WebhookAttempt, WebhookDelivery

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("loopback_allowed"),
    pytest.mark.services("postgres", "redis"),
    pytest.mark.celery,
]
BASE = 0.5  # seconds: the worker waits 0.5 s, then 1 s


def delivered(delivery_id: str, timeout: float = 30.0) -> WebhookDelivery:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        delivery = WebhookDelivery.objects.get(pk=delivery_id)
        if delivery.status != "pending":
            return delivery
        time.sleep(0.1)
    raise TimeoutError(f"{delivery_id} still pending after {timeout} s")


def test_two_failures_then_success_through_a_worker(
    version: Any, make_endpoint: Callable[..., Any], eager: None
) -> None:
    session = completed_session(version=version, candidate=CandidateFactory())  # marked in-process
    mark = SessionMark.objects.get(session=session)
    app.conf.task_always_eager = False  # from here on, tasks go through Redis to the worker
    with (
        webhook_receiver(statuses=[500, 500]) as receiver,
        celery_worker(
            queues="default",
            VIVA_OUTBOUND_ALLOWED_NETWORKS="127.0.0.0/8",
            VIVA_WEBHOOK_RETRY_BASE_SECONDS=str(BASE),
        ),
    ):
        endpoint = make_endpoint(receiver.url, events=["marks.locked"])
        marking.marks_lock(mark=mark, user=AuthorFactory(), note="Signed off.")
        received = receiver.wait_for(3)
        delivery = delivered(WebhookDelivery.objects.get(endpoint=endpoint).pk)
    assert delivery.status == "delivered" and delivery.attempts == 3
    log = list(WebhookAttempt.objects.filter(delivery=delivery))
    assert [(a.number, a.status_code) for a in log] == [(1, 500), (2, 500), (3, 200)]
    assert all(a.latency_ms < 10_000 for a in log)
    assert [a.next_attempt_at is not None for a in log] == [True, True, False]
    assert {r.headers["webhook-id"] for r in received} == {delivery.pk}
    for request in received:
        body = Webhook(endpoint.secret).verify(request.body, request.headers)
        assert body["data"] == {"sessionId": str(session.pk), "markId": mark.pk, "cycle": 1}
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(received)]
    assert gaps[0] >= BASE * 0.9 and gaps[1] >= 2 * BASE * 0.9, gaps
    assert len(received) == 3 and json.loads(received[0].body) == json.loads(received[2].body)
