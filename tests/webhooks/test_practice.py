"""Practice sittings (issue #35, docs/spec/practice-sittings.md): a practice attempt is never
told to an integrator: neither its completion, nor a proctor's irregularity report in it, nor
marks (it has none), while a normal exam of the same version is."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from proctoring.actions import action_perform
from sessions import practice
from sessions.models import OutboxMessage, Sitting
from tests.factories import CandidateFactory, ProctorFactory
from tests.marking.exams import complete, completed_session
from tests.support.webhook_receiver import webhook_receiver
from webhooks.models import WebhookDelivery

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("loopback_allowed", "eager"),
]


def test_a_practice_attempt_is_never_told(version: Any, make_endpoint: Callable[..., Any]) -> None:
    sitting = Sitting.objects.create(
        version=version, title="Practice", created_by=version.published_by, is_practice=True
    )
    with webhook_receiver() as receiver:
        make_endpoint(receiver.url)
        first = completed_session(version=version, candidate=CandidateFactory(), sitting=sitting)
        second = complete(practice.practice_again(session=first))
        action_perform(
            session=second,
            user=ProctorFactory(),
            action="flag_irregularity",
            category="candidate",
            reason="Notes on the desk.",
        )
        assert receiver.received == []
        assert not OutboxMessage.objects.filter(topic="webhooks.emit").exists()
        normal = completed_session(version=version, candidate=CandidateFactory())
        (body,) = [json.loads(r.body) for r in receiver.received]
    assert body["data"]["sessionId"] == str(normal.pk)
    assert WebhookDelivery.objects.count() == 1
