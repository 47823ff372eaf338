"""Concurrent appends on real Postgres: gap-free unique seq, nothing lost or duplicated, and
no lock shared between unrelated sessions."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction

from sessions.event_store import VersionConflict, append_event, append_events
from sessions.models import ExamSession, SessionEvent
from sessions.selectors import verify_log
from tests.sessions.factories import (
    ExamSessionFactory,
    event_factory,
    node_entered,
    transcript_final,
)

pytestmark = [pytest.mark.services("postgres"), pytest.mark.django_db(transaction=True)]


def run_threads(count: int, work: Callable[[int], Any]) -> list[BaseException]:
    """Start ``count`` threads together; each closes its own connection at the end."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def runner(index: int) -> None:
        try:
            barrier.wait()
            work(index)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=runner, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return errors


def test_many_writers_on_one_session_get_gap_free_unique_seqs() -> None:
    session = ExamSessionFactory()
    writers, per_writer = 12, 40
    batches = [
        [event_factory(session)(transcript_final(turn=w * 1000 + i)) for i in range(per_writer)]
        for w in range(writers)
    ]

    def work(index: int) -> None:
        events = batches[index]
        if index % 3 == 0:  # some writers send batches, the rest one event per transaction
            for start in range(0, len(events), 7):
                append_events(session=session.pk, events=events[start : start + 7])
        else:
            for event in events:
                append_event(session=session.pk, event=event)

    assert run_threads(writers, work) == []
    total = writers * per_writer
    rows = list(SessionEvent.objects.filter(session=session).order_by("seq"))
    assert [r.seq for r in rows] == list(range(1, total + 1))
    assert {str(r.event_id) for r in rows} == {e.eventId for b in batches for e in b}
    session.refresh_from_db()
    assert session.last_seq == total
    assert verify_log(session_id=session.pk) == []
    # each writer's own events keep their order
    position = {str(r.event_id): r.seq for r in rows}
    for batch in batches:
        assert [position[e.eventId] for e in batch] == sorted(position[e.eventId] for e in batch)


def test_concurrent_duplicate_deliveries_store_each_event_once() -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    events = [make(node_entered())] + [make(transcript_final(turn=i)) for i in range(30)]
    results: list[list[Any]] = [[] for _ in range(8)]

    def work(index: int) -> None:
        for event in events if index % 2 else list(reversed(events)):
            results[index].append(append_event(session=session.pk, event=event))

    assert run_threads(8, work) == []
    assert SessionEvent.objects.filter(session=session).count() == len(events)
    assert list(SessionEvent.objects.filter(session=session).values_list("seq", flat=True)) == (
        list(range(1, len(events) + 1))
    )
    # every delivery returned the one stored copy
    stored = {str(r.event_id): r.seq for r in SessionEvent.objects.filter(session=session)}
    for deliveries in results:
        assert all(d.seq == stored[d.event_id] for d in deliveries)
    assert sum(not d.duplicate for r in results for d in r) == len(events)


def test_only_one_of_two_writers_with_the_same_expected_version_wins() -> None:
    session = ExamSessionFactory()
    outcomes: list[str] = []

    def work(index: int) -> None:
        event = event_factory(session)(transcript_final(turn=index))
        try:
            append_event(session=session.pk, event=event, expected_version=0)
            outcomes.append("stored")
        except VersionConflict:
            outcomes.append("conflict")

    assert run_threads(2, work) == []
    assert sorted(outcomes) == ["conflict", "stored"]


def test_a_locked_session_does_not_block_other_sessions() -> None:
    busy, free = ExamSessionFactory(), ExamSessionFactory()
    locked, release = threading.Event(), threading.Event()

    def hold_lock() -> None:
        try:
            with transaction.atomic():
                ExamSession.objects.select_for_update().get(pk=busy.pk)
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_lock)
    holder.start()
    assert locked.wait(10)
    try:
        started = time.monotonic()
        for i in range(20):
            append_event(session=free.pk, event=event_factory(free)(transcript_final(turn=i)))
        assert time.monotonic() - started < 5  # not waiting on the other session's lock

        waited: list[float] = []

        def blocked_append() -> None:
            t0 = time.monotonic()
            try:
                append_event(session=busy.pk, event=event_factory(busy)(transcript_final()))
            finally:
                waited.append(time.monotonic() - t0)
                connection.close()

        writer = threading.Thread(target=blocked_append)
        writer.start()
        time.sleep(0.5)
        assert not waited  # the same session's appender waits for the lock
    finally:
        release.set()
        holder.join(10)
    writer.join(10)
    assert waited and waited[0] >= 0.4
    assert SessionEvent.objects.filter(session=busy).count() == 1
