"""Issue #33: a webhook delivery whose Celery task was lost (published just before Redis
restarted without persistence, or taken by a worker that was killed) is enqueued again by the
outbox relay's sweep (``webhooks.receivers.sweep_lost_deliveries``) once it is
``VIVA_WEBHOOK_RESEND_GRACE_SECONDS`` late, so ``relay_outbox`` alone delivers it; the chaos run
(tests/bot/test_chaos.py) found one such delivery pending for ever."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from sessions import outbox
from tests.support.processes import ROOT, child_environment
from tests.support.webhook_receiver import webhook_receiver
from webhooks.models import WebhookDelivery

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("loopback_allowed")]


def test_a_delivery_whose_task_was_lost_is_sent_by_the_relay_once_it_is_late(
    make_endpoint: Callable[..., Any], eager: None, settings: Any
) -> None:
    settings.VIVA_WEBHOOK_RESEND_GRACE_SECONDS = 60
    with webhook_receiver() as receiver:
        delivery = WebhookDelivery.objects.create(  # stored; its first task never ran
            endpoint=make_endpoint(receiver.url),
            event="exam.completed",
            event_key="exam.completed:s1:e1",
            body=json.dumps({"type": "exam.completed", "data": {"sessionId": "s1"}}),
        )
        assert outbox.relay_due().swept == 0  # not late yet
        assert receiver.received == []

        later = outbox.relay_due(now=timezone.now() + timedelta(seconds=61))
        assert later.swept == 1
        receiver.wait_for(1)
        again = outbox.relay_due(now=timezone.now() + timedelta(seconds=62))
        assert again.swept == 0  # delivered: nothing to send again
        assert len(receiver.received) == 1
    delivery.refresh_from_db()
    assert delivery.status == "delivered"


@pytest.mark.services("postgres")
@pytest.mark.django_db(transaction=True)
def test_the_relay_survives_a_broker_outage_while_it_stores_deliveries(
    make_endpoint: Callable[..., Any],
) -> None:
    """The chaos run's relay died here: a ``webhooks.emit`` message's handler stores the
    delivery and, on commit, enqueues its first attempt; with Redis down that raised out of the
    relay's pass and ``relay_outbox --loop`` exited. Now the pass ends (exit 0), the message is
    delivered and the delivery waits for the sweep. A real child process whose broker and result
    backend are a closed port."""
    import subprocess
    import sys

    from sessions.models import OutboxMessage
    from tests.support.outbox import held_relay
    from tests.support.processes import ROOT, child_environment, free_port

    make_endpoint("http://127.0.0.1:9/hooks")
    with held_relay(), transaction.atomic():
        outbox.enqueue(
            topic="webhooks.emit",
            key="exam.completed:s1:e1",
            payload={
                "event": "exam.completed",
                "eventKey": "exam.completed:s1:e1",
                "occurredAt": timezone.now().isoformat(),
                "data": {"sessionId": "s1"},
            },
        )
    down = f"redis://127.0.0.1:{free_port()}/0"
    env = child_environment(CELERY_BROKER_URL=down, CELERY_RESULT_BACKEND=down)
    done = subprocess.run(
        [sys.executable, "manage.py", "relay_outbox"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert OutboxMessage.objects.get(topic="webhooks.emit").status == "delivered"
    assert WebhookDelivery.objects.get().status == "pending"  # for the sweep


ATTEMPT = (
    "import sys, django; django.setup(); "
    "from webhooks.delivery import attempt; attempt(sys.argv[1], 1)"
)
"""A worker's run of a delivery's first attempt (``webhooks.tasks.deliver``'s body)."""


@pytest.mark.services("postgres")
@pytest.mark.django_db(transaction=True)
def test_a_delivery_whose_worker_was_killed_mid_send_is_sent_again_once_it_is_late(
    make_endpoint: Callable[..., Any], eager: None, settings: Any
) -> None:
    """The chaos run's last pending delivery: a worker took the first attempt (the delivery's
    ``attempts`` became 1) and was SIGKILLed while the request was on its way, so no attempt
    was logged and no retry was scheduled; the sweep looked only for deliveries never attempted
    or overdue, and this one was neither. A real process sends attempt 1 and is killed when the
    receiver has the request."""
    settings.VIVA_WEBHOOK_RESEND_GRACE_SECONDS = 60
    with webhook_receiver(hold_first=True) as receiver:
        delivery = WebhookDelivery.objects.create(
            endpoint=make_endpoint(receiver.url),
            event="exam.completed",
            event_key="exam.completed:s1:e1",
            body=json.dumps({"type": "exam.completed", "data": {"sessionId": "s1"}}),
        )
        env = child_environment(VIVA_OUTBOUND_ALLOWED_NETWORKS="127.0.0.0/8")
        worker = subprocess.Popen(
            [sys.executable, "-c", ATTEMPT, delivery.pk],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            sent = receiver.first.wait(60)
        finally:
            worker.send_signal(signal.SIGKILL)
            _, errors = worker.communicate(timeout=10)
        assert sent, f"the worker never sent attempt 1: {errors[-3000:]}"
        delivery.refresh_from_db()
        assert (delivery.status, delivery.attempts) == ("pending", 1)  # claimed, never logged
        assert outbox.relay_due().swept == 0  # it may still be sending: not late yet

        later = timezone.now() + timedelta(
            seconds=settings.VIVA_WEBHOOK_TIMEOUT_SECONDS
            + settings.VIVA_WEBHOOK_RESEND_GRACE_SECONDS
            + 1
        )
        assert outbox.relay_due(now=later).swept == 1
        assert len(receiver.received) == 2  # the held attempt 1, then the one sent again
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 1)
