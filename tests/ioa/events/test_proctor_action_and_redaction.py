"""The fields the runtime used to quote in descriptions (intercepted texts, evidence excerpts and
rubric levels, recovery attempts, command details), the ``proctor_action`` type, and what of
them the candidate's projection keeps: nothing."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from ioa.events import (
    REGISTRY,
    Audience,
    CommandDecision,
    EventFactory,
    EventType,
    Uuid7Generator,
    acknowledgement_events,
    command_details,
    project,
    validate_command,
    validate_event,
)
from ioa.events import payloads as p
from ioa.events.export import build_json_schema
from tests.ioa.events.conftest import VALID_PAYLOADS, wire

C = Audience.CANDIDATE
SECRET = "SECRET-7f3a"
"""Planted in every sensitive field; must never appear in what the candidate receives."""

SENSITIVE = {
    "originalText",
    "replacementText",
    "excerpt",
    "rubricLevel",
    "scaffoldingIntensity",
    "scaffoldingEffective",
    "details",
    "rejectionReason",
    "triggerDescription",
    "actor",
    "attempt",
    "maxAttempts",
}
"""Never in a candidate's payload (``proctor_action.action`` is the neutral part: it stays)."""
FREE_TEXT_REASONS = {"exam_state_changed", "proctor_action"}
"""Types whose ``reason`` is free text (the candidate never gets it); other ``reason`` fields
are closed lists (``exam_completed.reason``: how the exam ended)."""

PROCTOR_ACTIONS = ["pause", "resume", "extend_time", "terminate", "skip_node", "flag_irregularity"]

# Every type with every optional field the candidate must not see filled in (SECRET where the
# field is text). Types not listed here use their plain valid payload.
FULL: dict[str, dict[str, Any]] = {
    "guardrail_triggered": {
        **VALID_PAYLOADS["guardrail_triggered"],
        "guardrailType": "persona_break",
        "actionTaken": "output_replaced",
        "originalText": f"As an AI I cannot say. {SECRET}",
        "replacementText": f"Please go on. {SECRET}",
    },
    "evidence_signal": {
        **VALID_PAYLOADS["evidence_signal"],
        "excerpt": f"relax all edges {SECRET}",
        "rubricLevel": f"excellent {SECRET}",
        "scaffoldingIntensity": 2,
        "scaffoldingEffective": True,
    },
    "candidate_command_received": {
        **VALID_PAYLOADS["candidate_command_received"],
        "accepted": False,
        "rejectionReason": SECRET,
        "origin": "envelope",
        "details": {"text": SECRET, "targetNodeId": "q1"},
    },
    "recovery_started": {
        **VALID_PAYLOADS["recovery_started"],
        "triggerDescription": SECRET,
        "attempt": 2,
        "maxAttempts": 3,
        "action": "gentle_reprompt",
    },
    "exam_state_changed": {
        "fromState": "in_progress",
        "toState": "paused",
        "reason": f"recovery_escalation:anxiety {SECRET}",
    },
    "system_error": {**VALID_PAYLOADS["system_error"], "details": {"trace": SECRET}},
}


def _proctor_action(action: str) -> dict[str, Any]:
    payload: dict[str, Any] = {"actor": "7", "action": action, "reason": SECRET, "nodeId": "q1"}
    if action == "extend_time":
        payload.update(seconds=90, scope="node", remainingSec=210.5, remainingMs=210500)
    return payload


def _samples() -> list[tuple[str, dict[str, Any]]]:
    samples = [(name, FULL.get(name, VALID_PAYLOADS[name])) for name in sorted(VALID_PAYLOADS)]
    samples += [("proctor_action", _proctor_action(action)) for action in PROCTOR_ACTIONS]
    return samples


def test_every_event_type_has_a_sample() -> None:
    assert {name for name, _ in _samples()} == {t.value for t in EventType}


@pytest.mark.parametrize(("event_type", "payload"), _samples())
def test_the_candidate_projection_never_carries_sensitive_fields(
    event_type: str, payload: dict[str, Any]
) -> None:
    full = validate_event(wire(event_type, copy.deepcopy(payload))).to_wire()
    projected = project(full, C)
    if projected is None:
        return
    keys = set(projected["payload"])
    assert not keys & SENSITIVE
    assert "originalText" not in keys and "replacementText" not in keys
    if event_type in FREE_TEXT_REASONS:
        assert "reason" not in keys
    assert SECRET not in json.dumps(projected)
    # The proctor (and the store, and marking when the type is theirs) get it all.
    assert project(full, Audience.PROCTOR) == full


@pytest.mark.parametrize("spec", list(REGISTRY.values()), ids=lambda s: s.event_type.value)
def test_no_type_lists_a_sensitive_field_for_the_candidate(spec: Any) -> None:
    """Structural: whatever a payload holds, the candidate's keys exclude the sensitive ones."""
    if C not in spec.audiences:
        return
    keys = (
        set(spec.payload_model.model_fields)
        if spec.candidate_fields is None
        else set(spec.candidate_fields)
    )
    assert not keys & SENSITIVE, spec.event_type
    if spec.event_type.value in FREE_TEXT_REASONS:
        assert "reason" not in keys


def test_guardrail_carries_original_and_replacement_text() -> None:
    event = validate_event(wire("guardrail_triggered", FULL["guardrail_triggered"]))
    assert isinstance(event.payload, p.GuardrailTriggered)
    assert event.payload.originalText.startswith("As an AI")  # type: ignore[union-attr]
    assert event.payload.replacementText.startswith("Please go on.")  # type: ignore[union-attr]
    # Empty replacement (nothing was said instead) is allowed; the fields stay optional.
    assert (
        p.GuardrailTriggered(
            guardrailId="g",
            guardrailType="blocked_action",
            severity="warning",
            description="refused",
            actionTaken="event_only",
            originalText="Let's move on.",
            replacementText="",
        ).replacementText
        == ""
    )
    assert validate_event(wire("guardrail_triggered", VALID_PAYLOADS["guardrail_triggered"]))


def test_evidence_fields_are_checked() -> None:
    base = VALID_PAYLOADS["evidence_signal"]
    for bad in (
        {"scaffoldingIntensity": 4},
        {"scaffoldingIntensity": True},
        {"scaffoldingEffective": 1},
        {"rubricLevel": ""},
        {"rubricLevel": "x" * 201},
        {"excerpt": ""},
    ):
        with pytest.raises(ValidationError):
            p.EvidenceSignal.model_validate({"type": "evidence_signal", **base, **bad})


def test_recovery_attempt_and_action_are_checked() -> None:
    base = {"type": "recovery_started", **VALID_PAYLOADS["recovery_started"]}
    ok = p.RecoveryStarted.model_validate({**base, "attempt": 1, "action": "calm_support"})
    assert ok.action == "calm_support"
    for bad in ({"attempt": 0}, {"maxAttempts": 0}, {"action": "shout"}):
        with pytest.raises(ValidationError):
            p.RecoveryStarted.model_validate({**base, **bad})


def test_proctor_action_extension_fields_belong_to_extend_time() -> None:
    assert p.ProctorActionTaken(actor="7", action="flag_irregularity", reason="Phone visible")
    with pytest.raises(ValidationError, match="seconds and scope"):
        p.ProctorActionTaken(actor="7", action="extend_time", seconds=60)
    with pytest.raises(ValidationError, match="extend_time only"):
        p.ProctorActionTaken(actor="7", action="pause", seconds=60, scope="exam")
    with pytest.raises(ValidationError, match="go together"):
        p.ProctorActionTaken(
            actor="7", action="extend_time", seconds=60, scope="exam", remainingMs=1000
        )
    with pytest.raises(ValidationError, match="must equal"):
        p.ProctorActionTaken(
            actor="7",
            action="extend_time",
            seconds=60,
            scope="exam",
            remainingSec=2,
            remainingMs=1000,
        )
    for bad in ({"seconds": 0}, {"seconds": -5}, {"scope": "total"}):
        with pytest.raises(ValidationError):
            p.ProctorActionTaken.model_validate(
                {"actor": "7", "action": "extend_time", "seconds": 60, "scope": "exam", **bad}
            )
    with pytest.raises(ValidationError):
        p.ProctorActionTaken(actor="7", action="dance")  # type: ignore[arg-type]


def test_extend_time_reaches_the_candidate_without_reason_or_actor() -> None:
    full = validate_event(wire("proctor_action", _proctor_action("extend_time"))).to_wire()
    assert full["payload"]["reason"] == SECRET and full["payload"]["actor"] == "7"
    projected = project(full, C)
    assert projected is not None
    assert projected["payload"] == {
        "type": "proctor_action",
        "action": "extend_time",
        "seconds": 90,
        "scope": "node",
        "remainingSec": 210.5,
        "remainingMs": 210500,
        "nodeId": "q1",
    }
    for audience in (Audience.PROCTOR, Audience.PERSISTED, Audience.MARKING):
        assert project(full, audience) == full


def test_an_irregularity_is_never_sent_to_the_candidate() -> None:
    full = validate_event(wire("proctor_action", _proctor_action("flag_irregularity"))).to_wire()
    assert project(full, C) is None
    assert project(full, Audience.PROCTOR) == full
    for action in PROCTOR_ACTIONS[:-1]:
        event = validate_event(wire("proctor_action", _proctor_action(action)))
        shown = project(event.to_wire(), C)
        assert shown is not None and shown["payload"]["action"] == action


def test_the_schema_documents_the_new_fields_and_the_candidate_condition() -> None:
    schema = build_json_schema()
    defs = schema["$defs"]
    assert {"originalText", "replacementText"} <= set(defs["GuardrailTriggered"]["properties"])
    assert {"excerpt", "rubricLevel", "scaffoldingIntensity", "scaffoldingEffective"} <= set(
        defs["EvidenceSignal"]["properties"]
    )
    assert {"attempt", "action"} <= set(defs["RecoveryStarted"]["properties"])
    assert "details" in defs["CandidateCommandReceived"]["properties"]
    entry = schema["x-event-types"]["proctor_action"]
    assert entry["payload"] == "#/$defs/ProctorActionTaken"
    assert entry["audiences"] == ["candidate", "marking", "persisted", "proctor"]
    assert "reason" not in entry["candidateProjection"]
    assert "flag_irregularity" not in entry["candidateOnlyWhen"]["action"]
    assert schema["x-event-types"]["exam_state_changed"]["candidateProjection"] == [
        "fromState",
        "toState",
    ]
    # The new fields are optional: logs stored before them stay valid.
    for name in ("GuardrailTriggered", "EvidenceSignal", "RecoveryStarted"):
        required = set(defs[name].get("required", []))
        assert not required & {"originalText", "excerpt", "attempt", "action"}


def test_a_stored_acknowledgement_carries_the_command_details() -> None:
    clock = iter(range(10))
    make = EventFactory(
        session_id="s1",
        source="runtime_controller",
        clock=lambda: datetime(2026, 5, 6, 2, tzinfo=UTC) + timedelta(milliseconds=next(clock)),
        ids=Uuid7Generator(random_bytes=bytes),
    )
    envelope = validate_command(
        {
            "commandId": "cmd-conf-1",
            "sessionId": "s1",
            "timestamp": "2026-05-06T02:00:45.000Z",
            "source": "candidate",
            "type": "signal_confidence",
            "schemaVersion": "1",
            "payload": {"nodeId": "q1", "confidenceLevel": "guessing"},
        }
    )
    assert command_details(envelope) == {"nodeId": "q1", "confidenceLevel": "guessing"}
    (ack,) = acknowledgement_events(envelope, CommandDecision(accepted=True), factory=make)
    assert isinstance(ack.payload, p.CandidateCommandReceived)
    assert ack.payload.details == {"nodeId": "q1", "confidenceLevel": "guessing"}
    projected = project(ack.to_wire(), C)
    assert projected is not None and "details" not in projected["payload"]
