"""Audiences of every event type and what the candidate may see."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ioa.events import (
    CHAPTER_EVENT_TYPES,
    REGISTRY,
    Audience,
    EventType,
    project,
    resolve_type,
    validate_event,
)
from tests.ioa.events.conftest import VALID_PAYLOADS, wire

C, P, S, M = Audience.CANDIDATE, Audience.PROCTOR, Audience.PERSISTED, Audience.MARKING

# Chapter 05 "Persistence / UI / Marking Flags": (used by UI, persisted, used by marking).
CHAPTER_FLAGS = {
    "bot_ready": (True, True, False),
    "node_entered": (True, True, True),
    "node_exited": (True, True, True),
    "transcript_delta": (True, False, False),
    "transcript_final": (True, True, True),
    "examiner_utterance_started": (True, True, False),
    "examiner_utterance_final": (True, True, True),
    "candidate_command_received": (True, True, False),
    "evidence_signal": (True, True, True),
    "follow_up_used": (True, True, True),
    "transition_decision": (True, True, True),
    "guardrail_triggered": (True, True, True),
    "recovery_started": (True, True, False),
    "recovery_resolved": (True, True, False),
    "exam_completed": (True, True, True),
    "hesitation_detected": (True, True, True),
    "self_correction_detected": (True, True, True),
}

NEVER_FOR_CANDIDATES = {
    "evidence_signal",
    "misconception_detected",
    "guardrail_triggered",
    "transition_decision",
    "follow_up_used",
    "hesitation_detected",
    "self_correction_detected",
    "proctor_instruction",
    "usage_reported",
    "candidate_connection_changed",
    "result_released",
    "candidate_activity",
    "bot_handover",
    "transition_held",
    "material_attached",
    "passage_drawn",
}

# Payload keys that reveal evidence, rubric, misconceptions or guardrail internals.
SECRET_KEYS = {
    "rubricItemIds",
    "maxFollowUps",
    "followUpsUsed",
    "reason",  # of node_exited (e.g. follow_ups_exhausted)
    "confidence",
    "rejectionReason",
    "recoveryType",
    "triggerDescription",
    "details",
    "message",
    "ruleIds",
    "refusedEventIds",
    "nodesVisited",
    "totalEvidenceSignals",
    "totalFollowUps",
    "guardrailTriggerCount",
    "interactionMetrics",
}
SECRET_ALLOWED = {"exam_completed": {"reason"}, "exam_state_changed": {"reason"}}


def test_the_chapter_table_is_kept_with_ui_split_into_candidate_and_proctor() -> None:
    assert [t.value for t in CHAPTER_EVENT_TYPES] == list(CHAPTER_FLAGS)
    for name, (ui, persisted, marking) in CHAPTER_FLAGS.items():
        spec = REGISTRY[EventType(name)]
        assert spec.sent_to(P) is ui
        assert spec.persisted is persisted
        assert spec.marking is marking


def test_every_type_declares_its_audiences() -> None:
    assert set(REGISTRY) == set(EventType)
    live_only = {t.value for t, s in REGISTRY.items() if s.live_only}
    assert live_only == {"transcript_delta", "heartbeat"}


def test_the_candidate_never_receives_assessment_internals() -> None:
    for name in NEVER_FOR_CANDIDATES:
        assert not REGISTRY[EventType(name)].sent_to(C), name


@pytest.mark.parametrize("event_type", sorted(VALID_PAYLOADS))
def test_candidate_projection_keeps_no_secret_field(event_type: str) -> None:
    full = validate_event(wire(event_type, VALID_PAYLOADS[event_type])).to_wire()
    projected = project(full, C)
    if event_type in NEVER_FOR_CANDIDATES:
        assert projected is None
        return
    assert projected is not None
    leaked = (set(projected["payload"]) & SECRET_KEYS) - SECRET_ALLOWED.get(event_type, set())
    assert not leaked
    assert projected["payload"]["type"] == event_type
    assert {k: v for k, v in projected.items() if k != "payload"} == {
        k: v for k, v in full.items() if k != "payload"
    }


def test_candidate_sees_the_question_but_not_its_rubric() -> None:
    full = validate_event(wire("node_entered", VALID_PAYLOADS["node_entered"])).to_wire()
    assert project(full, C)["payload"] == {  # type: ignore[index]
        "type": "node_entered",
        "nodeId": "q1",
        "nodeKind": "question",
        "timeBudgetSec": 120,
        "timeBudgetMs": 120000,
    }
    assert project(full, P) == full
    assert project(full, M) == full


def test_projection_does_not_mutate_its_input() -> None:
    full = validate_event(wire("transcript_final", VALID_PAYLOADS["transcript_final"])).to_wire()
    before = repr(full)
    project(full, C)
    assert repr(full) == before


@given(st.sampled_from(sorted(VALID_PAYLOADS)), st.sampled_from(list(Audience)))
def test_projections_are_subsets_of_the_event(event_type: str, audience: Audience) -> None:
    full: dict[str, Any] = validate_event(wire(event_type, VALID_PAYLOADS[event_type])).to_wire()
    projected = project(full, audience)
    if projected is not None:
        assert projected["payload"].items() <= full["payload"].items()


def test_aliases_are_resolved_and_unknown_names_are_not() -> None:
    assert resolve_type("evidence_update", {}) == EventType.EVIDENCE_SIGNAL
    assert resolve_type("recovery_event", {"resolution": "re_prompted"}) == "recovery_resolved"
    assert resolve_type("recovery_event", {}) == "recovery_started"
    assert resolve_type("nonsense", {}) is None
