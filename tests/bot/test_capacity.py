"""``bot.capacity`` and ``bot.selectors.start_queue`` (issue #33, admission control): the
workers' reports add up to the cluster's capacity and load, a report that stopped coming drops
out, and a waiting start knows its place among every session's waiting starts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.utils import timezone

from bot import capacity
from bot.models import BotLease
from bot.selectors import start_queue
from tests.sessions.factories import ExamSessionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_reports() -> Any:
    cache.delete_many([capacity.INDEX_KEY])
    yield
    cache.delete_many([capacity.INDEX_KEY])


def test_reports_add_up_and_a_draining_worker_offers_no_room() -> None:
    capacity.report(worker="celery:a:1", capacity=50, hosted=50, draining=False)
    capacity.report(worker="celery:b:2", capacity=50, hosted=20, draining=False)
    assert capacity.cluster() == capacity.Cluster(workers=2, capacity=100, hosted=70)
    assert not capacity.cluster().full
    capacity.report(worker="celery:b:2", capacity=50, hosted=20, draining=True)
    state = capacity.cluster()
    assert (state.capacity, state.hosted, state.full) == (50, 70, True)


def test_a_worker_that_stopped_reporting_drops_out() -> None:
    capacity.report(worker="celery:a:1", capacity=50, hosted=10, draining=False)
    capacity.report(worker="celery:gone:9", capacity=50, hosted=0, draining=False)
    cache.delete(capacity.KEY_PREFIX + "celery:gone:9")  # its report expired
    assert capacity.cluster() == capacity.Cluster(workers=1, capacity=50, hosted=10)
    assert cache.get(capacity.INDEX_KEY) == ["celery:a:1"]


def waiting(seconds_ago: float) -> Any:
    session = ExamSessionFactory()
    BotLease.objects.create(
        session=session,
        state="starting",
        requested_at=timezone.now() - timedelta(seconds=seconds_ago),
    )
    return session


def test_a_waiting_start_knows_its_place_and_whether_every_worker_is_full() -> None:
    first, second, third = waiting(90), waiting(60), waiting(5)
    running = ExamSessionFactory()
    BotLease.objects.create(session=running, state="running", holder="celery:a:1:x")
    now = timezone.now()

    alone = start_queue(session_id=third.pk, now=now)
    assert alone is not None
    assert (alone.position, alone.workers, alone.full) == (3, 0, False)  # nobody reports
    assert 4 <= alone.waited_seconds < 60

    capacity.report(worker="celery:a:1", capacity=1, hosted=1, draining=False)
    full = start_queue(session_id=second.pk, now=now)
    assert full is not None and (full.position, full.workers, full.full) == (2, 1, True)
    assert start_queue(session_id=first.pk, now=now).position == 1  # type: ignore[union-attr]
    assert start_queue(session_id=running.pk, now=now) is None
    assert start_queue(session_id=ExamSessionFactory().pk, now=now) is None
