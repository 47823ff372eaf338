"""The append service: seq, idempotency, EVT refusals, state projection, publish after commit.

Runs on both database shapes (the Postgres single-statement path and the general path).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from ioa.events import GENESIS_HASH, EventType, body_digest, link_hash
from ioa.events import payloads as p
from ioa.events.personal import CHAIN_V2, chain_digest
from sessions import broadcast, chain_anchor, event_store
from sessions.event_store import (
    EventsRefused,
    SessionNotFound,
    VersionConflict,
    append_event,
    append_events,
)
from sessions.models import ExamSession, ImmutableEventError, SessionEvent
from sessions.selectors import verify_log
from tests.sessions.factories import (
    ExamSessionFactory,
    event_factory,
    evidence_signal,
    exam_completed,
    guardrail,
    node_entered,
    transcript_final,
    transcripts,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[dict[str, Any]]]]:
    """Captures what the store hands to the broadcaster (and when)."""
    calls: list[tuple[str, list[dict[str, Any]]]] = []
    monkeypatch.setattr(
        broadcast, "publish_events", lambda sid, events: calls.append((str(sid), list(events)))
    )
    return calls


def seqs(session: ExamSession) -> list[int]:
    return list(session.events.order_by("seq").values_list("seq", flat=True))


@pytest.mark.django_db(transaction=True)  # autocommit: the fast path
def test_seq_starts_at_one_and_has_no_gaps(published: list[Any]) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    first = append_event(session=session, event=make(node_entered()))
    assert (first.seq, first.prev_hash) == (1, GENESIS_HASH)
    result = append_events(session=session.pk, events=transcripts(session, 5))
    assert [e.seq for e in result.events] == [2, 3, 4, 5, 6]
    assert result.last_seq == 6
    session.refresh_from_db()
    assert session.last_seq == 6 and session.head_hash == result.head_hash
    assert seqs(session) == [1, 2, 3, 4, 5, 6]
    assert verify_log(session_id=session.pk) == []


@pytest.mark.django_db(transaction=True)  # autocommit: the fast path
def test_stored_hashes_follow_the_chain_formula(published: list[Any]) -> None:
    session = ExamSessionFactory()
    stored = append_event(session=session, event=event_factory(session)(node_entered()))
    expected = link_hash(GENESIS_HASH, 1, body_digest(stored.wire))
    assert stored.hash == expected
    row = SessionEvent.objects.get(session=session, seq=1)
    assert (row.hash, row.prev_hash) == (expected, GENESIS_HASH)
    session.refresh_from_db()
    assert (session.head_hash, session.prev_head_hash) == (expected, GENESIS_HASH)


@pytest.mark.django_db(transaction=True)  # autocommit: the fast path
def test_redelivering_an_event_is_a_no_op_returning_the_stored_one(
    published: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    events = [make(node_entered()), make(transcript_final())]
    with django_capture_on_commit_callbacks(execute=True):
        append_events(session=session, events=events)
        head = ExamSession.objects.get(pk=session.pk).head_hash
        again = append_event(session=session, event=events[1])
        assert again.duplicate and again.seq == 2
        as_json = append_event(session=session, event=again.wire)  # with its seq, as sent
        assert as_json.duplicate and as_json.seq == 2
        batch = append_events(session=session, events=events)
        assert [e.duplicate for e in batch.events] == [True, True]
    assert SessionEvent.objects.filter(session=session).count() == 2
    assert ExamSession.objects.get(pk=session.pk).head_hash == head
    assert len(published) == 1  # only the first delivery was published


def test_repeats_inside_a_batch_are_stored_once(published: list[Any]) -> None:
    session = ExamSessionFactory()
    event = event_factory(session)(node_entered())
    result = append_events(session=session, events=[event, event, event.to_wire()])
    assert [e.seq for e in result.events] == [1]
    assert seqs(session) == [1]


def test_a_mixed_batch_stores_only_the_new_events(published: list[Any]) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    old = make(node_entered())
    append_event(session=session, event=old)
    new = make(transcript_final())
    result = append_events(session=session, events=[old, new])
    assert [(e.seq, e.duplicate) for e in result.events] == [(1, True), (2, False)]
    assert result.appended == (result.events[1],)


@pytest.mark.django_db(transaction=True)  # autocommit: the fast path
def test_expected_version_guards_against_stale_writers(published: list[Any]) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    append_event(session=session, event=make(node_entered()), expected_version=0)
    with pytest.raises(VersionConflict) as caught:
        append_event(session=session, event=make(transcript_final()), expected_version=0)
    assert (caught.value.expected, caught.value.actual) == (0, 1)
    with pytest.raises(VersionConflict):
        append_events(session=session, events=transcripts(session, 2), expected_version=5)
    assert seqs(session) == [1]
    assert (
        append_event(session=session, event=make(transcript_final()), expected_version=1).seq == 2
    )


@pytest.mark.django_db(transaction=True)  # autocommit: the fast path
def test_a_stale_version_on_a_redelivery_still_returns_the_stored_event(
    published: list[Any],
) -> None:
    session = ExamSessionFactory()
    event = event_factory(session)(node_entered())
    append_event(session=session, event=event, expected_version=0)
    assert append_event(session=session, event=event, expected_version=0).duplicate


@pytest.mark.django_db(transaction=True)  # autocommit: the fast path
def test_invalid_events_are_refused_and_a_system_error_is_stored(published: list[Any]) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    bad = make(node_entered()).to_wire()
    del bad["payload"]["timeBudgetMs"]
    good = make(transcript_final())
    with pytest.raises(EventsRefused) as caught:
        append_events(session=session, events=[good, bad])
    assert caught.value.rules == ("EVT-004",)
    error = caught.value.system_error
    assert error is not None and error.type == "system_error" and error.seq == 1
    assert error.wire["payload"]["ruleIds"] == ["EVT-004"]
    assert error.wire["payload"]["refusedEventIds"] == [bad["eventId"]]
    assert list(session.events.values_list("type", flat=True)) == ["system_error"]


def test_evt_003_evidence_needs_its_node_entered_before(published: list[Any]) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    with pytest.raises(EventsRefused) as caught:
        append_event(session=session, event=make(evidence_signal(node_id="q1")))
    assert caught.value.rules == ("EVT-003",)
    append_event(session=session, event=make(node_entered("q1")))
    stored = append_event(session=session, event=make(evidence_signal(node_id="q1")))
    assert stored.seq == 3  # after the system_error and the node_entered
    # node_entered earlier in the same batch counts too
    append_events(session=session, events=[make(node_entered("q2")), make(evidence_signal("q2"))])


def test_events_of_another_session_are_refused(published: list[Any]) -> None:
    session, other = ExamSessionFactory(), ExamSessionFactory()
    with pytest.raises(EventsRefused) as caught:
        append_event(session=session, event=event_factory(other)(node_entered()))
    assert "is not this session" in str(caught.value)
    assert not other.events.exists()


@pytest.mark.django_db(transaction=True)  # autocommit: the fast path
def test_unknown_sessions_are_reported(published: list[Any]) -> None:
    ghost = "01890a5d-ac96-774b-bcce-b302099a8057"
    with pytest.raises(SessionNotFound):
        append_event(session=ghost, event=event_factory(ghost)(node_entered()))
    with pytest.raises(SessionNotFound):
        append_events(session=ghost, events=transcripts(ExamSessionFactory.build(pk=ghost), 2))


def test_live_only_events_are_published_but_never_stored(
    published: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    session = ExamSessionFactory()
    make = event_factory(session, source="bot")
    delta = make(p.TranscriptDelta(speaker="candidate", text="so the", stability=0.4))
    with django_capture_on_commit_callbacks(execute=True):
        result = append_events(session=session, events=[delta, make(node_entered())])
    assert [e.seq for e in result.events] == [None, 1]
    assert seqs(session) == [1]
    assert [e["type"] for e in published[0][1]] == ["transcript_delta", "node_entered"]
    assert "seq" not in published[0][1][0]


@pytest.mark.django_db(transaction=True)  # autocommit: the fast path
def test_exam_state_changes_move_the_session_state(published: list[Any]) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    append_event(
        session=session,
        event=make(p.ExamStateChanged(fromState="scheduled", toState="scaffolding")),
    )
    assert ExamSession.objects.get(pk=session.pk).state == "scaffolding"
    append_events(
        session=session,
        events=[
            make(p.ExamStateChanged(fromState="scaffolding", toState="ready")),
            make(p.ExamStateChanged(fromState="ready", toState="in_progress")),
        ],
    )
    assert ExamSession.objects.get(pk=session.pk).state == "in_progress"


@pytest.mark.django_db(transaction=True)
def test_publishing_waits_for_the_commit(published: list[Any]) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    with transaction.atomic():
        append_event(session=session, event=make(node_entered()))
        assert published == []
    assert [e["seq"] for e in published[0][1]] == [1]

    def append_then_fail() -> None:
        with transaction.atomic():
            append_event(session=session, event=make(transcript_final()))
            raise RuntimeError("roll back")

    with pytest.raises(RuntimeError):
        append_then_fail()
    assert len(published) == 1 and seqs(session) == [1]


def test_stored_events_cannot_be_changed_through_the_orm(published: list[Any]) -> None:
    session = ExamSessionFactory()
    append_event(session=session, event=event_factory(session)(node_entered()))
    row = SessionEvent.objects.get(session=session)
    row.type = "bot_ready"
    with pytest.raises(ImmutableEventError):
        row.save()
    with pytest.raises(ImmutableEventError):
        row.delete()
    with pytest.raises(ImmutableEventError):
        SessionEvent.objects.filter(session=session).update(type="x")
    with pytest.raises(ImmutableEventError):
        SessionEvent.objects.filter(session=session).delete()


@pytest.mark.services("postgres")
def test_postgres_refuses_raw_updates_and_deletes(published: list[Any]) -> None:
    from django.db import IntegrityError

    session = ExamSessionFactory()
    append_event(session=session, event=event_factory(session)(node_entered()))
    for sql in (
        "UPDATE exam_sessions_sessionevent SET type = 'x' WHERE session_id = %s",
        "DELETE FROM exam_sessions_sessionevent WHERE session_id = %s",
    ):
        with (
            pytest.raises(IntegrityError, match="immutable"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [session.pk])


def test_every_event_type_round_trips_through_the_store(published: list[Any]) -> None:
    from tests.ioa.events.conftest import VALID_PAYLOADS, wire

    session = ExamSessionFactory()
    events = []
    for kind, payload in VALID_PAYLOADS.items():
        raw = wire(kind, payload, sessionId=str(session.pk))
        events.append(raw)
    # node-scoped events need their node first
    events.sort(key=lambda e: e["type"] != "node_entered")
    events = [e for e in events if e["type"] != "exam_state_changed"]
    with TestCase.captureOnCommitCallbacks(execute=True):  # the head is anchored on commit
        result = append_events(session=session, events=events)
    stored = {e.type for e in result.appended}
    assert stored == {t.value for t in EventType} - {
        "transcript_delta",
        "heartbeat",
        "exam_state_changed",
    }
    assert verify_log(session_id=session.pk) == []


def _expected_chain(events: list[Any]) -> list[tuple[int, str, str]]:
    """(seq, prev_hash, hash) the chain must hold for these events, computed from what was sent
    (chain version 2: the transcript's text enters as its seal)."""
    links, prev = [], GENESIS_HASH
    for seq, event in enumerate(events, start=1):
        digest = chain_digest(event.to_wire(), version=CHAIN_V2, key=chain_anchor.seal_key())
        links.append((seq, prev, link_hash(prev, seq, digest)))
        prev = links[-1][2]
    return links


@pytest.mark.services("postgres")  # the single-statement and batch paths exist only on Postgres
@pytest.mark.django_db(transaction=True)  # autocommit: the fast path
def test_fast_batch_and_general_paths_build_the_same_chain(published: list[Any]) -> None:
    a, b, c = ExamSessionFactory(), ExamSessionFactory(), ExamSessionFactory()
    make = event_factory(a)
    events = [make(node_entered()), make(transcript_final()), make(guardrail())]
    with CaptureQueriesContext(connection) as fast:
        for event in events:
            append_event(session=a, event=event)  # one by one: the single-statement path
    moved = [e.model_copy(update={"sessionId": str(b.pk)}) for e in events]
    with CaptureQueriesContext(connection) as batch:
        append_events(session=b, events=moved)  # one batch: two prepared statements
    general = [e.model_copy(update={"sessionId": str(c.pk)}) for e in events]
    with CaptureQueriesContext(connection) as orm:
        _, last_seq, head = event_store._append_locked(c.pk, general, None)  # SQLite's path
    chain_anchor.anchor_head(session_id=c.pk, seq=last_seq, head=head)  # as append_events does
    # The Postgres paths are raw prepared statements, outside the ORM (what the ORM logs is
    # the transaction's own bookkeeping at most); the general path reads and writes through it.
    orm_statements = [q["sql"] for q in orm.captured_queries]
    assert len(fast.captured_queries) == 0
    assert not any("exam_sessions" in q["sql"] for q in batch.captured_queries)
    assert any("FOR UPDATE" in sql for sql in orm_statements)
    for session, sent in ((a, events), (b, moved), (c, general)):
        session.refresh_from_db()
        expected = _expected_chain(sent)
        stored = list(session.events.order_by("seq").values_list("seq", "prev_hash", "hash"))
        assert stored == expected
        assert (session.last_seq, session.head_hash) == (3, expected[-1][2])
        assert session.prev_head_hash == expected[-1][1]
    assert all(verify_log(session_id=s.pk) == [] for s in (a, b, c))


@pytest.mark.services("postgres")
@pytest.mark.django_db(transaction=True)
def test_the_batch_path_moves_state_and_keeps_stored_events_of_a_mixed_batch(
    published: list[Any],
) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    first = [make(node_entered()), make(transcript_final())]
    append_events(session=session, events=first)
    changed = make(p.ExamStateChanged(fromState="in_progress", toState="paused"))
    result = append_events(session=session, events=[first[1], changed, make(guardrail())])
    assert [e.duplicate for e in result.events] == [True, False, False]
    assert [e.seq for e in result.events] == [2, 3, 4]
    assert result.events[0].wire == first[1].to_wire() | {"seq": 2}
    session.refresh_from_db()
    assert (session.state, session.last_seq) == ("paused", 4)
    with pytest.raises(VersionConflict):
        append_events(
            session=session, events=[make(guardrail()), make(guardrail())], expected_version=3
        )
    assert seqs(session) == [1, 2, 3, 4]
    assert verify_log(session_id=session.pk) == []


def test_exam_completed_asks_for_marking_on_commit(
    published: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    """Marking hears of the completion through the outbox (it watches ``exam_completed`` from
    its AppConfig): its message is written with the event, handed to the relay once the append
    has committed, and once only (issue #33)."""
    from sessions.models import OutboxMessage
    from tests.support.outbox import held_relay

    session = ExamSessionFactory()
    make = event_factory(session)
    done = make(exam_completed())
    with held_relay() as relay:
        with django_capture_on_commit_callbacks(execute=True):
            append_events(session=session, events=[make(node_entered()), done])
            assert relay.handed == []  # not before commit
        with django_capture_on_commit_callbacks(execute=True):
            append_event(session=session, event=done)  # redelivery: no second request
    messages = OutboxMessage.objects.filter(topic="marking.mark_session")
    assert [(m.key, m.status) for m in messages] == [(str(session.pk), "pending")]
    assert [m for m in relay.handed if m == messages[0].pk] == [messages[0].pk]


def test_module_exports_the_documented_names() -> None:
    """The public names behave as the contract says: store, re-delivery as a no-op, a stale
    expected version refused."""
    session = ExamSessionFactory()
    stored = event_store.append_event(session=session, event=event_factory(session)(node_entered()))
    assert (stored.seq, stored.duplicate) == (1, False)
    again = event_store.append_events(session=session, events=[stored.wire])
    assert [e.seq for e in again.duplicates] == [1] and again.appended == ()
    with pytest.raises(event_store.VersionConflict):
        event_store.append_events(
            session=session, events=transcripts(session, 1), expected_version=0
        )
