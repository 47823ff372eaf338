"""``GET /exam/<id>/examiner/`` (issue #33, admission control): what the exam room tells a
candidate whose examiner waits for a worker, in the exam's language, for their own session only."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from bot import capacity
from bot.models import BotLease
from tests.factories import CandidateFactory
from tests.sessions.factories import ExamSessionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_reports() -> Any:
    cache.delete_many([capacity.INDEX_KEY])
    yield
    cache.delete_many([capacity.INDEX_KEY])


def candidate_client(session: Any) -> Client:
    client = Client()
    client.force_login(session.candidate)
    return client


def queued(*, seconds_ago: float = 10, **fields: Any) -> Any:
    session = ExamSessionFactory(candidate=CandidateFactory(), **fields)
    BotLease.objects.create(
        session=session,
        state="starting",
        requested_at=timezone.now() - timedelta(seconds=seconds_ago),
    )
    return session


def test_every_examiner_busy_tells_the_candidate_their_place() -> None:
    queued(seconds_ago=60)
    session = queued(seconds_ago=30)
    capacity.report(worker="celery:a:1", capacity=2, hosted=2, draining=False)
    body = candidate_client(session).get(f"/exam/{session.pk}/examiner/").json()
    assert body["waiting"] is True and body["position"] == 2 and body["full"] is True
    assert body["message"].startswith("All examiners are busy right now. You are number 2 in")
    assert "your time has not started" in body["message"]


def test_no_examiner_running_is_said_so_and_a_free_worker_says_nothing() -> None:
    session = queued()
    client = candidate_client(session)
    assert (
        client.get(f"/exam/{session.pk}/examiner/")
        .json()["message"]
        .startswith("No examiner is running at the moment.")
    )
    capacity.report(worker="celery:a:1", capacity=5, hosted=1, draining=False)
    body = client.get(f"/exam/{session.pk}/examiner/").json()
    assert (body["waiting"], body["full"], body["message"]) == (True, False, None)


def test_a_running_examiner_is_no_wait_and_another_candidate_gets_404() -> None:
    session = queued()
    BotLease.objects.filter(session=session).update(state="running")
    assert candidate_client(session).get(f"/exam/{session.pk}/examiner/").json() == {
        "waiting": False,
        "message": None,
    }
    other = ExamSessionFactory(candidate=CandidateFactory())
    assert candidate_client(other).get(f"/exam/{session.pk}/examiner/").status_code == 404
    assert Client().get(f"/exam/{session.pk}/examiner/").status_code == 302  # to sign in
