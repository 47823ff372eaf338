"""The closed vocabularies of the package schema (our 02-schema chapter).

Every enum is a :class:`enum.StrEnum`, so members compare equal to their JSON spelling.
Frozensets next to the enums name the subsets the rules and the runtime rely on.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class NodeKind(StrEnum):
    """``nodes[].kind``: the ExamRuntimeNodeKind list of NOD-002 plus ``end``."""

    QUESTION = "question"
    SCENARIO = "scenario"
    TASK = "task"
    DISCUSSION = "discussion"
    WARMUP = "warmup"
    WRAPUP = "wrapup"
    BRANCH = "branch"
    IDENTITY_CHECK = "identity_check"
    END = "end"


QUESTION_LIKE_KINDS: Final = frozenset({NodeKind.QUESTION, NodeKind.SCENARIO})
"""Kinds the rules about "question nodes" apply to (NOD-Q*, NOD-011, POL-004, POL-R005,
PKG-012, FAIR-001/002): a scenario is a question posed through a scenario, gathers evidence
and is probed with follow-ups exactly like a question."""


class EndType(StrEnum):
    """``nodes[].endType`` of an end node (NOD-E001)."""

    NORMAL = "normal"
    TIMEOUT = "timeout"
    TERMINATED = "terminated"
    TECHNICAL_FAILURE = "technical_failure"


RUNTIME_ENTERED_END_TYPES: Final = frozenset(
    {EndType.TIMEOUT, EndType.TERMINATED, EndType.TECHNICAL_FAILURE}
)
"""End types the runtime enters on its own (time limit, stop, failure), not via transitions."""


class FollowUpStyle(StrEnum):
    """``followUpPolicy.followUpStyle`` (NOD-Q010)."""

    PROBING = "probing"
    SCAFFOLDING = "scaffolding"
    CLARIFYING = "clarifying"
    REDIRECTING = "redirecting"
    FREE = "free"


class ConditionType(StrEnum):
    """``transitions[].condition.type`` (TRN-003)."""

    ALWAYS = "always"
    EVIDENCE_SATISFIED = "evidence_satisfied"
    TURN_COUNT_REACHED = "turn_count_reached"
    TIME_ELAPSED = "time_elapsed"
    CANDIDATE_COMMAND = "candidate_command"
    POLICY_ESCALATION = "policy_escalation"


EVIDENCE_SUFFICIENT_ALIAS: Final = "evidence_sufficient"
"""The deprecated spelling of ``evidence_satisfied`` used by TRN-005 (with ``requiredEvidence``)."""


class SignalKind(StrEnum):
    """``signalKind`` of an evidence signal (EVD-008): the eight kinds of the event protocol."""

    POSITIVE = "positive"
    PARTIAL = "partial"
    ABSENT = "absent"
    MISCONCEPTION = "misconception"
    FLAWED_REASONING = "flawed_reasoning"
    PROCESS_POSITIVE = "process_positive"
    PROCESS_NEGATIVE = "process_negative"
    SELF_CORRECTION = "self_correction"


class EvidenceDimension(StrEnum):
    """``evidenceTargets[].dimension``: the ``evidenceDimension`` of the event protocol
    (Joughin 1998 content types). A closed enum so marking can aggregate per dimension."""

    KNOWLEDGE_UNDERSTANDING = "knowledge_understanding"
    APPLIED_PROBLEM_SOLVING = "applied_problem_solving"
    INTERPERSONAL_COMPETENCE = "interpersonal_competence"
    INTRAPERSONAL_QUALITY = "intrapersonal_quality"
    METACOGNITIVE = "metacognitive"


class RubricLevelName(StrEnum):
    """The levels of a ``rubricDescriptor`` (EVD-006)."""

    EXCELLENT = "excellent"
    SATISFACTORY = "satisfactory"
    PARTIAL = "partial"
    ABSENT = "absent"


class RecoveryScenario(StrEnum):
    """``recoveryHandlers[].scenario``: the POL-R001 list plus ``stt_low_confidence`` (POL-R005)."""

    SILENCE = "silence"
    UNCLEAR_ANSWER = "unclear_answer"
    OFF_TOPIC = "off_topic"
    ANXIETY = "anxiety"
    INTERRUPTION = "interruption"
    NETWORK_ISSUE = "network_issue"
    REPETITION_LOOP = "repetition_loop"
    STT_LOW_CONFIDENCE = "stt_low_confidence"


class RecoveryAction(StrEnum):
    """``recoveryHandlers[].action``: what the examiner does on each attempt."""

    GENTLE_REPROMPT = "gentle_reprompt"
    REPHRASE = "rephrase"
    CALM_SUPPORT = "calm_support"
    PAUSE_TIMER = "pause_timer"
    TECHNICAL_RECOVERY = "technical_recovery"


class RecoveryEscalation(StrEnum):
    """``recoveryHandlers[].escalation`` once ``maxAttempts`` is exhausted (POL-R002)."""

    RETRY = "retry"
    REPHRASE = "rephrase"
    SKIP_NODE = "skip_node"
    PAUSE_SESSION = "pause_session"
    TERMINATE = "terminate"


SILENCE_ESCALATIONS: Final = frozenset(
    {RecoveryEscalation.SKIP_NODE, RecoveryEscalation.PAUSE_SESSION, RecoveryEscalation.TERMINATE}
)
"""Escalations that end a silence loop (POL-R003)."""


class CandidateCommandType(StrEnum):
    """Every canonical candidate command (spec-notes §3 "canonical" column).

    POL-002's list (repeat, clarification, request_rephrase, pause, raise_hand, skip,
    volume_up, volume_down, language_switch, thinking_aloud) is a subset.
    """

    REPEAT = "repeat"
    CLARIFICATION = "clarification"
    REQUEST_REPHRASE = "request_rephrase"
    SLOW_DOWN = "slow_down"
    PAUSE = "pause"
    RESUME = "resume"
    THINKING_ALOUD = "thinking_aloud"
    HELP = "help"
    SKIP = "skip"
    REVISE_EARLIER_ANSWER = "revise_earlier_answer"
    FINISH = "finish"
    RAISE_HAND = "raise_hand"
    CHALLENGE_PREMISE = "challenge_premise"
    REPORT_AUDIO_ISSUE = "report_audio_issue"
    EMERGENCY_STOP = "emergency_stop"
    SIGNAL_CONFIDENCE = "signal_confidence"
    VOLUME_UP = "volume_up"
    VOLUME_DOWN = "volume_down"
    LANGUAGE_SWITCH = "language_switch"


ALWAYS_ALLOWED_COMMANDS: Final = frozenset(
    {
        CandidateCommandType.PAUSE,
        CandidateCommandType.RESUME,
        CandidateCommandType.RAISE_HAND,
        CandidateCommandType.REPORT_AUDIO_ISSUE,
        CandidateCommandType.EMERGENCY_STOP,
        CandidateCommandType.FINISH,
    }
)
"""Welfare and safety commands the runtime always accepts, whatever the node policy says."""

MINIMUM_QUESTION_COMMANDS: Final = (
    CandidateCommandType.REPEAT,
    CandidateCommandType.CLARIFICATION,
    CandidateCommandType.PAUSE,
)
"""The commands NOD-Q011 expects on every question node (Fenton 2025)."""


class OnViolation(StrEnum):
    """``candidateCommands.forbidden[].onViolation``: how a refused command is answered.

    Either way the runtime emits ``candidate_command_received`` (not accepted) and
    ``guardrail_triggered`` with the reason.
    """

    REFUSE_POLITELY = "refuse_politely"
    """Say that the command is not available here, then continue."""
    REDIRECT_TO_QUESTION = "redirect_to_question"
    """Acknowledge briefly and steer back to the current question."""


class StructureLevel(StrEnum):
    """``metadata.structureLevel``: Joughin's (1998) closed-open continuum (PKG-012)."""

    CLOSED = "closed"
    SEMI_STRUCTURED = "semi-structured"
    OPEN = "open"


class ContextStrategy(StrEnum):
    """``contextPolicy.strategy``: what the LLM sees when the node is entered."""

    RESET = "reset"
    APPEND = "append"
    RESET_WITH_SUMMARY = "reset_with_summary"


class QuestionSelection(StrEnum):
    """``questionPools[].selection``: how the runtime picks from a pool (seeded RNG)."""

    RANDOM_ONE = "random_one"
