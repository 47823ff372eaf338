"""Commands and their canonical vocabulary, building events, replay, the schema export."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ioa.events import (
    ALWAYS_ALLOWED,
    CANONICAL_COMMANDS,
    CommandDecision,
    CommandType,
    CommandValidationError,
    EventFactory,
    ReplayOrderError,
    Uuid7Generator,
    acknowledgement_events,
    canonical_command,
    fold,
    replay_summary,
    uuid7_time_ms,
    validate_command,
    validate_event,
)
from ioa.events import payloads as p
from ioa.events.export import SCHEMA_PATH, render_json_schema
from tests.ioa.events.conftest import VALID_PAYLOADS, wire

# spec-notes §3: command envelope type -> canonical
SPEC_NOTES_TABLE = {
    "repeat_question": "repeat",
    "request_clarification": "clarification",
    "request_rephrase": "request_rephrase",
    "pause": "pause",
    "resume": "resume",
    "thinking_aloud": "thinking_aloud",
    "revise_earlier_answer": "revise_earlier_answer",
    "end_exam_requested": "finish",
    "raise_hand": "raise_hand",
    "challenge_premise": "challenge_premise",
    "report_audio_issue": "report_audio_issue",
    "emergency_stop": "emergency_stop",
    "signal_confidence": "signal_confidence",
}


def command(kind: str = "request_clarification", **payload: Any) -> dict[str, Any]:
    body = payload or {"nodeId": "q1", "text": "What is relaxing?"}
    return {
        "commandId": "cmd-clr-001",
        "sessionId": "s1",
        "timestamp": "2026-05-06T02:00:45.000Z",
        "source": "candidate",
        "type": kind,
        "schemaVersion": "1",
        "payload": {"type": kind, **body},
    }


def test_the_13_command_types_map_as_in_spec_notes() -> None:
    assert len(CommandType) == 13
    assert {k.value: v.value for k, v in CANONICAL_COMMANDS.items()} == SPEC_NOTES_TABLE


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("clarify", "clarification"),
        ("rephrase", "request_rephrase"),
        ("thinking_time", "thinking_aloud"),
        ("revise", "revise_earlier_answer"),
        ("finish", "finish"),
        ("end_exam_requested", "finish"),
        ("repeat_question", "repeat"),
        ("volume_up", "volume_up"),
        ("dance", None),
    ],
)
def test_canonical_command_accepts_every_spelling(name: str, canonical: str | None) -> None:
    assert canonical_command(name) == canonical


def test_welfare_commands_are_always_allowed() -> None:
    assert {c.value for c in ALWAYS_ALLOWED} == {
        "pause",
        "resume",
        "raise_hand",
        "report_audio_issue",
        "emergency_stop",
        "finish",
    }


def test_validate_command_fills_payload_type_and_reports_problems() -> None:
    raw = command()
    del raw["payload"]["type"]
    envelope = validate_command(raw)
    assert envelope.canonical == "clarification"
    assert envelope.node_id == "q1"
    with pytest.raises(CommandValidationError) as caught:
        validate_command(command("report_audio_issue", issueType="hum", severity="minor"))
    assert caught.value.problems[0][0] == "payload.issueType"
    with pytest.raises(CommandValidationError):
        validate_command(command("teleport"))


def _factory() -> EventFactory:
    ticks = itertools.count()
    start = datetime(2026, 5, 6, 2, tzinfo=UTC)
    return EventFactory(
        session_id="s1",
        clock=lambda: start + timedelta(milliseconds=next(ticks)),
        ids=Uuid7Generator(random_bytes=bytes),
    )


def test_an_accepted_command_is_acknowledged_then_its_consequences_follow() -> None:
    make = _factory()
    envelope = validate_command(command("pause", reason="thinking"))
    paused = make(p.ExamStateChanged(fromState="in_progress", toState="paused"))
    events = acknowledgement_events(
        envelope, CommandDecision(accepted=True, events=(paused,)), factory=make
    )
    assert [e.type for e in events] == ["candidate_command_received", "exam_state_changed"]
    ack = events[0].payload
    assert isinstance(ack, p.CandidateCommandReceived)
    assert (ack.command, ack.commandType, ack.accepted) == ("pause", "pause", True)
    assert {e.correlationId for e in events} == {"cmd-clr-001"}


def test_a_refused_command_yields_a_guardrail_with_the_reason() -> None:
    events = acknowledgement_events(
        validate_command(command()),
        CommandDecision(accepted=False, reason="clarification is not allowed here"),
        factory=_factory(),
    )
    assert [e.type for e in events] == ["candidate_command_received", "guardrail_triggered"]
    assert events[0].payload.rejectionReason == "clarification is not allowed here"  # type: ignore[union-attr]
    assert events[1].payload.guardrailType == "command_refused"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="reason"):
        CommandDecision(accepted=False)


def test_an_acknowledgement_from_the_decider_is_not_doubled() -> None:
    make = _factory()
    envelope = validate_command(command())
    own = make(
        p.CandidateCommandReceived(
            commandId="cmd-clr-001",
            command="clarification",
            commandType="request_clarification",
            accepted=True,
        )
    )
    events = acknowledgement_events(
        envelope, CommandDecision(accepted=True, events=(own,)), factory=make
    )
    assert events == [own.model_copy(update={"correlationId": "cmd-clr-001"})]


def test_event_factory_uses_the_injected_clock_for_time_and_id() -> None:
    event = _factory()(p.TimeWarning(scope="exam", remainingSec=60, remainingMs=60000))
    assert event.timestamp == "2026-05-06T02:00:00.000Z"
    assert (
        uuid7_time_ms(event.eventId) == int(datetime(2026, 5, 6, 2, tzinfo=UTC).timestamp()) * 1000
    )
    assert validate_event(event.to_wire()) == event
    assert "seq" not in event.to_wire()


def _log() -> list[dict[str, Any]]:
    order = [
        ("exam_state_changed", {"fromState": "ready", "toState": "in_progress"}),
        ("node_entered", VALID_PAYLOADS["node_entered"]),
        ("evidence_signal", VALID_PAYLOADS["evidence_signal"]),
        ("follow_up_used", VALID_PAYLOADS["follow_up_used"]),
        ("recovery_started", VALID_PAYLOADS["recovery_started"]),
        ("candidate_command_received", VALID_PAYLOADS["candidate_command_received"]),
        ("transcript_delta", VALID_PAYLOADS["transcript_delta"]),
        ("recovery_resolved", VALID_PAYLOADS["recovery_resolved"]),
        ("node_exited", VALID_PAYLOADS["node_exited"]),
        ("exam_completed", VALID_PAYLOADS["exam_completed"]),
    ]
    log, seq = [], 0
    for kind, payload in order:
        event = validate_event(wire(kind, payload)).to_wire()
        if kind != "transcript_delta":
            seq += 1
            event["seq"] = seq
        log.append(event)
    return log


def test_replay_rebuilds_the_session_summary() -> None:
    summary = replay_summary(_log())
    assert summary.last_seq == 9
    assert summary.state == "in_progress"
    assert summary.nodes_entered == ["q1"] and summary.current_node_id is None
    assert summary.evidence_signals == 1
    assert summary.follow_ups_by_node == {"q1": 1}
    assert summary.open_recoveries == {}
    assert summary.commands_accepted == 1
    assert summary.completed and summary.completion_reason == "all_nodes_visited"
    assert "transcript_delta" not in summary.event_counts  # live-only: not replayed


def test_replay_is_a_generic_fold_and_refuses_disorder() -> None:
    log = _log()
    types = fold(log, lambda acc, e: [*acc, e["type"]], [])
    assert types[0] == "exam_state_changed" and len(types) == 9
    with pytest.raises(ReplayOrderError):
        fold(list(reversed(log)), lambda acc, e: acc, None)


def test_committed_json_schema_equals_the_generated_one() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_json_schema(), (
        "docs/spec/events.schema.json is stale: run python -m ioa.events.export"
    )


def test_json_schema_carries_audiences_and_aliases() -> None:
    import json

    schema = json.loads(render_json_schema())
    assert schema["x-event-types"]["evidence_signal"]["candidateProjection"] is None
    assert schema["x-event-types"]["transcript_delta"]["liveOnly"] is True
    assert schema["x-aliases"]["session_completed"] == "exam_completed"
    assert "CommandEnvelope" in schema["$defs"] and "EventEnvelope" in schema["$defs"]


def test_the_protocol_chapter_documents_every_type_and_alias() -> None:
    from ioa.events import ALIASES, EventType

    text = (SCHEMA_PATH.parent / "event-protocol.md").read_text(encoding="utf-8")
    for name in [*(t.value for t in EventType), *ALIASES, *(c.value for c in CommandType)]:
        assert f"`{name}`" in text, name
