"""The event type registry: payload model, audiences and candidate projection of every type,
and the alias table of spec-notes §4.

Audience flags follow the chapter's table (used by UI / persisted / used by marking), with the
UI flag split into candidate and proctor. The candidate never receives evidence,
misconceptions, rubric ids, guardrail internals or a proctor's words: such types either are not
sent to the candidate at all or are sent as a projection that keeps only ``candidate_fields``
(and, for ``proctor_action``, only for the actions in ``candidate_condition``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from ioa.events import payloads as p
from ioa.events.types import Audience, EventType

C, P, S, M = Audience.CANDIDATE, Audience.PROCTOR, Audience.PERSISTED, Audience.MARKING


@dataclass(frozen=True, slots=True)
class EventTypeSpec:
    """What the protocol says about one event type.

    ``candidate_fields`` is ``None`` when the candidate receives the payload whole; otherwise
    the payload keys the candidate's projection keeps (``type`` is always kept). It is only
    meaningful when :attr:`Audience.CANDIDATE` is among ``audiences``.
    """

    event_type: EventType
    payload_model: type[p.Payload]
    audiences: frozenset[Audience]
    summary: str
    candidate_fields: frozenset[str] | None = None
    node_scoped: bool = False
    """EVT-003 applies: the payload's ``nodeId`` must have been entered earlier in the session."""
    candidate_condition: tuple[str, frozenset[str]] | None = None
    """``(payload key, values)``: the candidate receives an event of this type only when its
    payload's key has one of the values (``proctor_action``: not ``flag_irregularity``)."""

    def sent_to_candidate(self, payload: Mapping[str, object]) -> bool:
        """Whether the candidate receives an event of this type with this payload."""
        if Audience.CANDIDATE not in self.audiences:
            return False
        if self.candidate_condition is None:
            return True
        key, values = self.candidate_condition
        return payload.get(key) in values

    @property
    def persisted(self) -> bool:
        return Audience.PERSISTED in self.audiences

    @property
    def live_only(self) -> bool:
        """Sent to live clients only; never stored, never carries a ``seq``."""
        return not self.persisted

    @property
    def marking(self) -> bool:
        return Audience.MARKING in self.audiences

    def sent_to(self, audience: Audience) -> bool:
        return audience in self.audiences


def _spec(
    type_: EventType,
    model: type[p.Payload],
    audiences: set[Audience],
    summary: str,
    candidate_fields: set[str] | None = None,
    *,
    node_scoped: bool = False,
    candidate_condition: tuple[str, set[str]] | None = None,
) -> EventTypeSpec:
    return EventTypeSpec(
        event_type=type_,
        payload_model=model,
        audiences=frozenset(audiences),
        summary=summary,
        candidate_fields=None if candidate_fields is None else frozenset(candidate_fields),
        node_scoped=node_scoped,
        candidate_condition=(
            None
            if candidate_condition is None
            else (candidate_condition[0], frozenset(candidate_condition[1]))
        ),
    )


T = EventType
REGISTRY: Final[Mapping[EventType, EventTypeSpec]] = {
    s.event_type: s
    for s in (
        _spec(T.BOT_READY, p.BotReady, {C, P, S}, "bot is listening"),
        _spec(
            T.NODE_ENTERED,
            p.NodeEntered,
            {C, P, S, M},
            "session entered a node",
            {"nodeId", "nodeKind", "timeBudgetSec", "timeBudgetMs"},
        ),
        _spec(
            T.NODE_EXITED,
            p.NodeExited,
            {C, P, S, M},
            "session left a node",
            {"nodeId", "durationSec"},
            node_scoped=True,
        ),
        _spec(T.TRANSCRIPT_DELTA, p.TranscriptDelta, {C, P}, "live caption partial"),
        _spec(
            T.TRANSCRIPT_FINAL,
            p.TranscriptFinal,
            {C, P, S, M},
            "canonical utterance",
            {"turnId", "speaker", "text", "startTimeMs", "endTimeMs", "nodeId", "language"},
        ),
        _spec(
            T.EXAMINER_UTTERANCE_STARTED,
            p.ExaminerUtteranceStarted,
            {C, P, S},
            "examiner is speaking",
        ),
        _spec(
            T.EXAMINER_UTTERANCE_FINAL,
            p.ExaminerUtteranceFinal,
            {C, P, S, M},
            "what the examiner said",
        ),
        _spec(
            T.CANDIDATE_COMMAND_RECEIVED,
            p.CandidateCommandReceived,
            {C, P, S},
            "command acknowledged (accepted or refused)",
            {"commandId", "command", "commandType", "accepted"},
        ),
        _spec(
            T.EVIDENCE_SIGNAL,
            p.EvidenceSignal,
            {P, S, M},
            "runtime-approved evidence",
            node_scoped=True,
        ),
        _spec(
            T.FOLLOW_UP_USED,
            p.FollowUpUsed,
            {P, S, M},
            "follow-up asked",
            node_scoped=True,
        ),
        _spec(T.TRANSITION_DECISION, p.TransitionDecision, {P, S, M}, "edge taken and why"),
        _spec(T.GUARDRAIL_TRIGGERED, p.GuardrailTriggered, {P, S, M}, "policy fired"),
        _spec(
            T.RECOVERY_STARTED,
            p.RecoveryStarted,
            {C, P, S},
            "recovery began",
            {"recoveryId", "nodeId"},
        ),
        _spec(
            T.RECOVERY_RESOLVED,
            p.RecoveryResolved,
            {C, P, S},
            "recovery ended",
            {"recoveryId", "resolution"},
        ),
        _spec(
            T.EXAM_COMPLETED,
            p.ExamCompleted,
            {C, P, S, M},
            "terminal event, triggers marking",
            {"reason", "totalDurationSec", "totalElapsedMs", "totalTurns"},
        ),
        _spec(
            T.HESITATION_DETECTED,
            p.HesitationDetected,
            {P, S, M},
            "assessment-significant hesitation",
            node_scoped=True,
        ),
        _spec(
            T.SELF_CORRECTION_DETECTED,
            p.SelfCorrectionDetected,
            {P, S, M},
            "candidate corrected a claim",
            node_scoped=True,
        ),
        _spec(
            T.EXAM_STATE_CHANGED,
            p.ExamStateChanged,
            {C, P, S, M},
            "exam state changed",
            {"fromState", "toState"},
        ),
        _spec(T.TIME_WARNING, p.TimeWarning, {C, P, S}, "pacing beat"),
        _spec(
            T.SYSTEM_ERROR,
            p.SystemErrorPayload,
            {C, P, S},
            "something failed or was refused",
            {"code", "severity", "userMessage"},
        ),
        _spec(
            T.MISCONCEPTION_DETECTED,
            p.MisconceptionDetected,
            {P, S, M},
            "misconception recorded",
            node_scoped=True,
        ),
        _spec(
            T.PROCTOR_INSTRUCTION,
            p.ProctorInstruction,
            {P, S, M},
            "proctor instruction for the examiner",
        ),
        _spec(T.HEARTBEAT, p.Heartbeat, {C, P}, "keep-alive on a live connection"),
        _spec(T.USAGE_REPORTED, p.UsageReported, {S}, "provider usage for cost accounting"),
        _spec(
            T.PROCTOR_ACTION,
            p.ProctorActionTaken,
            {C, P, S, M},
            "proctor control action",
            {"action", "scope", "seconds", "remainingSec", "remainingMs", "nodeId"},
            candidate_condition=(
                "action",
                {"pause", "resume", "extend_time", "terminate", "skip_node", "authorise_start"},
            ),
        ),
        _spec(
            T.CANDIDATE_CONNECTION_CHANGED,
            p.CandidateConnectionChanged,
            {P, S},
            "candidate's exam room connected or disconnected during the exam",
        ),
        _spec(
            T.RESULT_RELEASED,
            p.ResultReleased,
            {P, S},
            "locked marks released to the candidate",
        ),
        _spec(
            T.CANDIDATE_ACTIVITY,
            p.CandidateActivity,
            {P, S},
            "candidate started or stopped typing or speaking",
        ),
        _spec(
            T.RECOGNITION_CHECK,
            p.RecognitionCheck,
            {C, P, S},
            "examiner asked the candidate to check what was heard",
            node_scoped=True,
        ),
        _spec(
            T.TRANSCRIPT_CORRECTED,
            p.TranscriptCorrected,
            {C, P, S, M},
            "candidate confirmed or corrected what was heard",
            {"nodeId", "turnId", "correctionTurnId", "how"},
            node_scoped=True,
        ),
        _spec(
            T.BOT_HANDOVER,
            p.BotHandover,
            {P, S},
            "the session's bot was moved to another worker on purpose (a drain, no fault)",
        ),
        _spec(
            T.TRANSITION_HELD,
            p.TransitionHeld,
            {P, S},
            "a node's completion waits while the candidate's spoken answer may go on",
            node_scoped=True,
        ),
        _spec(
            T.MATERIAL_ATTACHED,
            p.MaterialAttached,
            {P, S},
            "the candidate's material was attached and cut into passages",
        ),
        _spec(
            T.PASSAGE_DRAWN,
            p.PassageDrawn,
            {P, S, M},
            "the passage a grounded node asks about was drawn (or none qualified)",
            node_scoped=True,
        ),
    )
}
"""Every event type, in :class:`EventType` order."""


def _recovery_alias(payload: Mapping[str, object]) -> EventType:
    """``recovery_event`` is ``recovery_resolved`` when it carries a resolution."""
    phase = payload.get("phase")
    if phase == "resolved" or (phase is None and "resolution" in payload):
        return EventType.RECOVERY_RESOLVED
    return EventType.RECOVERY_STARTED


ALIASES: Final[Mapping[str, EventType | Callable[[Mapping[str, object]], EventType]]] = {
    "evidence_update": EventType.EVIDENCE_SIGNAL,
    "evidence_signal_emitted": EventType.EVIDENCE_SIGNAL,  # EVT-005's spelling
    "follow_up_issued": EventType.FOLLOW_UP_USED,
    "command_acknowledged": EventType.CANDIDATE_COMMAND_RECEIVED,
    "node_exit": EventType.NODE_EXITED,
    "recovery_event": _recovery_alias,
    "session_completed": EventType.EXAM_COMPLETED,
}
"""Adapter data-channel names (spec-notes §4) → canonical type. ``recovery_event`` resolves to
``recovery_resolved`` when its payload has ``phase: "resolved"`` or a ``resolution``, else to
``recovery_started`` (the ``phase`` key is dropped)."""

ALIAS_DROPPED_KEYS: Final[Mapping[str, frozenset[str]]] = {"recovery_event": frozenset({"phase"})}
"""Payload keys that only serve alias resolution and are removed when an alias is resolved."""


_CANONICAL_NAMES: Final = frozenset(t.value for t in EventType)


def resolve_type(name: str, payload: Mapping[str, object]) -> EventType | None:
    """The canonical type of ``name`` (a canonical name or an alias), or ``None`` if unknown."""
    if name in _CANONICAL_NAMES:
        return EventType(name)
    alias = ALIASES.get(name)
    if alias is None:
        return None
    return alias if isinstance(alias, EventType) else alias(payload)


def spec_for(event_type: EventType | str) -> EventTypeSpec:
    """The registry entry of a canonical type. Raises ``KeyError`` for an unknown type."""
    return REGISTRY[EventType(event_type)]


PERSISTED_TYPES: Final = frozenset(t for t, s in REGISTRY.items() if s.persisted)
LIVE_ONLY_TYPES: Final = frozenset(t for t, s in REGISTRY.items() if s.live_only)
MARKING_TYPES: Final = frozenset(t for t, s in REGISTRY.items() if s.marking)
NODE_SCOPED_TYPES: Final = frozenset(t for t, s in REGISTRY.items() if s.node_scoped)
