"""The command service: dedup within five minutes, at least one event per command."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ioa.events import CommandDecision, CommandEnvelope, EventFactory
from ioa.events import payloads as p
from sessions.commands import DEDUP_WINDOW, command_handle
from sessions.event_store import SessionNotFound
from sessions.models import ProcessedCommand
from tests.sessions.factories import ExamSessionFactory, evidence_signal

pytestmark = pytest.mark.django_db


def command(session: Any, kind: str = "pause", command_id: str = "cmd-1", **payload: Any) -> dict:
    return {
        "commandId": command_id,
        "sessionId": str(session.pk),
        "timestamp": "2026-05-06T02:01:00.000Z",
        "source": "candidate",
        "type": kind,
        "schemaVersion": "1",
        "payload": {"type": kind, **payload},
    }


class Decider:
    """Records calls; answers with a canned decision."""

    def __init__(self, decision: CommandDecision | Exception | None = None) -> None:
        self.calls: list[CommandEnvelope] = []
        self.decision = decision

    def __call__(self, envelope: CommandEnvelope) -> CommandDecision:
        self.calls.append(envelope)
        if isinstance(self.decision, Exception):
            raise self.decision
        return self.decision or CommandDecision(accepted=True)


def types(session: Any) -> list[str]:
    return list(session.events.order_by("seq").values_list("type", flat=True))


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 5, 6, 2, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_an_accepted_command_stores_its_acknowledgement_and_consequences() -> None:
    session = ExamSessionFactory()
    make = EventFactory(session_id=str(session.pk))
    paused = make(p.ExamStateChanged(fromState="in_progress", toState="paused"))
    decide = Decider(CommandDecision(accepted=True, events=(paused,)))
    outcome = command_handle(session=session, command=command(session), decide=decide)
    assert outcome.accepted and not outcome.duplicate
    assert types(session) == ["candidate_command_received", "exam_state_changed"]
    ack = session.events.get(seq=1)
    assert ack.payload["command"] == "pause" and ack.payload["accepted"] is True
    assert ack.correlation_id == "cmd-1"
    record = ProcessedCommand.objects.get(session=session, command_id="cmd-1")
    assert record.outcome == "accepted" and record.event_ids == [e.event_id for e in outcome.events]


def test_a_duplicate_within_five_minutes_is_a_no_op() -> None:
    session, clock, decide = ExamSessionFactory(), Clock(), Decider()
    first = command_handle(session=session, command=command(session), decide=decide, now=clock)
    clock.now += DEDUP_WINDOW - timedelta(seconds=1)
    again = command_handle(session=session, command=command(session), decide=decide, now=clock)
    assert again.duplicate and again.outcome == first.outcome and again.events == ()
    assert len(decide.calls) == 1
    assert types(session) == ["candidate_command_received"]


def test_a_command_id_reused_after_the_window_is_refused_with_an_event() -> None:
    session, clock, decide = ExamSessionFactory(), Clock(), Decider()
    command_handle(session=session, command=command(session), decide=decide, now=clock)
    clock.now += DEDUP_WINDOW + timedelta(seconds=1)
    late = command_handle(session=session, command=command(session), decide=decide, now=clock)
    assert late.outcome == "refused" and "replay" in late.reason
    assert len(decide.calls) == 1
    assert types(session) == [
        "candidate_command_received",
        "candidate_command_received",
        "guardrail_triggered",
    ]


def test_a_refused_command_yields_the_reason_and_a_guardrail() -> None:
    session = ExamSessionFactory()
    decide = Decider(CommandDecision(accepted=False, reason="not available on this question"))
    outcome = command_handle(
        session=session,
        command=command(session, "request_clarification", nodeId="q1"),
        decide=decide,
    )
    assert outcome.outcome == "refused"
    ack, guard = session.events.order_by("seq")
    assert ack.payload["rejectionReason"] == "not available on this question"
    assert guard.payload["guardrailType"] == "command_refused"
    assert guard.payload["contextNodeId"] == "q1"


def test_a_failing_decider_still_leaves_events_and_a_record() -> None:
    session = ExamSessionFactory()
    outcome = command_handle(
        session=session, command=command(session), decide=Decider(KeyError("node"))
    )
    assert outcome.outcome == "failed"
    assert types(session) == ["candidate_command_received", "guardrail_triggered", "system_error"]
    assert ProcessedCommand.objects.get(session=session).outcome == "failed"


def test_a_decider_returning_invalid_events_is_recorded_as_failed() -> None:
    session = ExamSessionFactory()
    make = EventFactory(session_id=str(session.pk))
    decide = Decider(CommandDecision(accepted=True, events=(make(evidence_signal("q7")),)))
    outcome = command_handle(session=session, command=command(session), decide=decide)
    assert outcome.outcome == "failed"
    assert "evidence_signal" not in types(session)
    assert types(session)[0] == "candidate_command_received"


def test_a_malformed_command_of_a_known_type_is_acknowledged_as_refused() -> None:
    session = ExamSessionFactory()
    bad = command(session, "report_audio_issue", issueType="hum", severity="minor")
    outcome = command_handle(session=session, command=bad, decide=Decider())
    assert outcome.outcome == "invalid"
    ack = session.events.get()
    assert ack.type == "candidate_command_received"
    assert ack.payload["accepted"] is False and "issueType" in ack.payload["rejectionReason"]
    # and it is deduplicated like any other
    assert command_handle(session=session, command=bad, decide=Decider()).duplicate


def test_an_unknown_command_type_leaves_a_system_error() -> None:
    session = ExamSessionFactory()
    outcome = command_handle(
        session=session, command=command(session, "teleport"), decide=Decider()
    )
    assert outcome.outcome == "invalid"
    assert types(session) == ["system_error"]


def test_a_command_for_another_session_is_refused() -> None:
    session, other = ExamSessionFactory(), ExamSessionFactory()
    outcome = command_handle(session=session, command=command(other), decide=Decider())
    assert outcome.outcome == "invalid" and "another session" in outcome.reason
    assert not other.events.exists()


def test_unknown_sessions_raise() -> None:
    ghost = "01890a5d-ac96-774b-bcce-b302099a8057"
    with pytest.raises(SessionNotFound):
        command_handle(
            session=ghost, command=command(ExamSessionFactory.build(pk=ghost)), decide=Decider()
        )
