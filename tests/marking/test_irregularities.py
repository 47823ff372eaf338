"""Irregularity reports and the marks, on Postgres with real commits: a report made during the
exam is in the marks from the start; a report stored after marking (the proctor service's
direct path → the event store → ``marking.tasks.irregularity_reported`` on commit) sends
unlocked marks back to review and is recorded beside locked marks without changing them; the
same event twice and concurrent deliveries record it once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction

from ioa.events import EventFactory, EventSource
from ioa.events import payloads as p
from marking import selectors, services
from marking.models import (
    MarkingAuditEntry,
    PostMarkingIrregularity,
    SessionMark,
    TargetDecision,
)
from marking.selectors import irregularities, mark_view
from marking.tasks import irregularity_reported
from proctoring.actions import action_perform, proctor_id
from sessions.event_store import append_events
from sessions.models import OutboxMessage, SessionEvent
from sessions.selectors import wire_from_row
from tests.factories import AuthorFactory, CandidateFactory, ProctorFactory
from tests.marking.exams import completed_session_with_report
from tests.sessions.factories import ExamSessionFactory, event_factory, node_entered
from tests.support.outbox import held_relay

pytestmark = pytest.mark.django_db(transaction=True)


def report(session: Any, proctor: Any, category: str, reason: str) -> SessionEvent:
    """Report an irregularity as a proctor does once the exam is over (stored directly)."""
    outcome = action_perform(
        session=session,
        user=proctor,
        action="flag_irregularity",
        category=category,
        reason=reason,
    )
    assert outcome.request.status == "recorded", outcome.request.message
    return SessionEvent.objects.get(event_id=outcome.request.event_ids[0])


def snapshot(mark: SessionMark) -> tuple[Any, ...]:
    """What must never change silently: the marker's result, levels, scores."""
    mark.refresh_from_db()
    levels = {k: d.level for k, d in selectors.current_decisions(mark).items()}
    return (mark.result_checksum, mark.marked_seq, levels, mark.final_score, mark.proposed_score)


def test_a_report_after_marking_sends_the_marks_back_to_review(make_session: Any) -> None:
    session = make_session("strong")
    mark = SessionMark.objects.get(session=session)
    assert mark.state == "proposed" and mark.review_flags == 0  # would be released as it is
    before = snapshot(mark)
    decisions = TargetDecision.objects.filter(mark=mark).count()
    proctor = ProctorFactory()

    event = report(session, proctor, "candidate", "A phone was on the desk throughout.")

    mark.refresh_from_db()
    assert mark.state == "needs_review" and mark.review_flags == 1
    assert snapshot(mark) == before  # levels, scores and the marker's result untouched
    assert TargetDecision.objects.filter(mark=mark).count() == decisions
    assert selectors.verify_marks(mark)  # the stored result still reproduces from its log
    record = PostMarkingIrregularity.objects.get(mark=mark)
    assert (record.event_id, record.seq) == (str(event.event_id), event.seq)
    assert (record.category, record.actor) == ("candidate", proctor_id(proctor))
    assert record.reason == "A phone was on the desk throughout."
    assert record.after_lock is False and record.cycle == 1
    assert record.report["route"] == "academic_integrity"
    assert record.report["afterCompletion"] is True
    assert record.report["targetKeys"] == [t["key"] for t in mark.result_json["targets"]]
    entry = MarkingAuditEntry.objects.get(mark=mark, action="irregularity_reported")
    assert entry.actor == proctor and entry.reason == record.reason
    assert entry.details["eventId"] == str(event.event_id)
    assert entry.details["afterLock"] is False and entry.details["marksChanged"] is False
    (shown,) = irregularities(mark)
    assert shown["afterMarking"] and not shown["afterLock"]
    assert shown["proctor"] == proctor and shown["categoryLabel"] == "Candidate"
    view = mark_view(mark)
    assert len(view.review_flags) == mark.review_flags
    assert all(any(i["seq"] == event.seq for i in t.irregularities) for t in view.targets)


def test_a_report_after_lock_is_recorded_and_changes_no_mark(make_session: Any) -> None:
    session = make_session("mixed")
    mark = SessionMark.objects.get(session=session)
    moderator = AuthorFactory()
    services.marks_lock(mark=mark, user=moderator, note="Moderated.")
    before = snapshot(mark)
    flags_before = mark.review_flags

    report(session, ProctorFactory(), "technical", "The recording dropped out repeatedly.")

    mark.refresh_from_db()
    assert mark.state == "locked" and mark.locked_by == moderator
    assert snapshot(mark) == before
    assert mark.review_flags == flags_before + 1
    record = PostMarkingIrregularity.objects.get(mark=mark)
    assert record.after_lock is True
    entry = MarkingAuditEntry.objects.get(mark=mark, action="irregularity_after_lock")
    assert entry.details["afterLock"] is True and entry.details["cycle"] == 1
    view = mark_view(mark)
    assert [i["seq"] for i in view.post_lock_irregularities] == [record.seq]
    # the way to change locked marks stays the appeal
    with pytest.raises(services.MarkingRefused):
        services.decision_override(
            mark=mark,
            target_key="tgt-complexity",
            level="excellent",
            rationale="Technical problem.",
            user=moderator,
        )
    services.appeal_open(mark=mark, user=moderator, reason="Irregularity reported after lock.")
    assert mark.state == "appealed"
    services.decision_override(
        mark=mark,
        target_key="tgt-complexity",
        level="excellent",
        rationale="Discounted the turns affected by the dropout.",
        user=moderator,
    )
    assert [e.action for e in MarkingAuditEntry.objects.filter(mark=mark)][-4:] == [
        "locked",
        "irregularity_after_lock",
        "appeal_opened",
        "override",
    ]


def test_the_same_event_twice_is_recorded_once(make_session: Any) -> None:
    session = make_session("strong")
    mark = SessionMark.objects.get(session=session)
    event = report(session, ProctorFactory(), "staff", "The invigilator spoke to the candidate.")
    mark.refresh_from_db()
    state = (mark.state, mark.review_flags, mark.updated_at)
    audit = MarkingAuditEntry.objects.filter(mark=mark).count()

    # the event re-delivered to the store (same eventId): stored once, nothing enqueued
    again = append_events(session=session, events=[wire_from_row(event)])
    assert again.events[0].duplicate
    # the task re-delivered (acks_late): a no-op
    assert irregularity_reported(str(session.pk), str(event.event_id)) == "duplicate"

    mark.refresh_from_db()
    assert (mark.state, mark.review_flags, mark.updated_at) == state
    assert PostMarkingIrregularity.objects.filter(mark=mark).count() == 1
    assert MarkingAuditEntry.objects.filter(mark=mark).count() == audit


def test_a_report_during_the_exam_is_in_the_marks_and_recorded_nowhere_else(
    version: Any, eager: None
) -> None:
    session, irregular = completed_session_with_report(
        version=version,
        candidate=CandidateFactory(),
        category="technical",
        reason="Audio dropped for a minute.",
    )
    mark = SessionMark.objects.get(session=session)
    (reported,) = mark.result_json["irregularities"]
    assert reported["eventId"] == irregular.eventId and reported["route"] == "technical"
    assert reported["affectedTurnIds"] and not reported["afterCompletion"]
    assert mark.state == "needs_review"  # MRK-I01, although every level is excellent
    assert {t["level"] for t in mark.result_json["targets"]} == {"excellent"}
    assert not PostMarkingIrregularity.objects.exists()
    assert irregularity_reported(str(session.pk), irregular.eventId) == "in_marks"
    view = mark_view(mark)
    marked_rows = [
        row["id"] for g in view.transcript_groups for row in g.rows if row["irregularity"]
    ]
    assert marked_rows == reported["affectedTurnIds"]


def test_before_marking_the_task_leaves_the_report_to_the_marker(eager: None) -> None:
    session = ExamSessionFactory()
    make = event_factory(session)
    proctor = ProctorFactory()
    stored = append_events(
        session=session,
        events=[
            make(node_entered()),
            make(
                p.ProctorActionTaken(
                    actor=proctor_id(proctor),
                    action="flag_irregularity",
                    category="environment",
                    reason="Fire alarm.",
                )
            ),
        ],
    )
    assert irregularity_reported(str(session.pk), stored.events[1].event_id) == "not_marked"
    assert irregularity_reported(str(session.pk), stored.events[0].event_id) == (
        "not_an_irregularity"
    )
    assert not PostMarkingIrregularity.objects.exists()


def test_the_hook_asks_once_per_new_report_and_only_after_commit(
    make_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session("strong")
    mark = SessionMark.objects.get(session=session)
    proctor = ProctorFactory()
    make = EventFactory(session_id=str(session.pk), source=EventSource.SYSTEM)

    def irregularity(reason: str) -> Any:
        return make(
            p.ProctorActionTaken(
                actor=proctor_id(proctor),
                action="flag_irregularity",
                category="staff",
                reason=reason,
            )
        )

    with transaction.atomic():
        append_events(session=session, events=[irregularity("Inside a transaction.")])
        assert not PostMarkingIrregularity.objects.exists()  # not before commit
    assert PostMarkingIrregularity.objects.filter(mark=mark).count() == 1

    def rolled_back() -> None:
        with transaction.atomic():
            append_events(session=session, events=[irregularity("Rolled back.")])
            raise RuntimeError("roll back")

    with pytest.raises(RuntimeError):
        rolled_back()
    assert PostMarkingIrregularity.objects.filter(mark=mark).count() == 1

    pause = make(p.ProctorActionTaken(actor=proctor_id(proctor), action="pause", reason="x"))
    first, second = irregularity("One."), irregularity("Two.")
    with held_relay() as relay:
        append_events(session=session, events=[pause, first, second])
        append_events(session=session, events=[first])  # a duplicate asks nothing
    asked = OutboxMessage.objects.filter(
        pk__in=relay.handed, topic="marking.irregularity"
    ).order_by("pk")
    assert [m.payload for m in asked] == [
        {"sessionId": str(session.pk), "eventId": first.eventId},
        {"sessionId": str(session.pk), "eventId": second.eventId},
    ]


def _in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # surfaced by the test's assertions
            out.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def _late_report(session: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """Store a report after marking without letting the hook run (the test delivers it)."""
    make = EventFactory(session_id=str(session.pk), source=EventSource.SYSTEM)
    event = make(
        p.ProctorActionTaken(
            actor=proctor_id(ProctorFactory()),
            action="flag_irregularity",
            category="candidate",
            reason="Someone whispered.",
        )
    )
    with held_relay():
        append_events(session=session, events=[event])
    return event.eventId


def test_concurrent_deliveries_of_one_report_record_it_once(
    make_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session("strong")
    event_id = _late_report(session, monkeypatch)
    barrier = threading.Barrier(3)

    def deliver() -> str:
        barrier.wait(timeout=10)
        return services.irregularity_record(session_id=session.pk, event_id=event_id).status

    runs = [_in_thread(deliver) for _ in range(3)]
    for thread, _ in runs:
        thread.join(timeout=30)
    statuses = sorted(out[0] for _, out in runs)
    assert statuses == ["duplicate", "duplicate", "recorded"]
    mark = SessionMark.objects.get(session=session)
    assert mark.review_flags == 1 and mark.state == "needs_review"
    assert PostMarkingIrregularity.objects.filter(mark=mark).count() == 1
    assert MarkingAuditEntry.objects.filter(mark=mark, action="irregularity_reported").count() == 1


def test_a_report_waits_for_a_lock_in_progress_and_then_leaves_the_locked_marks_alone(
    make_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session("mixed")
    event_id = _late_report(session, monkeypatch)
    mark = SessionMark.objects.get(session=session)
    before = snapshot(mark)
    with transaction.atomic():
        services.marks_lock(mark=mark, user=AuthorFactory(), note="Signed off.")
        # the mark row stays locked until this transaction commits
        thread, out = _in_thread(
            lambda: services.irregularity_record(session_id=session.pk, event_id=event_id)
        )
        time.sleep(0.5)
        assert thread.is_alive(), out  # waiting for the mark row
    thread.join(timeout=30)
    assert not isinstance(out[0], Exception), repr(out[0])
    assert out[0].status == "recorded_after_lock"
    mark.refresh_from_db()
    assert mark.state == "locked"
    assert snapshot(mark) == before
    assert PostMarkingIrregularity.objects.get(mark=mark).after_lock is True


def test_a_lock_waits_for_a_report_in_progress_without_deadlock(
    make_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session("mixed")
    event_id = _late_report(session, monkeypatch)
    mark = SessionMark.objects.get(session=session)
    moderator = AuthorFactory()
    with transaction.atomic():
        outcome = services.irregularity_record(session_id=session.pk, event_id=event_id)
        thread, out = _in_thread(lambda: services.marks_lock(mark=mark, user=moderator, note="."))
        time.sleep(0.5)
        assert thread.is_alive(), out  # the moderator's lock waits for the mark row
    thread.join(timeout=30)
    assert not isinstance(out[0], Exception), repr(out[0])
    assert outcome.status == "recorded"
    mark.refresh_from_db()
    assert mark.state == "locked"
    assert PostMarkingIrregularity.objects.get(mark=mark).after_lock is False


@pytest.mark.services("postgres", "redis")
@pytest.mark.celery
def test_a_real_worker_on_the_marking_queue_takes_a_late_report(version: Any) -> None:
    from tests.marking.exams import completed_session
    from tests.support.processes import celery_worker

    def wait_for(check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not check():
            time.sleep(0.2)

    with celery_worker(queues="marking"):
        session = completed_session(version=version, candidate=CandidateFactory(), profile="strong")
        wait_for(lambda: SessionMark.objects.filter(session=session).exists())
        assert SessionMark.objects.get(session=session).state == "proposed"
        report(session, ProctorFactory(), "environment", "Building works next door.")
        wait_for(lambda: PostMarkingIrregularity.objects.filter(mark__session=session).exists())
    mark = SessionMark.objects.get(session=session)
    assert mark.state == "needs_review" and mark.review_flags == 1
    assert PostMarkingIrregularity.objects.get(mark=mark).category == "environment"
