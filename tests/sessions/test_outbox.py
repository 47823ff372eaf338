"""``sessions.outbox``: a consequence commits with its fact or not at all, is delivered once,
retried with back-off when its handler fails, and kept as ``dead`` with the error after the
last attempt, until an admin sends it again."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from sessions import outbox
from sessions.event_store import append_events
from sessions.models import OutboxMessage
from tests.sessions.factories import (
    ExamSessionFactory,
    event_factory,
    exam_completed,
    node_entered,
)
from tests.support.outbox import held_relay

pytestmark = pytest.mark.django_db(transaction=True)


class Flaky:
    """A handler that fails its first ``failures`` calls."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: list[Mapping[str, object]] = []

    def __call__(self, payload: Mapping[str, object]) -> None:
        self.calls.append(payload)
        if len(self.calls) <= self.failures:
            raise ConnectionError(f"the receiver is down (call {len(self.calls)})")


def _enqueue(topic: str, key: str) -> OutboxMessage:
    with held_relay(), transaction.atomic():
        assert outbox.enqueue(topic=topic, key=key, payload={"n": 1})
        assert not outbox.enqueue(topic=topic, key=key, payload={"n": 2})  # one per key
    return OutboxMessage.objects.get(topic=topic, key=key)


def test_a_message_is_written_with_its_fact_or_not_at_all() -> None:
    session = ExamSessionFactory()
    make = event_factory(session)

    def complete_then_roll_back() -> None:
        with held_relay(), transaction.atomic():
            append_events(session=session, events=[make(node_entered()), make(exam_completed())])
            assert OutboxMessage.objects.filter(key=str(session.pk)).exists()
            raise RuntimeError("the fact's transaction rolls back")

    with pytest.raises(RuntimeError):
        complete_then_roll_back()
    assert not OutboxMessage.objects.filter(key=str(session.pk)).exists()
    with pytest.raises(transaction.TransactionManagementError):
        outbox.enqueue(topic="tests.outside", key="1", payload={})  # never after the fact


def test_a_failing_handler_is_retried_with_back_off_then_dead_then_sent_again() -> None:
    flaky = Flaky(failures=outbox.MAX_ATTEMPTS)
    outbox.register("tests.flaky", flaky)
    message = _enqueue("tests.flaky", "m-1")
    now = timezone.now()
    waits = []
    for attempt in range(1, outbox.MAX_ATTEMPTS + 1):
        assert outbox.relay_due(now=now).outcomes == {
            ("dead" if attempt == outbox.MAX_ATTEMPTS else "retry"): 1
        }
        message.refresh_from_db()
        assert message.attempts == attempt
        assert "the receiver is down" in message.last_error
        if message.status == "pending":
            waits.append(message.next_attempt_at - now)
            assert outbox.relay_due(now=now).outcomes == {}  # not before its time
            now = message.next_attempt_at
    assert message.status == "dead"
    assert waits[:4] == [timedelta(seconds=s) for s in (5, 10, 20, 40)]
    assert max(waits) == timedelta(hours=1)
    assert outbox.relay_due(now=now + timedelta(days=1)).outcomes == {}  # dead stays dead

    assert outbox.send_again(message_ids=[message.pk]) == 1
    assert outbox.relay_due().outcomes == {"delivered": 1}
    message.refresh_from_db()
    assert (message.status, message.attempts, message.last_error) == ("delivered", 1, "")
    assert len(flaky.calls) == outbox.MAX_ATTEMPTS + 1


def test_a_handler_s_writes_roll_back_with_its_failure() -> None:
    """A handler that wrote and then failed leaves nothing half done for the retry to trip on."""
    session = ExamSessionFactory()

    def writes_then_fails(payload: Mapping[str, object]) -> None:
        with held_relay():
            outbox.enqueue(topic="tests.side", key=str(session.pk), payload={})
        raise ValueError("failed after writing")

    outbox.register("tests.writes-then-fails", writes_then_fails)
    _enqueue("tests.writes-then-fails", "w-1")
    assert outbox.relay_due().outcomes == {"retry": 1}
    assert not OutboxMessage.objects.filter(topic="tests.side").exists()


def test_an_unknown_topic_is_kept_with_a_clear_error() -> None:
    message = _enqueue("tests.nobody-handles-this", "u-1")
    assert outbox.relay_due().outcomes == {"retry": 1}
    message.refresh_from_db()
    assert message.last_error == "UnknownTopic: no handler for topic 'tests.nobody-handles-this'"


def test_delivered_messages_are_kept_thirty_days_then_pruned() -> None:
    outbox.register("tests.ok", lambda payload: None)
    message = _enqueue("tests.ok", "p-1")
    assert outbox.relay_due().outcomes == {"delivered": 1}
    later = timezone.now() + outbox.KEEP_DELIVERED - timedelta(hours=1)
    assert outbox.relay_due(now=later).pruned == 0
    assert outbox.relay_due(now=later + timedelta(hours=2)).pruned == 1
    assert not OutboxMessage.objects.filter(pk=message.pk).exists()
