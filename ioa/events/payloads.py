"""Payload models of every event type (chapter 05 §4 plus the extensions).

Every payload is a strict pydantic model that fails closed (unknown fields are errors) and
carries its ``type`` as a literal discriminator, defaulted so callers need not repeat it::

    NodeEntered(nodeId="q1", nodeKind="question", rubricItemIds=[], maxFollowUps=2,
                timeBudgetSec=120, timeBudgetMs=120000)

Field names are the wire names (camelCase), verbatim from the chapter. Optional fields default
to ``None`` and are left out of the wire form when unset.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, model_validator

from ioa.events.types import EXAM_STATE_TRANSITIONS, CommandType, ExamState
from ioa.schema.enums import (
    CandidateCommandType,
    EvidenceDimension,
    NodeKind,
    RecoveryAction,
    SignalKind,
)

Lax = Strict(False)
"""Marker for enum fields: accept the JSON spelling (a string) in Python mode too."""


def _no_nul(value: str) -> str:
    """Strings may not contain NUL (Postgres ``jsonb`` cannot store it)."""
    if "\x00" in value:
        raise ValueError("must not contain the NUL character")
    return value


def _positive_zero(value: float) -> float:
    """``-0.0`` becomes ``0.0``: JSON stores keep no negative zero, and the hash chain must
    survive a round trip through the database."""
    return 0.0 if value == 0 else value


def _clean_json(value: dict[str, Any]) -> dict[str, Any]:
    """Free-form JSON (``details``): no NUL in strings, no ``-0.0``."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        children: list[object]
        if isinstance(item, dict):
            for key in item:
                _no_nul(key)
            children = list(item.values())
            for key, child in item.items():
                if isinstance(child, float) and child == 0:
                    item[key] = 0.0
        elif isinstance(item, list):
            children = list(item)
            for index, child in enumerate(item):
                if isinstance(child, float) and child == 0:
                    item[index] = 0.0
        elif isinstance(item, str):
            _no_nul(item)
            continue
        else:
            continue
        stack.extend(children)
    return value


Id = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_no_nul)]
"""An identifier: node, turn, utterance, signal, recovery ids (non-empty, at most 200 chars)."""

Text = Annotated[str, Field(min_length=1, max_length=20_000), AfterValidator(_no_nul)]
"""Human-readable text (non-empty)."""

AnyText = Annotated[str, Field(max_length=20_000), AfterValidator(_no_nul)]
"""Text that may be empty (a partial transcript, a silent utterance)."""

Label = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_no_nul)]
"""A short human-readable label (a rubric level name)."""

Unit = (
    Annotated[int, Field(ge=0, le=1)]
    | Annotated[float, Field(ge=0.0, le=1.0), AfterValidator(_positive_zero)]
)
"""A confidence or score in [0, 1]; integers stay integers on the wire."""

Count = Annotated[int, Field(ge=0)]
"""A non-negative integer (counts, durations in ms)."""

Ordinal = Annotated[int, Field(ge=1)]
"""A positive integer (an attempt number, a maximum of attempts)."""

NonNegative = (
    Annotated[int, Field(ge=0)]
    | Annotated[float, Field(ge=0.0, le=1e15), AfterValidator(_positive_zero)]
)
"""A non-negative number (durations in seconds, averages); integers stay integers. Floats stay
below 1e15 so they survive a round trip through Postgres ``jsonb`` digit for digit."""

Positive = Annotated[int, Field(gt=0)] | Annotated[float, Field(gt=0.0, le=1e15)]
"""A positive number (seconds added to a time budget); integers stay integers."""

JsonObject = Annotated[dict[str, Any], AfterValidator(_clean_json)]
"""A free-form JSON object."""

Speaker = Literal["candidate", "examiner"]
UtterancePurpose = Literal["question", "follow_up", "prompt", "bridge", "recovery", "closing"]


class Payload(BaseModel):
    """Base of every payload: strict, closed, no NaN/infinity, immutable."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        allow_inf_nan=False,
        frozen=True,
        use_attribute_docstrings=True,
    )


# --- chapter 05 §4 ------------------------------------------------------------------------------


class BotReady(Payload):
    """§4.1 The bot loaded the exam, joined the audio channel and is listening."""

    type: Literal["bot_ready"] = "bot_ready"
    examId: Id
    examVersion: Id
    nodeCount: Count
    estimatedDurationSec: NonNegative
    inputMode: Literal["voice", "text"] | None = None
    """How the candidate answers (project extension): ``text`` gives the silence recovery its
    longer text-mode window (our 03 chapter §6). Absent: voice."""


class NodeEntered(Payload):
    """§4.2 The runtime moved the session into a node (EVT-004: nodeId, nodeKind, timeBudgetMs).

    ``timeBudgetSec`` and ``timeBudgetMs`` carry the same budget (spec-notes §1); ``0`` means
    the node has no budget of its own (end nodes, the silent boot node).
    """

    type: Literal["node_entered"] = "node_entered"
    nodeId: Id
    nodeKind: Annotated[NodeKind, Lax]
    rubricItemIds: list[Id]
    maxFollowUps: Count
    timeBudgetSec: NonNegative
    timeBudgetMs: Count

    @model_validator(mode="after")
    def _budgets_agree(self) -> Self:
        if round(self.timeBudgetSec * 1000) != self.timeBudgetMs:
            raise ValueError(
                f"timeBudgetMs ({self.timeBudgetMs}) must equal timeBudgetSec * 1000 "
                f"({self.timeBudgetSec})"
            )
        return self


class NodeExited(Payload):
    """§4.3 The session left a node (EVT-006: nodeId, reason)."""

    type: Literal["node_exited"] = "node_exited"
    nodeId: Id
    reason: Literal[
        "completed",
        "time_exhausted",
        "follow_ups_exhausted",
        "candidate_skip",
        "candidate_skip_with_return",
        "forced_transition",
    ]
    durationSec: NonNegative
    followUpsUsed: Count


class TranscriptDelta(Payload):
    """§4.4 A streaming STT partial: live only, never stored."""

    type: Literal["transcript_delta"] = "transcript_delta"
    speaker: Speaker
    text: AnyText
    isPartial: Literal[True] = True
    stability: Unit


class TranscriptFinal(Payload):
    """§4.5 The canonical record of one utterance (EVT-008: speaker, text, turnId, nodeId,
    confidence)."""

    type: Literal["transcript_final"] = "transcript_final"
    turnId: Id
    speaker: Speaker
    text: AnyText
    startTimeMs: Count
    endTimeMs: Count
    nodeId: Id
    confidence: Unit
    language: Annotated[str, Field(pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")]

    @model_validator(mode="after")
    def _ordered_times(self) -> Self:
        if self.endTimeMs < self.startTimeMs:
            raise ValueError("endTimeMs must not be before startTimeMs")
        return self


class ExaminerUtteranceStarted(Payload):
    """§4.6 The examiner started speaking. ``atMs`` (ms since the session opened): when its
    first audio played (voice) or its text went out, which the event's own time may trail by
    the controller's queue on a loaded machine; absent when the bot did not say."""

    type: Literal["examiner_utterance_started"] = "examiner_utterance_started"
    utteranceId: Id
    nodeId: Id
    purpose: UtterancePurpose
    atMs: Count | None = None


class ExaminerUtteranceFinal(Payload):
    """§4.7 What the examiner actually said (after output filters).

    ``text`` is the whole validated utterance; ``durationMs`` how long its audio played. A
    barge-in that cut it short (voice) sets ``interrupted``, ``interruptedAtMs`` (when the
    examiner's audio stopped, in ms since the session opened) and ``spokenText``: the part of
    ``text`` the candidate heard before that, from the TTS timing (docs/voice.md)."""

    type: Literal["examiner_utterance_final"] = "examiner_utterance_final"
    utteranceId: Id
    nodeId: Id
    text: AnyText
    purpose: UtterancePurpose
    durationMs: Count
    interrupted: bool | None = None
    interruptedAtMs: Count | None = None
    spokenText: AnyText | None = None


class CandidateCommandReceived(Payload):
    """§4.8 A candidate command arrived, accepted or not (EVT-007: ``command`` is a
    CandidateCommandType).

    ``command`` is the canonical command (spec-notes §3); ``commandType`` is the spelling of
    its source (the command envelope type, or the LLM/classifier name). ``commandId`` is the
    envelope's id; the runtime mints one for LLM or classifier detections.
    """

    type: Literal["candidate_command_received"] = "candidate_command_received"
    commandId: Id
    command: Annotated[CandidateCommandType, Lax]
    commandType: Id
    accepted: bool
    rejectionReason: Text | None = None
    origin: Literal["envelope", "llm", "classifier"] | None = None
    """Where the command came from (spec-notes §3: buttons, the LLM, the safety-net classifier)."""
    details: JsonObject | None = None
    """What the command said beyond its type: the command payload's fields (the
    ``signal_confidence`` level, the ``revise_earlier_answer`` target as resolved, the audio
    issue...). Never sent to the candidate."""

    @model_validator(mode="after")
    def _reason_when_refused(self) -> Self:
        if not self.accepted and not self.rejectionReason:
            raise ValueError("a refused command needs a rejectionReason")
        return self


class SttConfidenceSummary(Payload):
    """STT confidence of the transcript turns a signal rests on (EVD-010)."""

    min: Unit
    max: Unit
    mean: Unit
    turnCount: Count


class EvidenceSignal(Payload):
    """§4.9 Evidence for one or more targets, approved by the runtime (EVT-005: signalId,
    nodeId, signalKind)."""

    type: Literal["evidence_signal"] = "evidence_signal"
    signalId: Id
    nodeId: Id
    turnIds: list[Id]
    targetIds: list[Id]
    evidenceDimension: Annotated[EvidenceDimension, Lax]
    signalKind: Annotated[SignalKind, Lax]
    description: Text
    confidence: Unit
    sttConfidenceSummary: SttConfidenceSummary
    llmProposal: bool
    excerpt: Text | None = None
    """The candidate's words the signal quotes (chapter 07 §3: at most 200 characters as the
    runtime records it)."""
    rubricLevel: Label | None = None
    """The rubric level the LLM placed the answer at (``report_observation``)."""
    scaffoldingIntensity: Annotated[int, Field(ge=0, le=3)] | None = None
    """How much help preceded the evidence: 0 (none) to 3 (heavy)."""
    scaffoldingEffective: bool | None = None
    """Whether that help worked."""
    passageId: Id | None = None
    """At a grounded node with a drawn passage, the passage the answer was about
    (docs/spec/candidate-materials.md §7)."""


class FollowUpUsed(Payload):
    """§4.10 A follow-up question was asked (counts against the node's budget)."""

    type: Literal["follow_up_used"] = "follow_up_used"
    nodeId: Id
    followUpIndex: Annotated[int, Field(ge=1)]
    maxFollowUps: Count
    reason: Literal["evidence_gap", "depth_probe", "clarification", "misconception_probe"]
    triggerTurnId: Id


class TransitionDecision(Payload):
    """§4.11 Which edge was taken and why. ``toNodeId`` is the node actually entered; when the
    edge targets a question pool, ``poolId`` names the pool (spec-notes §1)."""

    type: Literal["transition_decision"] = "transition_decision"
    fromNodeId: Id
    toNodeId: Id
    edgeId: Id
    reason: Literal[
        "natural_completion",
        "follow_ups_exhausted",
        "time_exhausted",
        "condition_met",
        "candidate_skip",
        "guardrail_override",
    ]
    conditionEvaluated: Text | None = None
    poolId: Id | None = None


GuardrailType = Literal[
    # chapter 05 §4.12
    "max_follow_ups",
    "forbidden_hint",
    "topic_drift",
    "unauthorized_scoring",
    "time_budget_exceeded",
    "blocked_action",
    # spec-notes §2/§3 and the output filters (chapter 08 OUT-001..005)
    "command_refused",
    "off_topic_limit",
    "anxiety_policy",
    "evidence_rejected",
    "persona_break",
    "rubric_leak",
    "topic_containment",
    "length",
    "leading_question",
    # our 03 chapter §8: a repetition loop at a node without a repetition_loop handler
    "repetition_loop",
    # our 04 chapter §7: protected text beyond the rubric, one question at a time
    "protected_text",
    "stacked_question",
]


class GuardrailTriggered(Payload):
    """§4.12 A policy fired. The type list is the chapter's plus the project's (command
    refusals, off-topic limit, POL-008, evidence rejections, output filters)."""

    type: Literal["guardrail_triggered"] = "guardrail_triggered"
    guardrailId: Id
    guardrailType: GuardrailType
    severity: Literal["warning", "block"]
    description: Text
    actionTaken: Literal[
        "event_only",
        "forced_transition",
        "recovery_initiated",
        "exam_terminated",
        "command_refused",
        "output_replaced",
    ]
    contextNodeId: Id | None = None
    originalText: AnyText | None = None
    """The text that was intercepted (output filters, POL-008, refused completions)."""
    replacementText: AnyText | None = None
    """What was said instead (empty when nothing was)."""


RecoveryType = Literal[
    "silence",
    "unclear_answer",
    "off_topic",
    "anxiety",
    "interruption",
    "network_issue",
    "repetition_loop",
    "stt_low_confidence",
    "candidate_distress",
]


class RecoveryStarted(Payload):
    """§4.13 A recovery sequence began (pairs with recovery_resolved by ``recoveryId`` and the
    envelope's ``correlationId``). ``candidate_distress`` follows an emergency stop (§5.12)."""

    type: Literal["recovery_started"] = "recovery_started"
    recoveryId: Id
    recoveryType: RecoveryType
    nodeId: Id
    triggerDescription: Text
    attempt: Ordinal | None = None
    """Which attempt of the episode this is (1 for the episode's first ``recovery_started``)."""
    maxAttempts: Ordinal | None = None
    """The handler's ``maxAttempts``: a trigger after that many attempts escalates."""
    action: Annotated[RecoveryAction, Lax] | None = None
    """The handler's action for this attempt (``gentle_reprompt``, ``calm_support``...)."""


class RecoveryResolved(Payload):
    """§4.14 A recovery sequence ended."""

    type: Literal["recovery_resolved"] = "recovery_resolved"
    recoveryId: Id
    resolution: Literal["candidate_resumed", "re_prompted", "skipped_to_next", "exam_terminated"]
    durationSec: NonNegative


class InteractionMetrics(Payload):
    """§4.15 Interaction quality metrics for fairness analysis."""

    candidateTurnCount: Count
    examinerTurnCount: Count
    averageCandidateResponseLatencyMs: NonNegative
    averageExaminerFollowUpDepth: NonNegative
    probingConsistencyScore: Unit
    longestCandidateMonologueSec: NonNegative


class ExamCompleted(Payload):
    """§4.15 Terminal event; triggers marking. Also the adapter's ``session_completed``, hence
    ``totalTurns`` and ``totalElapsedMs`` (EVT-009: reason, totalTurns, totalElapsedMs)."""

    type: Literal["exam_completed"] = "exam_completed"
    reason: Literal[
        "all_nodes_visited",
        "time_total_exhausted",
        "candidate_ended",
        "proctor_ended",
        "system_error",
        "emergency_stop",
        "candidate_absent",
    ]
    totalTurns: Count
    totalElapsedMs: Count
    totalDurationSec: NonNegative
    nodesVisited: list[Id]
    totalEvidenceSignals: Count
    totalFollowUps: Count
    guardrailTriggerCount: Count
    interactionMetrics: InteractionMetrics | None = None


class HesitationDetected(Payload):
    """§4.16 A significant hesitation (system-detected from STT timing)."""

    type: Literal["hesitation_detected"] = "hesitation_detected"
    nodeId: Id
    turnId: Id
    durationMs: Count
    context: Literal["after_question", "mid_response", "before_conclusion"]
    followedByResponse: bool


class SelfCorrectionDetected(Payload):
    """§4.17 The candidate corrected an earlier claim."""

    type: Literal["self_correction_detected"] = "self_correction_detected"
    nodeId: Id
    turnIds: list[Id]
    originalClaim: Text
    correctedClaim: Text
    confidence: Unit


# --- spec-notes §4 extensions -------------------------------------------------------------------


class ExamStateChanged(Payload):
    """The session moved between exam states (spec-notes §2); the edge must be allowed."""

    type: Literal["exam_state_changed"] = "exam_state_changed"
    fromState: Annotated[ExamState, Lax]
    toState: Annotated[ExamState, Lax]
    reason: Text | None = None

    @model_validator(mode="after")
    def _allowed_edge(self) -> Self:
        if self.toState not in EXAM_STATE_TRANSITIONS[self.fromState]:
            raise ValueError(f"no exam state transition {self.fromState} → {self.toState}")
        return self


class TimeWarning(Payload):
    """A pacing beat: time is running out on the node or the whole exam."""

    type: Literal["time_warning"] = "time_warning"
    scope: Literal["node", "exam"]
    remainingSec: NonNegative
    remainingMs: Count
    nodeId: Id | None = None
    wrapUp: bool = False
    """True for the wrap-up beat that moves the exam to its wrap-up node (spec-notes §2)."""


class SystemErrorPayload(Payload):
    """Something went wrong (a refused event, a failed component). ``userMessage`` is the only
    text the candidate may see; ``details`` never reaches the candidate."""

    type: Literal["system_error"] = "system_error"
    code: Id
    message: Text
    component: Literal["event_store", "runtime_controller", "bot", "frontend", "command", "other"]
    severity: Literal["warning", "error", "fatal"]
    ruleIds: list[Id] = Field(default_factory=list)
    refusedEventIds: list[Id] = Field(default_factory=list)
    userMessage: Text | None = None
    details: JsonObject | None = None


class MisconceptionDetected(Payload):
    """A misconception recorded by the runtime (spec-notes §2 step 3). Never shown to the
    candidate."""

    type: Literal["misconception_detected"] = "misconception_detected"
    nodeId: Id
    misconceptionId: Id
    description: Text
    turnIds: list[Id]
    targetIds: list[Id] = Field(default_factory=list)
    confidence: Unit
    signalId: Id | None = None


class ProctorInstruction(Payload):
    """A proctor (admin) instruction for the examiner, queued or immediate (beats chapter)."""

    type: Literal["proctor_instruction"] = "proctor_instruction"
    instructionId: Id
    proctorId: Id
    mode: Literal["queued", "immediate"]
    text: Text
    status: Literal["issued", "delivered", "cancelled"] = "issued"
    nodeId: Id | None = None
    reason: Text | None = None
    """Why the proctor gave the instruction (their words); proctor, store and marking only."""


# --- project extensions -------------------------------------------------------------------------


class Heartbeat(Payload):
    """A keep-alive on a live connection: live only, never stored. ``lastSeq`` is the highest
    seq the connection has delivered."""

    type: Literal["heartbeat"] = "heartbeat"
    lastSeq: Count
    intervalSec: NonNegative


class UsageReported(Payload):
    """Provider usage (LLM tokens, STT/TTS audio) for cost accounting; stored, shown to no UI."""

    type: Literal["usage_reported"] = "usage_reported"
    component: Literal["llm", "stt", "tts"]
    provider: Id
    model: Id | None = None
    nodeId: Id | None = None
    inputTokens: Count | None = None
    outputTokens: Count | None = None
    audioMs: Count | None = None
    characters: Count | None = None


ProctorActionName = Literal[
    "pause",
    "resume",
    "extend_time",
    "terminate",
    "skip_node",
    "flag_irregularity",
    "authorise_start",
]
IrregularityCategory = Literal["environment", "candidate", "staff", "technical"]


class ProctorActionTaken(Payload):
    """A proctor's control action, as carried out: pause, resume, extend time, terminate,
    skip the current node, flag an irregularity (nothing else changes), or authorise the start
    of an exam waiting at ``ready``.

    ``flag_irregularity`` may carry a ``category`` (environment, candidate, staff, technical);
    no other action does.

    ``extend_time`` has ``seconds`` (added) and ``scope``, and ``remainingSec`` /
    ``remainingMs``, the time left in that scope after the extension (the controller re-anchors
    its clock to it). The candidate sees a neutral projection (never ``actor`` or ``reason``)
    and no ``flag_irregularity`` at all.
    """

    type: Literal["proctor_action"] = "proctor_action"
    actor: Id
    """Who acted: the proctor's id."""
    action: ProctorActionName
    reason: Text | None = None
    """The proctor's words; proctor, store and marking only."""
    seconds: Positive | None = None
    scope: Literal["node", "exam"] | None = None
    remainingSec: NonNegative | None = None
    remainingMs: Count | None = None
    nodeId: Id | None = None
    """The node the session was in."""
    category: IrregularityCategory | None = None
    """``flag_irregularity`` only: the kind of irregularity."""

    @model_validator(mode="after")
    def _extension_fields(self) -> Self:
        if self.category is not None and self.action != "flag_irregularity":
            raise ValueError("category belongs to flag_irregularity only")
        extension = (self.seconds, self.scope, self.remainingSec, self.remainingMs)
        if self.action == "extend_time":
            if self.seconds is None or self.scope is None:
                raise ValueError("extend_time needs seconds and scope")
        elif any(value is not None for value in extension):
            raise ValueError("seconds, scope and remaining time belong to extend_time only")
        if (self.remainingSec is None) != (self.remainingMs is None):
            raise ValueError("remainingSec and remainingMs go together")
        if self.remainingSec is not None and round(self.remainingSec * 1000) != self.remainingMs:
            raise ValueError(
                f"remainingMs ({self.remainingMs}) must equal remainingSec * 1000 "
                f"({self.remainingSec})"
            )
        return self


CloseCode = Annotated[int, Field(ge=1000, le=4999)]
"""A WebSocket close code (RFC 6455 §7.4: 1000-2999 protocol, 3000-4999 applications)."""


class CandidateConnectionChanged(Payload):
    """The candidate's exam room connection came or went while the exam was running: the first
    of the candidate's sockets opened when none was open (``connected``), or the last one
    closed (``disconnected``). Written by the web tier, not the controller, which ignores it;
    for the proctor and the record only (docs/proctoring.md).

    ``reconnects`` counts the candidate's returns after their first connection, this one
    included. ``offlineMs`` (``connected`` only) is how long the exam room had been without a
    connection, when known (also after a server crash, when no ``disconnected`` was written);
    ``closeCode`` (``disconnected`` only) is the WebSocket close code (1001: the page was
    left; 1006: the connection broke).
    """

    type: Literal["candidate_connection_changed"] = "candidate_connection_changed"
    status: Literal["connected", "disconnected"]
    reconnects: Count
    offlineMs: Count | None = None
    closeCode: CloseCode | None = None
    channel: Literal["exam_room", "webrtc", "livekit"] | None = None
    """Which connection: the exam room's socket (absent: the same), the SmallWebRTC peer or
    the LiveKit participant (written by the bot). The controller counts the candidate absent
    while any channel is disconnected (our 03 chapter §11)."""

    @model_validator(mode="after")
    def _fields_of_the_status(self) -> Self:
        if self.status == "connected" and self.closeCode is not None:
            raise ValueError("closeCode belongs to disconnected only")
        if self.status == "disconnected" and self.offlineMs is not None:
            raise ValueError("offlineMs belongs to connected only")
        return self


class ResultReleased(Payload):
    """Staff released the session's locked marks to the candidate (docs/marking.md, "Results
    released to candidates"): a deliberate act, once per moderation cycle. Written by the
    marking app after the exam is over; proctor and record only (the candidate reads their
    result on the result page, not from the event stream)."""

    type: Literal["result_released"] = "result_released"
    actor: Id
    """Who released: the staff member's id."""
    cycle: Annotated[int, Field(ge=1)]
    """The moderation cycle whose locked marks were released (1, +1 per appeal)."""
    feedback: Literal["none", "score", "outcomes", "levels"]
    """What the candidate sees (the package's ``metadata.extensions.results``)."""
    finalScore: Annotated[float, Field(ge=0.0, le=1.0)]
    """The released exam score in [0, 1]."""


class CandidateActivity(Payload):
    """The candidate started or stopped composing (typing, text mode) or speaking (voice
    activity, voice mode): the silence clock is suspended while they are active and counts
    from when they stopped (our 03 chapter §6). Recorded by the controller on each change
    only (the exam room's throttled refreshes are not events). ``atMs`` (voice) is when the
    audio showed it, in ms since the session opened, when the bot knows it."""

    type: Literal["candidate_activity"] = "candidate_activity"
    activity: Literal["composing", "speaking"]
    state: Literal["started", "stopped"]
    nodeId: Id | None = None
    atMs: Count | None = None


class RecognitionCheck(Payload):
    """The examiner asked the candidate to check what the recogniser heard (issue #30): the
    candidate's ``turnIds`` of this node were heard with low confidence (empty: the candidate
    spoke and no words were recognised). The exam room shows the heard words and lets the
    candidate confirm them or type what they said (``transcript_corrected`` follows)."""

    type: Literal["recognition_check"] = "recognition_check"
    nodeId: Id
    turnIds: list[Id] = Field(default_factory=list)


class TranscriptCorrected(Payload):
    """The candidate confirmed or typed what they said in place of what the recogniser heard
    (issue #30). ``correctionTurnId`` is the ``transcript_final`` (confidence 1) stored just
    before, carrying the candidate's own words; ``turnId`` is the misheard turn it replaces
    (``None`` when the recogniser heard no words). ``originalText`` keeps what was heard:
    the transcript is superseded, never rewritten."""

    type: Literal["transcript_corrected"] = "transcript_corrected"
    nodeId: Id
    turnId: Id | None = None
    correctionTurnId: Id
    how: Literal["typed", "confirmed"]
    originalText: AnyText | None = None


class BotHandover(Payload):
    """The session's bot was moved to another worker on purpose (issue #33): a planned drain
    (SIGTERM on deploy) is no fault. The draining bot stores ``released`` as the last event of
    its run, once every input it took is decided and stored; the bot that takes the session
    over stores ``resumed`` before anything else and carries on where the exam is, saying
    nothing about it. Not a ``system_error``: nothing failed and the candidate is not told, so
    marking never reads it as a technical problem or an irregularity. A bot that dies instead
    (``kill -9``, a lost machine) leaves no ``released``: its successor resumes through a bot
    fault, as before. For the proctor and the record only."""

    type: Literal["bot_handover"] = "bot_handover"
    phase: Literal["released", "resumed"]
    reason: Literal["worker_shutdown"] = "worker_shutdown"
    """Why the bot was moved: its worker shut down in order (SIGTERM, a deploy)."""


class TransitionHeld(Payload):
    """A node's natural completion decided on a spoken answer that may still go on (issue #30,
    runtime semantics §18). The candidate's turn ended on the short reply pause, so the
    examiner's words for it (the bridge) are spoken at once, but the edge waits: ``held`` when
    it is decided, then either the edge is taken (``node_exited`` and ``transition_decision``
    follow, nothing else is recorded) once the answer stays over, or ``dropped`` when the
    candidate goes on speaking first: their next words are the same answer, at the same node.
    For the proctor and the record only."""

    type: Literal["transition_held"] = "transition_held"
    phase: Literal["held", "dropped"]
    nodeId: Id
    edgeId: Id
    reason: Text | None = None


PassageCue = Literal["choice", "result", "limitation"]
MaterialKindName = Literal["submission", "report"]


class MaterialPassage(Payload):
    """A qualifying passage of an attached material, without its text: its id
    (``<materialId>:<index>``), its sentence index, its span in the normalised text and its
    cue."""

    passageId: Id
    index: Count
    start: Count
    end: Count
    cue: PassageCue


class MaterialAttached(Payload):
    """The app handed the runtime a material's extracted text (docs/spec/candidate-materials.md
    §3, §8): the runtime cut it and records the passages a grounded node may draw. The full
    text is never recorded; ``passageTexts`` (the qualifying sentences) is personal data."""

    type: Literal["material_attached"] = "material_attached"
    materialId: Id
    materialKind: MaterialKindName
    language: Label | None = None
    """The language whose cue words applied besides English."""
    cutterVersion: Id
    chars: Count
    """Length of the normalised text."""
    textSha256: Annotated[str, Field(min_length=64, max_length=64, pattern=r"^[0-9a-f]{64}$")]
    """sha256 of the normalised text (UTF-8), to check a stored upload against the log."""
    passages: list[MaterialPassage]
    passageTexts: JsonObject
    """``passageId`` -> the passage's text (erased to ``{}``)."""


class PassageDrawn(Payload):
    """The runtime's seeded draw of a grounded node's passage (GRD-004), before the node's
    question: ``drawn`` (the passage, its material and cue), or, failing closed, ``no_material``
    (no material of the node's kind attached) or ``no_passage`` (none qualifies): the node then
    asks its fallback question. ``drawKey`` and ``optionCount`` let the log rebuild the draw."""

    type: Literal["passage_drawn"] = "passage_drawn"
    nodeId: Id
    outcome: Literal["drawn", "no_material", "no_passage"]
    pick: Literal["choice", "result", "limitation", "any"]
    materialKind: MaterialKindName
    drawKey: Id
    optionCount: Count
    materialId: Id | None = None
    passageId: Id | None = None
    cue: PassageCue | None = None
    text: Text | None = None
    """The passage's text (personal: erased to ``[erased]``)."""


EventPayload = Annotated[
    BotReady
    | NodeEntered
    | NodeExited
    | TranscriptDelta
    | TranscriptFinal
    | ExaminerUtteranceStarted
    | ExaminerUtteranceFinal
    | CandidateCommandReceived
    | EvidenceSignal
    | FollowUpUsed
    | TransitionDecision
    | GuardrailTriggered
    | RecoveryStarted
    | RecoveryResolved
    | ExamCompleted
    | HesitationDetected
    | SelfCorrectionDetected
    | ExamStateChanged
    | TimeWarning
    | SystemErrorPayload
    | MisconceptionDetected
    | ProctorInstruction
    | Heartbeat
    | UsageReported
    | ProctorActionTaken
    | CandidateConnectionChanged
    | ResultReleased
    | CandidateActivity
    | RecognitionCheck
    | TranscriptCorrected
    | BotHandover
    | TransitionHeld
    | MaterialAttached
    | PassageDrawn,
    Field(discriminator="type"),
]
"""Any event payload, discriminated by ``type``."""


# --- command payloads (chapter 05 §5) -----------------------------------------------------------


class RepeatQuestion(Payload):
    type: Literal["repeat_question"] = "repeat_question"
    nodeId: Id


class RequestClarification(Payload):
    type: Literal["request_clarification"] = "request_clarification"
    nodeId: Id
    text: Text | None = None


class RequestRephrase(Payload):
    type: Literal["request_rephrase"] = "request_rephrase"
    nodeId: Id
    reason: Literal["unclear_terminology", "ambiguous_question", "language_barrier"] | None = None


class Pause(Payload):
    type: Literal["pause"] = "pause"
    reason: Literal["thinking", "personal", "other"] | None = None


class Resume(Payload):
    type: Literal["resume"] = "resume"


class ThinkingAloud(Payload):
    type: Literal["thinking_aloud"] = "thinking_aloud"
    nodeId: Id


class RaiseHand(Payload):
    type: Literal["raise_hand"] = "raise_hand"
    reason: Text | None = None


class ChallengePremise(Payload):
    type: Literal["challenge_premise"] = "challenge_premise"
    nodeId: Id
    text: Text


class ReviseEarlierAnswer(Payload):
    type: Literal["revise_earlier_answer"] = "revise_earlier_answer"
    targetNodeId: Id
    reason: Text | None = None


class ReportAudioIssue(Payload):
    type: Literal["report_audio_issue"] = "report_audio_issue"
    issueType: Literal["no_input", "echo", "noise", "dropout", "latency"]
    severity: Literal["minor", "major"]


class EndExamRequested(Payload):
    type: Literal["end_exam_requested"] = "end_exam_requested"
    requestedBy: Literal["candidate", "proctor"]
    reason: Text | None = None


class EmergencyStop(Payload):
    type: Literal["emergency_stop"] = "emergency_stop"
    reason: Literal["distress", "medical", "environmental", "other"] | None = None


class SignalConfidence(Payload):
    type: Literal["signal_confidence"] = "signal_confidence"
    nodeId: Id
    confidenceLevel: Literal["very_confident", "confident", "uncertain", "guessing"]


CommandPayload = Annotated[
    RepeatQuestion
    | RequestClarification
    | RequestRephrase
    | Pause
    | Resume
    | ThinkingAloud
    | RaiseHand
    | ChallengePremise
    | ReviseEarlierAnswer
    | ReportAudioIssue
    | EndExamRequested
    | EmergencyStop
    | SignalConfidence,
    Field(discriminator="type"),
]
"""Any command payload, discriminated by ``type``."""

COMMAND_PAYLOAD_MODELS: dict[CommandType, type[Payload]] = {
    CommandType.REPEAT_QUESTION: RepeatQuestion,
    CommandType.REQUEST_CLARIFICATION: RequestClarification,
    CommandType.REQUEST_REPHRASE: RequestRephrase,
    CommandType.PAUSE: Pause,
    CommandType.RESUME: Resume,
    CommandType.THINKING_ALOUD: ThinkingAloud,
    CommandType.RAISE_HAND: RaiseHand,
    CommandType.CHALLENGE_PREMISE: ChallengePremise,
    CommandType.REVISE_EARLIER_ANSWER: ReviseEarlierAnswer,
    CommandType.REPORT_AUDIO_ISSUE: ReportAudioIssue,
    CommandType.END_EXAM_REQUESTED: EndExamRequested,
    CommandType.EMERGENCY_STOP: EmergencyStop,
    CommandType.SIGNAL_CONFIDENCE: SignalConfidence,
}
"""The payload model of each command type."""
