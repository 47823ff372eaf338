"""Issue #33: marking a completed exam is an outbox message written with ``exam_completed``
(``sessions.outbox``), so a broker that is down when the exam ends loses nothing. The broker
here is a real Celery publish to a Redis that is down (connection refused) while the exam
completes; the relay is the ``relay_outbox`` command."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from marking.models import MarkingRequest, SessionMark
from sessions import outbox
from sessions.models import OutboxMessage
from tests.factories import CandidateFactory
from tests.marking.exams import completed_session
from tests.support.outbox import broker_down, held_relay

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_an_exam_completed_while_the_broker_is_down_is_marked_once_the_relay_runs(
    version: Any, eager: None
) -> None:
    with broker_down():
        session = completed_session(version=version, candidate=CandidateFactory())
    # The writer saw no error; the request waits in the outbox, not in a lost task.
    assert not SessionMark.objects.filter(session=session).exists()
    message = OutboxMessage.objects.get(topic="marking.mark_session", key=str(session.pk))
    assert (message.status, message.attempts) == ("pending", 0)

    call_command("relay_outbox")
    message.refresh_from_db()
    assert (message.status, message.attempts) == ("delivered", 1)
    assert SessionMark.objects.filter(session=session).count() == 1

    call_command("relay_outbox")  # nothing due: marked once
    assert SessionMark.objects.filter(session=session).count() == 1
    assert MarkingRequest.objects.get(session=session).status == "marked"


def test_a_completed_exam_without_its_message_is_found_by_the_sweep(
    version: Any, eager: None
) -> None:
    """A completion whose message is gone (stored before the outbox existed, or lost with a
    restored database) is marked by the relay's reconciliation sweep once it is overdue."""
    with held_relay():
        session = completed_session(version=version, candidate=CandidateFactory())
    OutboxMessage.objects.filter(key=str(session.pk)).delete()

    soon = outbox.relay_due()
    assert soon.swept == 0  # completed just now: not overdue yet
    assert not SessionMark.objects.filter(session=session).exists()

    later = outbox.relay_due(now=timezone.now() + timedelta(minutes=3))
    assert later.swept == 1  # enqueued, handed over on commit (eager here) and delivered
    message = OutboxMessage.objects.get(topic="marking.mark_session", key=str(session.pk))
    assert message.status == "delivered"
    assert SessionMark.objects.filter(session=session).count() == 1
    again = outbox.relay_due(now=timezone.now() + timedelta(minutes=4))
    assert again.swept == 0 and again.outcomes == {}
