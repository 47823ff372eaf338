"""Builders of valid wire events for the protocol tests."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ioa.events import uuid7

SESSION = "sess-2026-05-06-001"


def wire(event_type: str, payload: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    """A received event as JSON: envelope fields default to valid values."""
    base: dict[str, Any] = {
        "eventId": str(uuid7()),
        "sessionId": SESSION,
        "timestamp": "2026-05-06T02:00:15.456Z",
        "source": "runtime_controller",
        "type": event_type,
        "schemaVersion": "1",
        "payload": {"type": event_type, **payload},
    }
    base.update(envelope)
    return base


PASSAGE = "We chose Dijkstra's algorithm instead of Bellman-Ford: every weight is positive."
"""A passage of a candidate's material (material_attached, passage_drawn)."""

VALID_PAYLOADS: dict[str, dict[str, Any]] = {
    "bot_ready": {
        "examId": "cs201",
        "examVersion": "3.2.0",
        "nodeCount": 8,
        "estimatedDurationSec": 900,
    },
    "node_entered": {
        "nodeId": "q1",
        "nodeKind": "question",
        "rubricItemIds": ["r1"],
        "maxFollowUps": 2,
        "timeBudgetSec": 120,
        "timeBudgetMs": 120000,
    },
    "node_exited": {"nodeId": "q1", "reason": "completed", "durationSec": 140, "followUpsUsed": 1},
    "transcript_delta": {
        "speaker": "candidate",
        "text": "So the",
        "isPartial": True,
        "stability": 0.72,
    },
    "transcript_final": {
        "turnId": "t1",
        "speaker": "candidate",
        "text": "Relax all edges.",
        "startTimeMs": 18200,
        "endTimeMs": 24500,
        "nodeId": "q1",
        "confidence": 0.91,
        "language": "en",
    },
    "examiner_utterance_started": {"utteranceId": "u1", "nodeId": "q1", "purpose": "follow_up"},
    "examiner_utterance_final": {
        "utteranceId": "u1",
        "nodeId": "q1",
        "text": "Why?",
        "purpose": "follow_up",
        "durationMs": 6500,
    },
    "candidate_command_received": {
        "commandId": "cmd-1",
        "command": "clarification",
        "commandType": "request_clarification",
        "accepted": True,
    },
    "evidence_signal": {
        "signalId": "s1",
        "nodeId": "q1",
        "turnIds": ["t1"],
        "targetIds": ["tgt"],
        "evidenceDimension": "knowledge_understanding",
        "signalKind": "positive",
        "description": "Greedy choice explained.",
        "confidence": 0.88,
        "sttConfidenceSummary": {"min": 0.91, "max": 0.91, "mean": 0.91, "turnCount": 1},
        "llmProposal": True,
    },
    "follow_up_used": {
        "nodeId": "q1",
        "followUpIndex": 1,
        "maxFollowUps": 2,
        "reason": "depth_probe",
        "triggerTurnId": "t1",
    },
    "transition_decision": {
        "fromNodeId": "q1",
        "toNodeId": "q2",
        "edgeId": "e1",
        "reason": "natural_completion",
    },
    "guardrail_triggered": {
        "guardrailId": "g1",
        "guardrailType": "max_follow_ups",
        "severity": "block",
        "description": "Limit reached.",
        "actionTaken": "forced_transition",
        "contextNodeId": "q1",
    },
    "recovery_started": {
        "recoveryId": "rec-1",
        "recoveryType": "silence",
        "nodeId": "q1",
        "triggerDescription": "15 s of silence.",
    },
    "recovery_resolved": {
        "recoveryId": "rec-1",
        "resolution": "candidate_resumed",
        "durationSec": 8,
    },
    "exam_completed": {
        "reason": "all_nodes_visited",
        "totalTurns": 20,
        "totalElapsedMs": 900000,
        "totalDurationSec": 900,
        "nodesVisited": ["q1"],
        "totalEvidenceSignals": 14,
        "totalFollowUps": 5,
        "guardrailTriggerCount": 1,
    },
    "hesitation_detected": {
        "nodeId": "q1",
        "turnId": "t4",
        "durationMs": 8500,
        "context": "mid_response",
        "followedByResponse": True,
    },
    "self_correction_detected": {
        "nodeId": "q1",
        "turnIds": ["t3", "t5"],
        "originalClaim": "Negative weights are fine.",
        "correctedClaim": "Use Bellman-Ford.",
        "confidence": 0.92,
    },
    "exam_state_changed": {"fromState": "ready", "toState": "in_progress"},
    "time_warning": {"scope": "exam", "remainingSec": 120, "remainingMs": 120000},
    "system_error": {
        "code": "bot_crashed",
        "message": "Pipeline died: KeyError",
        "component": "bot",
        "severity": "error",
        "userMessage": "A technical problem occurred.",
        "details": {"trace": "..."},
    },
    "misconception_detected": {
        "nodeId": "q1",
        "misconceptionId": "m1",
        "description": "Thinks Dijkstra handles negative weights.",
        "turnIds": ["t3"],
        "confidence": 0.8,
    },
    "proctor_instruction": {
        "instructionId": "i1",
        "proctorId": "7",
        "mode": "queued",
        "text": "Ask about complexity next.",
    },
    "heartbeat": {"lastSeq": 12, "intervalSec": 15},
    "usage_reported": {
        "component": "llm",
        "provider": "openai",
        "model": "gpt",
        "inputTokens": 1200,
        "outputTokens": 80,
    },
    "proctor_action": {
        "actor": "7",
        "action": "extend_time",
        "reason": "Fire alarm in the building.",
        "seconds": 120,
        "scope": "exam",
        "remainingSec": 420,
        "remainingMs": 420000,
        "nodeId": "q1",
    },
    "candidate_connection_changed": {"status": "connected", "reconnects": 2, "offlineMs": 7400},
    "result_released": {"actor": "12", "cycle": 1, "feedback": "levels", "finalScore": 0.75},
    "candidate_activity": {"activity": "composing", "state": "started", "nodeId": "warmup"},
    "recognition_check": {"nodeId": "q1", "turnIds": ["turn-004"]},
    "transcript_corrected": {
        "nodeId": "q1",
        "turnId": "turn-004",
        "correctionTurnId": "turn-005",
        "how": "typed",
        "originalText": "the cheapest node first",
    },
    "bot_handover": {"phase": "released", "reason": "worker_shutdown"},
    "transition_held": {
        "phase": "held",
        "nodeId": "q1",
        "edgeId": "e-dijkstra-done",
        "reason": "the answer ended on the reply pause",
    },
    "material_attached": {
        "materialId": "rep",
        "materialKind": "report",
        "language": "en",
        "cutterVersion": "ioa-cutter/1",
        "chars": 88,
        "textSha256": "0" * 64,
        "passages": [{"passageId": "rep:0", "index": 0, "start": 0, "end": 88, "cue": "choice"}],
        "passageTexts": {"rep:0": PASSAGE},
    },
    "passage_drawn": {
        "nodeId": "q1",
        "outcome": "drawn",
        "pick": "choice",
        "materialKind": "report",
        "drawKey": "passage|q1",
        "optionCount": 1,
        "materialId": "rep",
        "passageId": "rep:0",
        "cue": "choice",
        "text": PASSAGE,
    },
}


@pytest.fixture
def valid() -> dict[str, dict[str, Any]]:
    return copy.deepcopy(VALID_PAYLOADS)
