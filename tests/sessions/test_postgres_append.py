"""Group commit of single-event appends (``sessions.postgres_append``) on real Postgres: appends
of concurrent threads to different sessions share statements, and each still gets exactly its
own outcome (stored, duplicate, stale version, missing session) with an intact chain."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from django.db import connection

from sessions.event_store import SessionNotFound, VersionConflict, append_event
from sessions.models import ExamSession, SessionEvent
from sessions.postgres_append import GROUPS
from sessions.selectors import verify_log
from tests.sessions.factories import (
    ExamSessionFactory,
    event_factory,
    exam_started,
    transcript_final,
)
from tests.sessions.test_concurrency import run_threads

pytestmark = [pytest.mark.services("postgres"), pytest.mark.django_db(transaction=True)]


def _counters() -> tuple[int, int, int]:
    return GROUPS.statements, GROUPS.events, GROUPS.fallbacks


def test_concurrent_appends_to_many_sessions_share_statements_and_keep_every_chain() -> None:
    sessions = [ExamSessionFactory() for _ in range(24)]
    per_session = 15
    batches = [
        [event_factory(s)(transcript_final(turn=i)) for i in range(per_session)] for s in sessions
    ]
    statements, events, fallbacks = _counters()

    def work(index: int) -> None:
        for event in batches[index]:
            append_event(session=sessions[index].pk, event=event)

    assert run_threads(len(sessions), work) == []
    statements, events = GROUPS.statements - statements, GROUPS.events - events
    assert events == len(sessions) * per_session
    assert statements < events  # some statements stored several sessions' events
    assert GROUPS.fallbacks == fallbacks  # and none of them had to be split up
    for session, batch in zip(sessions, batches, strict=True):
        rows = list(SessionEvent.objects.filter(session=session).order_by("seq"))
        assert [r.seq for r in rows] == list(range(1, per_session + 1))
        assert [str(r.event_id) for r in rows] == [e.eventId for e in batch]
        assert verify_log(session_id=session.pk) == []


def _hold_session_lock(session: ExamSession) -> threading.Event:
    """Lock ``session``'s row from another connection until the returned release is set."""
    settings = connection.settings_dict
    dsn = f"host={settings['HOST'] or '127.0.0.1'} port={settings['PORT'] or 5432} " + (
        f"dbname={settings['NAME']} user={settings['USER'] or 'postgres'}"
    )
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with psycopg.connect(dsn) as conn:
            conn.execute(
                "SELECT 1 FROM exam_sessions_examsession WHERE id = %s FOR UPDATE", [session.pk]
            )
            locked.set()
            release.wait(30)

    threading.Thread(target=hold, daemon=True).start()
    assert locked.wait(10)
    return release


def _queue_behind_a_blocked_leader(
    calls: list[Callable[[], Any]],
) -> list[Any]:
    """Block the leader on a locked session, queue ``calls`` behind it, then let all run:
    the queued calls run as one group. Returns each call's result or exception."""
    blocked = ExamSessionFactory()
    release = _hold_session_lock(blocked)
    outcomes: list[Any] = [None] * len(calls)

    def leader(_: int) -> None:
        append_event(session=blocked.pk, event=event_factory(blocked)(transcript_final(turn=0)))

    def queued(index: int) -> None:
        try:
            outcomes[index] = calls[index]()
        except Exception as exc:  # the outcome under test
            outcomes[index] = exc

    threads = [threading.Thread(target=run_threads, args=(1, leader))]
    threads[0].start()
    deadline = time.monotonic() + 10
    while GROUPS.pending() or not _leader_waits(blocked):
        assert time.monotonic() < deadline, "the leader never reached the locked row"
        time.sleep(0.01)
    threads += [
        threading.Thread(target=run_threads, args=(1, lambda _, i=i: queued(i)))
        for i in range(len(calls))
    ]
    for thread in threads[1:]:
        thread.start()
    while GROUPS.pending() < len(calls):
        assert time.monotonic() < deadline, "the appends did not queue"
        time.sleep(0.01)
    release.set()
    for thread in threads:
        thread.join(30)
    assert SessionEvent.objects.filter(session=blocked).count() == 1
    return outcomes


def _leader_waits(session: ExamSession) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE %s",
            ["%exam_sessions_examsession%"],
        )
        return bool(cursor.fetchone()[0])


def test_one_group_hands_each_append_its_own_outcome() -> None:
    fresh_a, fresh_b, stale = (ExamSessionFactory() for _ in range(3))
    append_event(session=stale.pk, event=event_factory(stale)(transcript_final(turn=0)))
    before = _counters()
    missing = uuid.uuid4()
    outcomes = _queue_behind_a_blocked_leader(
        [
            lambda: append_event(
                session=fresh_a.pk, event=event_factory(fresh_a)(transcript_final(turn=1))
            ),
            lambda: append_event(
                session=stale.pk,
                event=event_factory(stale)(transcript_final(turn=1)),
                expected_version=0,
            ),
            lambda: append_event(
                session=missing, event=event_factory(missing)(transcript_final(turn=1))
            ),
            lambda: append_event(
                session=fresh_b.pk, event=event_factory(fresh_b)(transcript_final(turn=1))
            ),
        ]
    )
    assert [type(o) for o in outcomes[1:3]] == [VersionConflict, SessionNotFound]
    assert outcomes[0].seq == 1 and outcomes[3].seq == 1
    statements, events, fallbacks = (
        now - then for now, then in zip(_counters(), before, strict=True)
    )
    assert (statements, events, fallbacks) == (2, 5, 0)  # the leader's, then one for the four
    for session in (fresh_a, fresh_b, stale):
        assert verify_log(session_id=session.pk) == []
    assert SessionEvent.objects.filter(session=stale).count() == 1


def test_a_redelivered_event_in_a_group_is_returned_and_the_others_stored() -> None:
    again, fresh = ExamSessionFactory(), ExamSessionFactory()
    first = append_event(
        session=again.pk, event=(event := event_factory(again)(transcript_final(turn=0)))
    )
    before = _counters()
    outcomes = _queue_behind_a_blocked_leader(
        [
            lambda: append_event(session=again.pk, event=event),
            lambda: append_event(
                session=fresh.pk, event=event_factory(fresh)(transcript_final(turn=0))
            ),
        ]
    )
    assert outcomes[0].duplicate and outcomes[0].seq == first.seq == 1
    assert outcomes[1].seq == 1 and not outcomes[1].duplicate
    assert GROUPS.fallbacks - before[2] == 1  # the group statement failed as a whole, then each ran
    assert SessionEvent.objects.filter(session=again).count() == 1
    assert verify_log(session_id=fresh.pk) == []


TRICKY_TEXTS = [
    'She said "relax every edge" \\ then stopped',
    "Línea\nnueva\ttab — emoji 🧪, null-free, \u2028 separator",
    "日本語の答え: ダイクストラ法",
    "}{ ] [ ,: braces and a trailing backslash \\",
]


def test_a_group_stores_each_event_exactly_as_a_lone_append_does() -> None:
    """The group statement takes its requests as one JSON document (``group_record``): payload
    text with quotes, backslashes, control characters, non-Latin scripts and emoji, a state
    change, a correlation id and microsecond timestamps must be stored as the one-statement
    path stores them."""
    grouped = [ExamSessionFactory() for _ in TRICKY_TEXTS]
    alone = [ExamSessionFactory() for _ in TRICKY_TEXTS]
    changer, changer_alone = ExamSessionFactory(), ExamSessionFactory()
    payloads: list[Any] = [transcript_final(turn=i, text=t) for i, t in enumerate(TRICKY_TEXTS)]
    start = exam_started(changer)[0].payload

    def events_for(sessions: list[ExamSession], state_session: ExamSession) -> list[Any]:
        made = [
            event_factory(s)(payload, correlation_id=f"corr-{i}")
            for i, (s, payload) in enumerate(zip(sessions, payloads, strict=True))
        ]
        return [*made, event_factory(state_session)(start)]

    in_group = events_for(grouped, changer)
    on_their_own = events_for(alone, changer_alone)
    before = _counters()
    outcomes = _queue_behind_a_blocked_leader(
        [
            lambda e=e, s=s: append_event(session=s.pk, event=e)
            for e, s in zip(in_group, [*grouped, changer], strict=True)
        ]
    )
    assert all(o.seq == 1 for o in outcomes), outcomes
    assert GROUPS.statements - before[0] == 2 and GROUPS.fallbacks == before[2]  # one group
    for event, session in zip(on_their_own, [*alone, changer_alone], strict=True):
        append_event(session=session.pk, event=event)

    def stored(session: ExamSession) -> tuple[Any, ...]:
        row = SessionEvent.objects.get(session=session, seq=1)
        return (row.type, row.source, row.correlation_id, row.payload, row.schema_version)

    for event, session in zip(in_group, [*grouped, changer], strict=True):
        row = SessionEvent.objects.get(session=session, seq=1)
        wire = event.to_wire()
        assert row.payload == wire["payload"]
        assert row.timestamp == event.timestamp_datetime
        assert str(row.event_id) == event.eventId
        assert verify_log(session_id=session.pk) == []
    assert [stored(s) for s in grouped] == [stored(s) for s in alone]
    changer.refresh_from_db()
    changer_alone.refresh_from_db()
    assert changer.state == changer_alone.state == "scaffolding"
