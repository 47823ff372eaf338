"""Reading a session's stored event log for marking (chapter 05 §6.3 replay).

:func:`read_log` folds wire envelopes (as ``sessions.selectors.wire_from_row`` returns them, in
``seq`` order) into a :class:`SessionLog`. It reads:

* the **minimum marking stream** of §6.3 — ``node_entered``, ``node_exited``,
  ``transcript_final``, ``examiner_utterance_final``, ``evidence_signal``, ``follow_up_used``,
  ``transition_decision``, ``guardrail_triggered``, ``hesitation_detected``,
  ``self_correction_detected``, ``exam_completed`` — from which every level is decided;
* the other marking-audience types of our protocol (``misconception_detected``,
  ``exam_state_changed``, ``proctor_instruction``, ``proctor_action``, ``passage_drawn``: the
  passage of the candidate's material a grounded node asked about, which each
  ``evidence_signal`` there names by ``passageId``); a proctor's
  ``flag_irregularity`` report is kept whole (:class:`Irregularity`: when, who, category,
  reason, node) for the irregularity rules (``docs/spec/marking.md`` §5.1);
* for **flags only**, never for levels: ``recovery_started`` / ``recovery_resolved`` and
  ``system_error`` (persisted for operations; a technical recovery that affected the candidate
  must reach the marker, ``docs/spec/marking.md`` §5).

Everything else is ignored, and so is anything it cannot read (marking must not fail on a type
it does not use). Events are self-contained: no network, no package lookup (§6.3).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from pydantic import ValidationError

from ioa.events import payloads as ev

MINIMUM_STREAM: Final = frozenset(
    {
        "node_entered",
        "node_exited",
        "transcript_final",
        "examiner_utterance_final",
        "evidence_signal",
        "follow_up_used",
        "transition_decision",
        "guardrail_triggered",
        "hesitation_detected",
        "self_correction_detected",
        "exam_completed",
    }
)
"""Chapter 05 §6.3: the minimum viable event stream for marking replay."""

CONTEXT_TYPES: Final = frozenset(
    {
        "misconception_detected",
        "exam_state_changed",
        "proctor_instruction",
        "proctor_action",
        "transcript_corrected",
        "passage_drawn",
    }
)
FLAG_ONLY_TYPES: Final = frozenset({"recovery_started", "recovery_resolved", "system_error"})
READ_TYPES: Final = MINIMUM_STREAM | CONTEXT_TYPES | FLAG_ONLY_TYPES
"""Every type :func:`read_log` looks at (what the marking task fetches from the store)."""

_SCAFFOLDING: Final = re.compile(
    r"scaffolding intensity: (\d)(?:, (effective|not effective))?", re.IGNORECASE
)
_RUBRIC_HINT: Final = re.compile(r"rubric level: ([^;)]{1,64})", re.IGNORECASE)
_EXCERPT: Final = re.compile(r"': \"(.*)\"(?: \(|$)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Turn:
    """One ``transcript_final``."""

    turn_id: str
    seq: int
    speaker: str
    text: str
    node_id: str
    confidence: float
    start_ms: int
    end_ms: int
    corrected_by: str | None = None
    """A misheard turn: the candidate's correction turn that superseded it (issue #30)."""
    correction: str | None = None
    """A correction turn: ``typed`` or ``confirmed`` by the candidate."""


@dataclass(frozen=True, slots=True)
class Utterance:
    """One ``examiner_utterance_final``: ``text`` the validated utterance; ``heard`` what the
    candidate actually heard of it (the whole text, or up to where a barge-in cut it:
    ``spokenText`` of an ``interrupted`` one)."""

    utterance_id: str
    seq: int
    node_id: str
    text: str
    purpose: str
    duration_ms: int
    interrupted: bool
    heard: str


@dataclass(frozen=True, slots=True)
class DrawnPassage:
    """One ``passage_drawn``: the passage a grounded node asked about, or why there was none
    (``outcome``: ``drawn``, ``no_material``, ``no_passage``)."""

    seq: int
    node_id: str
    outcome: str
    passage_id: str | None
    cue: str | None
    text: str | None


@dataclass(frozen=True, slots=True)
class Signal:
    """The latest revision of one ledger entry (``evidence_signal``, merged by ``signalId``)."""

    signal_id: str
    first_seq: int
    last_seq: int
    node_id: str
    target_id: str
    kind: str
    confidence: float
    turn_ids: tuple[str, ...]
    stt_min: float
    stt_mean: float
    description: str
    dimension: str
    revision: int
    scaffolding: int | None
    """``scaffoldingIntensity`` 0-3 as the LLM reported it (kept in the description, chapter 06
    §6), or None."""
    scaffolding_effective: bool | None
    rubric_hint: str | None
    """The LLM's own rubric level guess, if it gave one (advisory, never used by the rules)."""
    excerpt: str
    """The candidate's words the LLM quoted (from the description), or empty."""
    passage_id: str | None = None
    """At a grounded node: the drawn passage the answer was about (``passageId``)."""


@dataclass(frozen=True, slots=True)
class FollowUp:
    node_id: str
    index: int
    reason: str
    trigger_turn_id: str
    seq: int


@dataclass(frozen=True, slots=True)
class Misconception:
    misconception_id: str
    node_id: str
    description: str
    turn_ids: tuple[str, ...]
    target_ids: tuple[str, ...]
    confidence: float
    seq: int
    signal_id: str | None = None
    """The ``misconception`` signal recorded in the same observation, if any."""


@dataclass(frozen=True, slots=True)
class SelfCorrection:
    node_id: str
    turn_ids: tuple[str, ...]
    original: str
    corrected: str
    confidence: float
    seq: int


@dataclass(frozen=True, slots=True)
class Hesitation:
    node_id: str
    turn_id: str
    duration_ms: int
    context: str
    seq: int


@dataclass(frozen=True, slots=True)
class Guardrail:
    guardrail_id: str
    guardrail_type: str
    severity: str
    description: str
    action: str
    node_id: str | None
    seq: int
    original_text: str | None
    """The intercepted text of an output filter (``actionTaken: output_replaced``)."""


@dataclass(slots=True)
class Recovery:
    recovery_id: str
    recovery_type: str
    node_id: str
    seq: int
    attempts: int = 1
    resolution: str | None = None
    resolved_seq: int | None = None


@dataclass(frozen=True, slots=True)
class SystemError:
    code: str
    severity: str
    component: str
    message: str
    seq: int
    node_id: str | None


@dataclass(slots=True)
class Visit:
    """One stay at a node, from ``node_entered`` to ``node_exited`` (or the end of the log)."""

    node_id: str
    node_kind: str
    entered_seq: int
    max_follow_ups: int
    exited_seq: int | None = None
    exit_reason: str | None = None
    duration_sec: float | None = None
    follow_ups_used: int | None = None


@dataclass(frozen=True, slots=True)
class Irregularity:
    """A proctor's irregularity report (``proctor_action`` with ``action: flag_irregularity``)."""

    seq: int
    event_id: str
    timestamp: str
    """The envelope's ``timestamp`` as stored (ISO 8601, UTC ``…Z``)."""
    category: str | None
    """``environment``, ``candidate``, ``staff``, ``technical``; None in logs from before
    categories existed."""
    actor: str
    """Who reported it: the proctor's id (``user:<id>``)."""
    reason: str
    node_id: str | None
    """The node the session was in (the payload's ``nodeId``, else the node open at ``seq``)."""
    after_completion: bool
    """Stored after ``exam_completed``: the node is only the last one the session was in."""


@dataclass(frozen=True, slots=True)
class StateChange:
    from_state: str
    to_state: str
    reason: str
    seq: int
    node_id: str | None


@dataclass
class SessionLog:
    """What marking knows about one session, all from its events."""

    session_id: str = ""
    last_seq: int = 0
    turns: dict[str, Turn] = field(default_factory=dict)
    turn_order: list[str] = field(default_factory=list)
    utterances: list[Utterance] = field(default_factory=list)
    visits: list[Visit] = field(default_factory=list)
    signals: dict[str, Signal] = field(default_factory=dict)
    follow_ups: list[FollowUp] = field(default_factory=list)
    misconceptions: list[Misconception] = field(default_factory=list)
    self_corrections: list[SelfCorrection] = field(default_factory=list)
    hesitations: list[Hesitation] = field(default_factory=list)
    guardrails: list[Guardrail] = field(default_factory=list)
    recoveries: dict[str, Recovery] = field(default_factory=dict)
    system_errors: list[SystemError] = field(default_factory=list)
    state_changes: list[StateChange] = field(default_factory=list)
    proctor_instructions: list[tuple[int, str, str, str | None]] = field(default_factory=list)
    """(seq, mode, status, node) of each ``proctor_instruction`` event."""
    proctor_actions: list[tuple[int, str, str, str | None]] = field(default_factory=list)
    """(seq, action, reason, node) of each ``proctor_action`` event."""
    irregularities: list[Irregularity] = field(default_factory=list)
    """Every ``flag_irregularity`` report, in seq order."""
    transitions: list[tuple[int, str, str, str]] = field(default_factory=list)
    """(seq, from, to, reason) of each ``transition_decision``."""
    passages: dict[str, DrawnPassage] = field(default_factory=dict)
    """Node id -> the ``passage_drawn`` of its grounded visit (the first draw: a draw is never
    redone)."""
    completed: dict[str, Any] | None = None
    """The ``exam_completed`` payload, once seen."""
    completed_seq: int | None = None
    unreadable: int = 0
    """Events of a read type whose payload could not be read (counted, skipped)."""

    def visited(self, node_id: str) -> bool:
        return any(v.node_id == node_id for v in self.visits)

    def node_at(self, seq: int) -> str | None:
        """The node the session was in at ``seq``."""
        current: str | None = None
        for visit in self.visits:
            if visit.entered_seq > seq:
                break
            if visit.exited_seq is None or visit.exited_seq >= seq:
                current = visit.node_id
        return current

    def candidate_turns(self, node_id: str | None = None) -> list[Turn]:
        turns = (self.turns[t] for t in self.turn_order)
        return [
            t
            for t in turns
            if t.speaker == "candidate"
            and t.corrected_by is None
            and (node_id is None or t.node_id == node_id)
        ]

    def turns_at(self, node_id: str) -> list[Turn]:
        return [self.turns[t] for t in self.turn_order if self.turns[t].node_id == node_id]


_ORIGINAL: Final = re.compile(r'Original text: "(.*)"\. Replacement text: "', re.DOTALL)


def _original_text(payload: ev.GuardrailTriggered) -> str | None:
    """The intercepted text: its own field, else what older logs kept in the description."""
    if payload.originalText is not None:
        return payload.originalText
    match = _ORIGINAL.search(payload.description)
    return match.group(1) if match else None


def _read_transcript_final(
    log: SessionLog, seq: int, p: ev.TranscriptFinal, envelope: Mapping[str, Any]
) -> None:
    turn = Turn(
        turn_id=p.turnId,
        seq=seq,
        speaker=p.speaker,
        text=p.text,
        node_id=p.nodeId,
        confidence=float(p.confidence),
        start_ms=p.startTimeMs,
        end_ms=p.endTimeMs,
    )
    if turn.turn_id not in log.turns:
        log.turn_order.append(turn.turn_id)
    log.turns[turn.turn_id] = turn


def _read_transcript_corrected(
    log: SessionLog, seq: int, p: ev.TranscriptCorrected, envelope: Mapping[str, Any]
) -> None:
    """The misheard turn is marked superseded (its words kept) and the correction turn says
    how the candidate gave it."""
    if p.turnId is not None and p.turnId in log.turns:
        log.turns[p.turnId] = replace(log.turns[p.turnId], corrected_by=p.correctionTurnId)
    if p.correctionTurnId in log.turns:
        log.turns[p.correctionTurnId] = replace(log.turns[p.correctionTurnId], correction=p.how)


def _read_examiner_utterance_final(
    log: SessionLog, seq: int, p: ev.ExaminerUtteranceFinal, envelope: Mapping[str, Any]
) -> None:
    log.utterances.append(
        Utterance(
            utterance_id=p.utteranceId,
            seq=seq,
            node_id=p.nodeId,
            text=p.text,
            purpose=p.purpose,
            duration_ms=p.durationMs,
            interrupted=bool(p.interrupted),
            heard=p.spokenText if p.interrupted and p.spokenText is not None else p.text,
        )
    )


def _read_node_entered(
    log: SessionLog, seq: int, p: ev.NodeEntered, envelope: Mapping[str, Any]
) -> None:
    log.visits.append(
        Visit(
            node_id=p.nodeId,
            node_kind=p.nodeKind.value,
            entered_seq=seq,
            max_follow_ups=p.maxFollowUps,
        )
    )


def _read_node_exited(
    log: SessionLog, seq: int, p: ev.NodeExited, envelope: Mapping[str, Any]
) -> None:
    """Closes the latest open visit of the node."""
    for visit in reversed(log.visits):
        if visit.node_id == p.nodeId and visit.exited_seq is None:
            visit.exited_seq = seq
            visit.exit_reason = p.reason
            visit.duration_sec = float(p.durationSec)
            visit.follow_ups_used = p.followUpsUsed
            break


def _told(p: ev.EvidenceSignal) -> tuple[int | None, bool | None, str | None, str]:
    """(scaffolding intensity, scaffolding effective, rubric level hint, excerpt) of a signal:
    its own fields, else what older logs kept in the description (chapter 06 §6)."""
    scaffold = _SCAFFOLDING.search(p.description)
    hint = _RUBRIC_HINT.search(p.description)
    quoted = p.excerpt
    if quoted is None:
        matched = _EXCERPT.search(p.description)
        quoted = matched.group(1) if matched else ""
    intensity = p.scaffoldingIntensity
    if intensity is None:
        intensity = int(scaffold.group(1)) if scaffold else None
    effective = p.scaffoldingEffective
    if effective is None:
        effective = (
            None
            if scaffold is None or scaffold.group(2) is None
            else scaffold.group(2).lower() == "effective"
        )
    level_hint = p.rubricLevel
    if level_hint is None:
        level_hint = hint.group(1).strip() if hint else None
    return intensity, effective, level_hint, quoted


def _read_evidence_signal(
    log: SessionLog, seq: int, p: ev.EvidenceSignal, envelope: Mapping[str, Any]
) -> None:
    """The latest revision of a ledger entry replaces the earlier ones (merged by id)."""
    previous = log.signals.get(p.signalId)
    intensity, effective, level_hint, quoted = _told(p)
    log.signals[p.signalId] = Signal(
        signal_id=p.signalId,
        first_seq=previous.first_seq if previous else seq,
        last_seq=seq,
        node_id=p.nodeId,
        target_id=p.targetIds[0] if p.targetIds else "",
        kind=p.signalKind.value,
        confidence=float(p.confidence),
        turn_ids=tuple(p.turnIds),
        stt_min=float(p.sttConfidenceSummary.min),
        stt_mean=float(p.sttConfidenceSummary.mean),
        description=p.description,
        dimension=p.evidenceDimension.value,
        revision=previous.revision + 1 if previous else 1,
        scaffolding=intensity,
        scaffolding_effective=effective,
        rubric_hint=level_hint,
        excerpt=quoted,
        passage_id=p.passageId,
    )


def _read_follow_up_used(
    log: SessionLog, seq: int, p: ev.FollowUpUsed, envelope: Mapping[str, Any]
) -> None:
    log.follow_ups.append(
        FollowUp(
            node_id=p.nodeId,
            index=p.followUpIndex,
            reason=p.reason,
            trigger_turn_id=p.triggerTurnId,
            seq=seq,
        )
    )


def _read_misconception_detected(
    log: SessionLog, seq: int, p: ev.MisconceptionDetected, envelope: Mapping[str, Any]
) -> None:
    log.misconceptions.append(
        Misconception(
            misconception_id=p.misconceptionId,
            node_id=p.nodeId,
            description=p.description,
            turn_ids=tuple(p.turnIds),
            target_ids=tuple(p.targetIds),
            confidence=float(p.confidence),
            seq=seq,
            signal_id=p.signalId,
        )
    )


def _read_self_correction_detected(
    log: SessionLog, seq: int, p: ev.SelfCorrectionDetected, envelope: Mapping[str, Any]
) -> None:
    log.self_corrections.append(
        SelfCorrection(
            node_id=p.nodeId,
            turn_ids=tuple(p.turnIds),
            original=p.originalClaim,
            corrected=p.correctedClaim,
            confidence=float(p.confidence),
            seq=seq,
        )
    )


def _read_hesitation_detected(
    log: SessionLog, seq: int, p: ev.HesitationDetected, envelope: Mapping[str, Any]
) -> None:
    log.hesitations.append(
        Hesitation(
            node_id=p.nodeId,
            turn_id=p.turnId,
            duration_ms=p.durationMs,
            context=p.context,
            seq=seq,
        )
    )


def _read_guardrail_triggered(
    log: SessionLog, seq: int, p: ev.GuardrailTriggered, envelope: Mapping[str, Any]
) -> None:
    log.guardrails.append(
        Guardrail(
            guardrail_id=p.guardrailId,
            guardrail_type=p.guardrailType,
            severity=p.severity,
            description=p.description,
            action=p.actionTaken,
            node_id=p.contextNodeId or log.node_at(seq),
            seq=seq,
            original_text=_original_text(p),
        )
    )


def _read_recovery_started(
    log: SessionLog, seq: int, p: ev.RecoveryStarted, envelope: Mapping[str, Any]
) -> None:
    """The first start of an episode opens it; a later one is another attempt."""
    existing = log.recoveries.get(p.recoveryId)
    if existing is not None:
        existing.attempts += 1
        return
    log.recoveries[p.recoveryId] = Recovery(
        recovery_id=p.recoveryId, recovery_type=p.recoveryType, node_id=p.nodeId, seq=seq
    )


def _read_recovery_resolved(
    log: SessionLog, seq: int, p: ev.RecoveryResolved, envelope: Mapping[str, Any]
) -> None:
    found = log.recoveries.get(p.recoveryId)
    if found is not None:
        found.resolution = p.resolution
        found.resolved_seq = seq


def _read_system_error(
    log: SessionLog, seq: int, p: ev.SystemErrorPayload, envelope: Mapping[str, Any]
) -> None:
    log.system_errors.append(
        SystemError(
            code=p.code,
            severity=p.severity,
            component=p.component,
            message=p.message,
            seq=seq,
            node_id=log.node_at(seq),
        )
    )


def _read_exam_state_changed(
    log: SessionLog, seq: int, p: ev.ExamStateChanged, envelope: Mapping[str, Any]
) -> None:
    log.state_changes.append(
        StateChange(
            from_state=p.fromState.value,
            to_state=p.toState.value,
            reason=p.reason or "",
            seq=seq,
            node_id=log.node_at(seq),
        )
    )


def _read_proctor_instruction(
    log: SessionLog, seq: int, p: ev.ProctorInstruction, envelope: Mapping[str, Any]
) -> None:
    log.proctor_instructions.append((seq, p.mode, p.status, p.nodeId))


def _read_proctor_action(
    log: SessionLog, seq: int, p: ev.ProctorActionTaken, envelope: Mapping[str, Any]
) -> None:
    """Every action is listed; a ``flag_irregularity`` is also kept whole."""
    at = p.nodeId or log.node_at(seq)
    log.proctor_actions.append((seq, p.action, p.reason or "", at))
    if p.action != "flag_irregularity":
        return
    log.irregularities.append(
        Irregularity(
            seq=seq,
            event_id=str(envelope.get("eventId", "")),
            timestamp=str(envelope.get("timestamp", "")),
            category=p.category,
            actor=p.actor,
            reason=p.reason or "",
            node_id=at,
            after_completion=log.completed_seq is not None and seq > log.completed_seq,
        )
    )


def _read_passage_drawn(
    log: SessionLog, seq: int, p: ev.PassageDrawn, envelope: Mapping[str, Any]
) -> None:
    log.passages.setdefault(
        p.nodeId,
        DrawnPassage(
            seq=seq,
            node_id=p.nodeId,
            outcome=p.outcome,
            passage_id=p.passageId,
            cue=p.cue,
            text=p.text,
        ),
    )


def _read_transition_decision(
    log: SessionLog, seq: int, p: ev.TransitionDecision, envelope: Mapping[str, Any]
) -> None:
    log.transitions.append((seq, p.fromNodeId, p.toNodeId, p.reason))


def _read_exam_completed(
    log: SessionLog, seq: int, p: ev.ExamCompleted, envelope: Mapping[str, Any]
) -> None:
    """The first ``exam_completed`` counts; its payload is kept as stored."""
    if log.completed is not None:
        return
    log.completed = dict(envelope["payload"])
    log.completed_seq = seq


_Reader = Callable[[SessionLog, int, ev.Payload, Mapping[str, Any]], None]
"""Folds one event (seq, typed payload, stored envelope) into the log."""


def _on[P: ev.Payload](
    kind: type[P], read: Callable[[SessionLog, int, P, Mapping[str, Any]], None]
) -> tuple[str, tuple[type[ev.Payload], _Reader]]:
    """A table row: the event type, its payload model and its reader."""

    def run(log: SessionLog, seq: int, payload: ev.Payload, envelope: Mapping[str, Any]) -> None:
        if isinstance(payload, kind):
            read(log, seq, payload, envelope)

    name = kind.model_fields["type"].default
    return str(name), (kind, run)


_READERS: Final[Mapping[str, tuple[type[ev.Payload], _Reader]]] = dict(
    (
        _on(ev.TranscriptFinal, _read_transcript_final),
        _on(ev.TranscriptCorrected, _read_transcript_corrected),
        _on(ev.ExaminerUtteranceFinal, _read_examiner_utterance_final),
        _on(ev.NodeEntered, _read_node_entered),
        _on(ev.NodeExited, _read_node_exited),
        _on(ev.EvidenceSignal, _read_evidence_signal),
        _on(ev.FollowUpUsed, _read_follow_up_used),
        _on(ev.MisconceptionDetected, _read_misconception_detected),
        _on(ev.SelfCorrectionDetected, _read_self_correction_detected),
        _on(ev.HesitationDetected, _read_hesitation_detected),
        _on(ev.GuardrailTriggered, _read_guardrail_triggered),
        _on(ev.RecoveryStarted, _read_recovery_started),
        _on(ev.RecoveryResolved, _read_recovery_resolved),
        _on(ev.SystemErrorPayload, _read_system_error),
        _on(ev.ExamStateChanged, _read_exam_state_changed),
        _on(ev.ProctorInstruction, _read_proctor_instruction),
        _on(ev.ProctorActionTaken, _read_proctor_action),
        _on(ev.TransitionDecision, _read_transition_decision),
        _on(ev.PassageDrawn, _read_passage_drawn),
        _on(ev.ExamCompleted, _read_exam_completed),
    )
)
"""One payload model and reader per event type of :data:`READ_TYPES`, keyed by ``type``."""


def read_log(events: Iterable[Mapping[str, Any]]) -> SessionLog:
    """Fold a session's stored envelopes (in seq order) into a :class:`SessionLog`. Each read
    payload is validated by its model (:mod:`ioa.events.payloads`); one that does not validate
    is counted as unreadable and skipped."""
    log = SessionLog()
    for event in events:
        kind = event.get("type")
        seq = event.get("seq")
        if not isinstance(seq, int):
            continue
        if not log.session_id:
            log.session_id = str(event.get("sessionId", ""))
        log.last_seq = max(log.last_seq, seq)
        if kind not in READ_TYPES:
            continue
        model, read = _READERS[str(kind)]
        raw = event.get("payload")
        try:
            payload = model.model_validate(dict(raw) if isinstance(raw, Mapping) else raw)
        except ValidationError:
            log.unreadable += 1
            continue
        read(log, seq, payload, event)
    return log
