"""Reading a session's stored event log for marking (chapter 05 §6.3 replay).

:func:`read_log` folds wire envelopes (as ``sessions.selectors.wire_from_row`` returns them, in
``seq`` order) into a :class:`SessionLog`. It reads:

* the **minimum marking stream** of §6.3 — ``node_entered``, ``node_exited``,
  ``transcript_final``, ``examiner_utterance_final``, ``evidence_signal``, ``follow_up_used``,
  ``transition_decision``, ``guardrail_triggered``, ``hesitation_detected``,
  ``self_correction_detected``, ``exam_completed`` — from which every level is decided;
* the other marking-audience types of our protocol (``misconception_detected``,
  ``exam_state_changed``, ``proctor_instruction``, ``proctor_action``); a proctor's
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

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
    {"misconception_detected", "exam_state_changed", "proctor_instruction", "proctor_action"}
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


@dataclass(frozen=True, slots=True)
class Utterance:
    """One ``examiner_utterance_final`` (what the candidate actually heard)."""

    utterance_id: str
    seq: int
    node_id: str
    text: str
    purpose: str
    duration_ms: int


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
            if t.speaker == "candidate" and (node_id is None or t.node_id == node_id)
        ]

    def turns_at(self, node_id: str) -> list[Turn]:
        return [self.turns[t] for t in self.turn_order if self.turns[t].node_id == node_id]


def _num(value: Any, default: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)


def _int(value: Any, default: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return int(value)


def _strs(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(str(item) for item in value)


_ORIGINAL: Final = re.compile(r'Original text: "(.*)"\. Replacement text: "', re.DOTALL)


def _original_text(payload: Mapping[str, Any]) -> str | None:
    value = payload.get("originalText")
    if isinstance(value, str):
        return value
    match = _ORIGINAL.search(str(payload.get("description", "")))
    return match.group(1) if match else None


def _apply(
    log: SessionLog, kind: str, seq: int, p: Mapping[str, Any], event: Mapping[str, Any]
) -> None:
    if kind == "transcript_final":
        turn = Turn(
            turn_id=str(p["turnId"]),
            seq=seq,
            speaker=str(p["speaker"]),
            text=str(p["text"]),
            node_id=str(p["nodeId"]),
            confidence=_num(p.get("confidence"), 1.0),
            start_ms=_int(p.get("startTimeMs")),
            end_ms=_int(p.get("endTimeMs")),
        )
        if turn.turn_id not in log.turns:
            log.turn_order.append(turn.turn_id)
        log.turns[turn.turn_id] = turn
    elif kind == "examiner_utterance_final":
        log.utterances.append(
            Utterance(
                utterance_id=str(p["utteranceId"]),
                seq=seq,
                node_id=str(p["nodeId"]),
                text=str(p["text"]),
                purpose=str(p["purpose"]),
                duration_ms=_int(p.get("durationMs")),
            )
        )
    elif kind == "node_entered":
        log.visits.append(
            Visit(
                node_id=str(p["nodeId"]),
                node_kind=str(p.get("nodeKind", "")),
                entered_seq=seq,
                max_follow_ups=_int(p.get("maxFollowUps")),
            )
        )
    elif kind == "node_exited":
        node_id = str(p["nodeId"])
        for visit in reversed(log.visits):
            if visit.node_id == node_id and visit.exited_seq is None:
                visit.exited_seq = seq
                visit.exit_reason = str(p["reason"])
                visit.duration_sec = _num(p.get("durationSec"))
                visit.follow_ups_used = _int(p.get("followUpsUsed"))
                break
    elif kind == "evidence_signal":
        signal_id = str(p["signalId"])
        previous = log.signals.get(signal_id)
        summary = p.get("sttConfidenceSummary") or {}
        description = str(p.get("description", ""))
        scaffold = _SCAFFOLDING.search(description)
        hint = _RUBRIC_HINT.search(description)
        quoted = p.get("excerpt")
        if not isinstance(quoted, str):
            matched = _EXCERPT.search(description)
            quoted = matched.group(1) if matched else ""
        intensity = p.get("scaffoldingIntensity")
        if not isinstance(intensity, int) or isinstance(intensity, bool):
            intensity = int(scaffold.group(1)) if scaffold else None
        effective = p.get("scaffoldingEffective")
        if not isinstance(effective, bool):
            effective = (
                None
                if scaffold is None or scaffold.group(2) is None
                else scaffold.group(2).lower() == "effective"
            )
        level_hint = p.get("rubricLevel")
        if not isinstance(level_hint, str):
            level_hint = hint.group(1).strip() if hint else None
        targets = _strs(p.get("targetIds"))
        log.signals[signal_id] = Signal(
            signal_id=signal_id,
            first_seq=previous.first_seq if previous else seq,
            last_seq=seq,
            node_id=str(p["nodeId"]),
            target_id=targets[0] if targets else "",
            kind=str(p["signalKind"]),
            confidence=_num(p.get("confidence")),
            turn_ids=_strs(p.get("turnIds")),
            stt_min=_num(summary.get("min"), 1.0),
            stt_mean=_num(summary.get("mean"), 1.0),
            description=description,
            dimension=str(p.get("evidenceDimension", "")),
            revision=previous.revision + 1 if previous else 1,
            scaffolding=intensity,
            scaffolding_effective=effective,
            rubric_hint=level_hint,
            excerpt=quoted,
        )
    elif kind == "follow_up_used":
        log.follow_ups.append(
            FollowUp(
                node_id=str(p["nodeId"]),
                index=_int(p.get("followUpIndex"), 1),
                reason=str(p.get("reason", "")),
                trigger_turn_id=str(p.get("triggerTurnId", "")),
                seq=seq,
            )
        )
    elif kind == "misconception_detected":
        log.misconceptions.append(
            Misconception(
                misconception_id=str(p["misconceptionId"]),
                node_id=str(p["nodeId"]),
                description=str(p.get("description", "")),
                turn_ids=_strs(p.get("turnIds")),
                target_ids=_strs(p.get("targetIds")),
                confidence=_num(p.get("confidence"), 0.5),
                seq=seq,
                signal_id=str(p["signalId"]) if p.get("signalId") else None,
            )
        )
    elif kind == "self_correction_detected":
        log.self_corrections.append(
            SelfCorrection(
                node_id=str(p["nodeId"]),
                turn_ids=_strs(p.get("turnIds")),
                original=str(p.get("originalClaim", "")),
                corrected=str(p.get("correctedClaim", "")),
                confidence=_num(p.get("confidence")),
                seq=seq,
            )
        )
    elif kind == "hesitation_detected":
        log.hesitations.append(
            Hesitation(
                node_id=str(p["nodeId"]),
                turn_id=str(p.get("turnId", "")),
                duration_ms=_int(p.get("durationMs")),
                context=str(p.get("context", "")),
                seq=seq,
            )
        )
    elif kind == "guardrail_triggered":
        node = p.get("contextNodeId")
        log.guardrails.append(
            Guardrail(
                guardrail_id=str(p["guardrailId"]),
                guardrail_type=str(p["guardrailType"]),
                severity=str(p.get("severity", "warning")),
                description=str(p.get("description", "")),
                action=str(p.get("actionTaken", "")),
                node_id=str(node) if node else log.node_at(seq),
                seq=seq,
                original_text=_original_text(p),
            )
        )
    elif kind == "recovery_started":
        recovery_id = str(p["recoveryId"])
        existing = log.recoveries.get(recovery_id)
        if existing is None:
            log.recoveries[recovery_id] = Recovery(
                recovery_id=recovery_id,
                recovery_type=str(p["recoveryType"]),
                node_id=str(p["nodeId"]),
                seq=seq,
            )
        else:
            existing.attempts += 1
    elif kind == "recovery_resolved":
        found = log.recoveries.get(str(p["recoveryId"]))
        if found is not None:
            found.resolution = str(p.get("resolution", ""))
            found.resolved_seq = seq
    elif kind == "system_error":
        log.system_errors.append(
            SystemError(
                code=str(p.get("code", "")),
                severity=str(p.get("severity", "error")),
                component=str(p.get("component", "")),
                message=str(p.get("message", "")),
                seq=seq,
                node_id=log.node_at(seq),
            )
        )
    elif kind == "exam_state_changed":
        log.state_changes.append(
            StateChange(
                from_state=str(p.get("fromState", "")),
                to_state=str(p.get("toState", "")),
                reason=str(p.get("reason") or ""),
                seq=seq,
                node_id=log.node_at(seq),
            )
        )
    elif kind == "proctor_instruction":
        node = p.get("nodeId")
        log.proctor_instructions.append(
            (seq, str(p.get("mode", "")), str(p.get("status", "")), str(node) if node else None)
        )
    elif kind == "proctor_action":
        node = p.get("nodeId")
        action = str(p.get("action", ""))
        at: str | None = str(node) if node else log.node_at(seq)
        log.proctor_actions.append((seq, action, str(p.get("reason") or ""), at))
        if action == "flag_irregularity":
            category = p.get("category")
            log.irregularities.append(
                Irregularity(
                    seq=seq,
                    event_id=str(event.get("eventId", "")),
                    timestamp=str(event.get("timestamp", "")),
                    category=str(category) if category else None,
                    actor=str(p.get("actor", "")),
                    reason=str(p.get("reason") or ""),
                    node_id=at,
                    after_completion=log.completed_seq is not None and seq > log.completed_seq,
                )
            )
    elif kind == "transition_decision":
        log.transitions.append(
            (
                seq,
                str(p.get("fromNodeId", "")),
                str(p.get("toNodeId", "")),
                str(p.get("reason", "")),
            )
        )
    elif kind == "exam_completed" and log.completed is None:
        log.completed = dict(p)
        log.completed_seq = seq


def read_log(events: Iterable[Mapping[str, Any]]) -> SessionLog:
    """Fold a session's stored envelopes (in seq order) into a :class:`SessionLog`."""
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
        payload = event.get("payload")
        if not isinstance(payload, Mapping):
            log.unreadable += 1
            continue
        try:
            _apply(log, str(kind), seq, payload, event)
        except (KeyError, TypeError, ValueError):
            log.unreadable += 1
    return log
