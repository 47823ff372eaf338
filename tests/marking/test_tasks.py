"""The marking hand-off: exam_completed enqueues mark_session on commit; the task is idempotent."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.db import transaction

from config.celery import app
from marking.models import MarkingRequest
from marking.tasks import mark_session
from sessions.event_store import append_event, append_events
from tests.sessions.factories import (
    ExamSessionFactory,
    event_factory,
    exam_completed,
    node_entered,
)


@pytest.fixture
def eager() -> Iterator[None]:
    """Run tasks in-process (the embedded shape) whatever the environment configures."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


@pytest.mark.django_db
def test_mark_session_records_one_request_however_often_it_runs() -> None:
    session = ExamSessionFactory()
    first = mark_session(str(session.pk))
    second = mark_session(str(session.pk))
    assert first == second
    request = MarkingRequest.objects.get(session=session)
    assert request.deliveries == 2 and request.status == "requested"


@pytest.mark.django_db(transaction=True)
def test_exam_completed_enqueues_marking_only_after_commit(eager: None) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    with transaction.atomic():
        append_events(session=session, events=[make(node_entered()), make(exam_completed())])
        assert not MarkingRequest.objects.filter(session=session).exists()
    request = MarkingRequest.objects.get(session=session)
    assert request.completed_seq == 2


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_completion_enqueues_nothing(eager: None) -> None:
    session = ExamSessionFactory()

    def complete_then_fail() -> None:
        with transaction.atomic():
            append_event(session=session, event=event_factory(session)(exam_completed()))
            raise RuntimeError("roll back")

    with pytest.raises(RuntimeError):
        complete_then_fail()
    assert not MarkingRequest.objects.exists()


@pytest.mark.services("postgres", "redis")
@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_records_the_request() -> None:
    from tests.support.processes import celery_worker

    session = ExamSessionFactory()
    with celery_worker(queues="marking"):
        append_event(session=session, event=event_factory(session)(exam_completed()))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if MarkingRequest.objects.filter(session=session).exists():
                break
            time.sleep(0.2)
    assert MarkingRequest.objects.get(session=session).completed_seq == 1
