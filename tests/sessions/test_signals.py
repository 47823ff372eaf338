"""``sessions.signals``: the apps above sessions hear of stored events after commit, once per
stored event, never for a batch that rolled back (a real receiver on the real signal)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction

from sessions import signals
from sessions.event_store import append_event, append_events
from tests.sessions.factories import (
    ExamSessionFactory,
    event_factory,
    exam_completed,
    node_entered,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard() -> Iterator[list[tuple[str, Any]]]:
    """Every signal sent, as (name, what it carried)."""
    calls: list[tuple[str, Any]] = []

    def appended(*, session_id: Any, events: Any, **_: Any) -> None:
        calls.append(("appended", (session_id, [(e.seq, e.type) for e in events])))

    def completed(*, session_id: Any, **_: Any) -> None:
        calls.append(("completed", session_id))

    signals.events_appended.connect(appended, dispatch_uid="test-appended")
    signals.session_completed.connect(completed, dispatch_uid="test-completed")
    yield calls
    signals.events_appended.disconnect(dispatch_uid="test-appended")
    signals.session_completed.disconnect(dispatch_uid="test-completed")


def test_sent_after_commit_with_the_newly_stored_events(
    heard: list[tuple[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    entered, done = make(node_entered()), make(exam_completed())
    with django_capture_on_commit_callbacks(execute=True):
        append_events(session=session, events=[entered, done])
        assert heard == []  # nothing before the commit
    assert heard == [
        ("appended", (session.pk, [(1, "node_entered"), (2, "exam_completed")])),
        ("completed", session.pk),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        append_event(session=session, event=done)  # a re-delivery stores nothing new
    assert len(heard) == 2


def test_nothing_is_sent_for_a_rolled_back_batch(
    heard: list[tuple[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)

    def rolled_back() -> None:
        with transaction.atomic():
            append_events(session=session, events=[make(node_entered()), make(exam_completed())])
            raise RuntimeError("roll back")

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        rolled_back()
    assert heard == []
