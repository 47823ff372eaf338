"""What triggers a webhook, with real commits and tasks in-process: a completed exam, a
proctor's irregularity report and locked marks each reach a subscribed receiver once, after
commit, carrying ids and enumerated facts only (no name, email or free-text reason); an author's
exam-room preview and a rolled-back lock send nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction

from marking import services as marking
from marking.models import SessionMark
from proctoring.actions import action_perform
from sessions.models import SessionEvent, Sitting
from tests.factories import AuthorFactory, CandidateFactory, ProctorFactory
from tests.marking.exams import completed_session
from tests.support.webhook_receiver import webhook_receiver
from webhooks.models import WebhookDelivery

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("loopback_allowed", "eager"),
]


def bodies(receiver: Any) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in receiver.received]


def test_a_completed_exam_is_told_once_with_ids_only(
    version: Any, make_endpoint: Callable[..., Any]
) -> None:
    candidate = CandidateFactory(display_name="Ada Lovelace", email="ada@example.org")
    with webhook_receiver() as receiver:
        make_endpoint(receiver.url, events=["exam.completed"])
        session = completed_session(version=version, candidate=candidate)
        (body,) = bodies(receiver)
    completed = SessionEvent.objects.get(session=session, type="exam_completed")
    assert body["type"] == "exam.completed"
    assert body["data"] == {
        "sessionId": str(session.pk),
        "sittingId": str(session.sitting_id),
        "eventId": str(completed.event_id),
        "seq": completed.seq,
        "reason": completed.payload["reason"],
    }
    text = receiver.received[0].body.decode()
    assert "Ada" not in text and "ada@example.org" not in text
    assert WebhookDelivery.objects.get().status == "delivered"


def test_an_irregularity_report_is_told_without_the_proctors_words(
    version: Any, make_endpoint: Callable[..., Any]
) -> None:
    session = completed_session(version=version, candidate=CandidateFactory())
    with webhook_receiver() as receiver:
        make_endpoint(receiver.url, events=["irregularity.reported"])
        outcome = action_perform(
            session=session,
            user=ProctorFactory(),
            action="flag_irregularity",
            category="candidate",
            reason="Ada had notes under the desk.",
        )
        (body,) = bodies(receiver)
    event_id = outcome.request.event_ids[0]
    assert body["type"] == "irregularity.reported"
    assert body["data"]["eventId"] == str(event_id)
    assert body["data"]["category"] == "candidate"
    assert "notes under the desk" not in receiver.received[0].body.decode()


def lock_then_fail(mark: SessionMark, moderator: Any) -> None:
    with transaction.atomic():
        marking.marks_lock(mark=mark, user=moderator, note="Signed off.")
        raise RuntimeError("roll back")


def test_locked_marks_are_told_once_per_cycle_and_never_for_a_rolled_back_lock(
    version: Any, make_endpoint: Callable[..., Any]
) -> None:
    session = completed_session(version=version, candidate=CandidateFactory())
    mark = SessionMark.objects.get(session=session)
    moderator = AuthorFactory()
    with webhook_receiver() as receiver:
        make_endpoint(receiver.url, events=["marks.locked"])
        with pytest.raises(RuntimeError, match="roll back"):
            lock_then_fail(mark, moderator)
        assert receiver.received == [] and WebhookDelivery.objects.count() == 0
        marking.marks_lock(mark=mark, user=moderator, note="Signed off.")
        marking.appeal_open(mark=mark, user=moderator, reason="The candidate appealed.")
        marking.marks_lock(mark=mark, user=moderator, note="Appeal refused.")
        first, second = bodies(receiver)
    assert (first["type"], second["type"]) == ("marks.locked", "marks.locked")
    assert first["data"] == {"sessionId": str(session.pk), "markId": mark.pk, "cycle": 1}
    assert second["data"]["cycle"] == 2
    assert WebhookDelivery.objects.filter(status="delivered").count() == 2


def test_an_authors_preview_is_never_told(version: Any, make_endpoint: Callable[..., Any]) -> None:
    sandbox = Sitting.objects.create(
        version=version, title="Preview", created_by=version.published_by, is_preview=True
    )
    with webhook_receiver() as receiver:
        make_endpoint(receiver.url)
        completed_session(version=version, candidate=AuthorFactory(), sitting=sandbox)
        assert receiver.received == []
    assert WebhookDelivery.objects.count() == 0
