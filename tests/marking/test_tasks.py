"""The marking hand-off: exam_completed enqueues marking on commit; marking runs once per
session however often the task is delivered; a version that cannot be compiled fails softly."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import transaction

from marking.models import MarkingRequest, PanelRun, SessionMark, TargetDecision
from marking.services import OFFLINE_NOTICE
from marking.tasks import mark_session
from sessions.event_store import append_event, append_events
from tests.sessions.factories import (
    ExamSessionFactory,
    event_factory,
    exam_completed,
    node_entered,
)


@pytest.mark.django_db(transaction=True)
def test_a_completed_session_is_marked_once_however_often_the_task_runs(make_session: Any) -> None:
    session = make_session("mixed")
    mark = SessionMark.objects.get(session=session)
    decisions = TargetDecision.objects.filter(mark=mark).count()
    assert decisions == len(mark.result_json["targets"]) == 5
    again = mark_session(str(session.pk))  # a re-delivered exam_completed / task
    assert again == mark.pk
    assert SessionMark.objects.filter(session=session).count() == 1
    assert TargetDecision.objects.filter(mark=mark).count() == decisions
    request = MarkingRequest.objects.get(session=session)
    assert request.deliveries == 2 and request.status == "marked"
    assert request.completed_seq is not None


@pytest.mark.django_db(transaction=True)
def test_a_redelivered_exam_completed_event_does_not_mark_twice(make_session: Any) -> None:
    from sessions.models import SessionEvent
    from sessions.selectors import wire_from_row

    session = make_session("strong")
    row = SessionEvent.objects.get(session=session, type="exam_completed")
    append_events(session=session, events=[wire_from_row(row)])  # same eventId: a no-op
    assert MarkingRequest.objects.get(session=session).deliveries == 1
    assert SessionMark.objects.filter(session=session).count() == 1


@pytest.mark.django_db(transaction=True)
def test_offline_the_panel_is_skipped_with_a_notice(make_session: Any) -> None:
    mark = SessionMark.objects.get(session=make_session("strong"))
    panel = PanelRun.objects.get(mark=mark)
    assert panel.status == "skipped" and panel.notice == OFFLINE_NOTICE
    assert mark.state == "proposed" and mark.final_score == 1.0


@pytest.mark.django_db(transaction=True)
def test_exam_completed_enqueues_marking_only_after_commit(eager: None) -> None:
    session = ExamSessionFactory()  # a version whose document is not a package
    make = event_factory(session)
    with transaction.atomic():
        append_events(session=session, events=[make(node_entered()), make(exam_completed())])
        assert not MarkingRequest.objects.filter(session=session).exists()
    request = MarkingRequest.objects.get(session=session)
    assert request.completed_seq == 2
    assert request.status == "failed" and "cannot be compiled" in request.error
    assert not SessionMark.objects.filter(session=session).exists()


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
def test_a_real_worker_marks_the_session(version: Any) -> None:
    from tests.factories import CandidateFactory
    from tests.marking.exams import completed_session
    from tests.support.processes import celery_worker

    with celery_worker(queues="marking"):
        session = completed_session(version=version, candidate=CandidateFactory(), profile="strong")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if SessionMark.objects.filter(session=session).exists():
                break
            time.sleep(0.2)
    assert SessionMark.objects.get(session=session).final_score == 1.0
