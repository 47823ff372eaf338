"""The closed vocabularies of the event protocol (chapter 05 + spec-notes §2-§4)."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

SCHEMA_VERSION: Final = "1"
"""``schemaVersion`` of every envelope this code writes and accepts (EVT-011)."""


class EventType(StrEnum):
    """Canonical event types: the chapter's 17, then the project's extensions."""

    # chapter 05 §3
    BOT_READY = "bot_ready"
    NODE_ENTERED = "node_entered"
    NODE_EXITED = "node_exited"
    TRANSCRIPT_DELTA = "transcript_delta"
    TRANSCRIPT_FINAL = "transcript_final"
    EXAMINER_UTTERANCE_STARTED = "examiner_utterance_started"
    EXAMINER_UTTERANCE_FINAL = "examiner_utterance_final"
    CANDIDATE_COMMAND_RECEIVED = "candidate_command_received"
    EVIDENCE_SIGNAL = "evidence_signal"
    FOLLOW_UP_USED = "follow_up_used"
    TRANSITION_DECISION = "transition_decision"
    GUARDRAIL_TRIGGERED = "guardrail_triggered"
    RECOVERY_STARTED = "recovery_started"
    RECOVERY_RESOLVED = "recovery_resolved"
    EXAM_COMPLETED = "exam_completed"
    HESITATION_DETECTED = "hesitation_detected"
    SELF_CORRECTION_DETECTED = "self_correction_detected"
    # spec-notes §4 extensions
    EXAM_STATE_CHANGED = "exam_state_changed"
    TIME_WARNING = "time_warning"
    SYSTEM_ERROR = "system_error"
    MISCONCEPTION_DETECTED = "misconception_detected"
    PROCTOR_INSTRUCTION = "proctor_instruction"
    # project extensions (docs/spec/event-protocol.md §5)
    HEARTBEAT = "heartbeat"
    USAGE_REPORTED = "usage_reported"
    PROCTOR_ACTION = "proctor_action"
    CANDIDATE_CONNECTION_CHANGED = "candidate_connection_changed"
    RESULT_RELEASED = "result_released"
    CANDIDATE_ACTIVITY = "candidate_activity"
    RECOGNITION_CHECK = "recognition_check"
    TRANSCRIPT_CORRECTED = "transcript_corrected"
    BOT_HANDOVER = "bot_handover"
    TRANSITION_HELD = "transition_held"
    MATERIAL_ATTACHED = "material_attached"
    PASSAGE_DRAWN = "passage_drawn"


CHAPTER_EVENT_TYPES: Final = tuple(EventType)[:17]
"""The 17 types of chapter 05, in the chapter's order."""


class EventSource(StrEnum):
    """``source`` of an event envelope."""

    BOT = "bot"
    RUNTIME_CONTROLLER = "runtime_controller"
    FRONTEND = "frontend"
    SYSTEM = "system"


class Audience(StrEnum):
    """Who consumes an event type (chapter 05 "Persistence / UI / Marking Flags").

    The chapter's single "used by UI" flag is split into the candidate's exam room and the
    proctor's dashboard; the candidate gets a redacted projection or nothing (spec-notes §4).
    """

    CANDIDATE = "candidate"
    PROCTOR = "proctor"
    PERSISTED = "persisted"
    MARKING = "marking"


LIVE_AUDIENCES: Final = (Audience.CANDIDATE, Audience.PROCTOR)
"""The audiences that receive events over WebSockets."""


class CommandType(StrEnum):
    """``type`` of a command envelope: the 13 commands of chapter 05 §5."""

    REPEAT_QUESTION = "repeat_question"
    REQUEST_CLARIFICATION = "request_clarification"
    REQUEST_REPHRASE = "request_rephrase"
    PAUSE = "pause"
    RESUME = "resume"
    THINKING_ALOUD = "thinking_aloud"
    RAISE_HAND = "raise_hand"
    CHALLENGE_PREMISE = "challenge_premise"
    REVISE_EARLIER_ANSWER = "revise_earlier_answer"
    REPORT_AUDIO_ISSUE = "report_audio_issue"
    END_EXAM_REQUESTED = "end_exam_requested"
    EMERGENCY_STOP = "emergency_stop"
    SIGNAL_CONFIDENCE = "signal_confidence"


class CommandSource(StrEnum):
    """``source`` of a command envelope."""

    CANDIDATE = "candidate"
    PROCTOR = "proctor"
    SYSTEM = "system"
    FRONTEND = "frontend"


class ExamState(StrEnum):
    """The exam states of spec-notes §2:
    ``scheduled → scaffolding → ready → in_progress ⇄ paused → completed | aborted | expired``."""

    SCHEDULED = "scheduled"
    SCAFFOLDING = "scaffolding"
    READY = "ready"
    IN_PROGRESS = "in_progress"
    PAUSED = "paused"
    COMPLETED = "completed"
    ABORTED = "aborted"
    EXPIRED = "expired"


TERMINAL_STATES: Final = frozenset({ExamState.COMPLETED, ExamState.ABORTED, ExamState.EXPIRED})
"""States a session never leaves."""

EXAM_STATE_TRANSITIONS: Final[dict[ExamState, frozenset[ExamState]]] = {
    ExamState.SCHEDULED: frozenset({ExamState.SCAFFOLDING, ExamState.ABORTED, ExamState.EXPIRED}),
    ExamState.SCAFFOLDING: frozenset({ExamState.READY, ExamState.ABORTED, ExamState.EXPIRED}),
    ExamState.READY: frozenset({ExamState.IN_PROGRESS, ExamState.ABORTED, ExamState.EXPIRED}),
    ExamState.IN_PROGRESS: frozenset(
        {ExamState.PAUSED, ExamState.COMPLETED, ExamState.ABORTED, ExamState.EXPIRED}
    ),
    ExamState.PAUSED: frozenset(
        {ExamState.IN_PROGRESS, ExamState.COMPLETED, ExamState.ABORTED, ExamState.EXPIRED}
    ),
    ExamState.COMPLETED: frozenset(),
    ExamState.ABORTED: frozenset(),
    ExamState.EXPIRED: frozenset(),
}
"""Allowed ``exam_state_changed`` edges (``fromState`` → ``toState``)."""
