"""Deciding what to do with one proposed signal: reject it, record it, merge it, or ignore it
as a duplicate (EVD-008..010, our 06 chapter).

Checks, in order (the first failure rejects the signal):

1. ``signalType`` is a string naming an evidence target of the current node (EVD-008/009:
   the node's targets are the vocabulary; unknown target ids are rejected);
2. ``signalKind`` is one of the eight kinds (EVD-008);
3. ``confidence`` is a number in [0, 1];
4. the signal links to at least one candidate transcript turn of the node (EVD-009 turnIds);
5. none of those turns is distrusted (a prompt-injection attempt is not evidence);
6. the lowest STT confidence of those turns is at least 0.5 (EVD-010); below, the signal is
   rejected and the runtime routes the node to its ``stt_low_confidence`` recovery.

An accepted signal whose (node, target, kind) is already in the ledger is merged into that
entry: the union of turns, the higher confidence, the STT summary recomputed over all turns; the
excerpt, rubric level and scaffolding report stay the entry's, each filled from the merged
signal when the entry has none. A merge that changes nothing is a duplicate and is not recorded
again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

from ioa.ledger.linking import link_turns
from ioa.ledger.model import PROCESS_KINDS, LedgerEntry, SttSummary, TargetInfo, TurnInfo
from ioa.ledger.proposals import SignalProposal
from ioa.schema.enums import EvidenceDimension, SignalKind

STT_MIN_CONFIDENCE: Final = 0.5
"""EVD-010: signals are never recorded from turns below this STT confidence."""

_KINDS: Final = frozenset(kind.value for kind in SignalKind)

_KIND_PHRASES: Final[Mapping[SignalKind, str]] = {
    SignalKind.POSITIVE: "Positive evidence",
    SignalKind.PARTIAL: "Partial evidence",
    SignalKind.ABSENT: "No evidence",
    SignalKind.MISCONCEPTION: "Misconception",
    SignalKind.FLAWED_REASONING: "Flawed reasoning",
    SignalKind.PROCESS_POSITIVE: "Sound reasoning process",
    SignalKind.PROCESS_NEGATIVE: "Weak reasoning process",
    SignalKind.SELF_CORRECTION: "Self-correction",
}


class RejectionCode(StrEnum):
    """Why a proposed signal was not recorded."""

    UNKNOWN_TARGET = "unknown_target"
    INVALID_SIGNAL_KIND = "invalid_signal_kind"
    INVALID_CONFIDENCE = "invalid_confidence"
    NO_TRANSCRIPT_TURN = "no_transcript_turn"
    DISTRUSTED_TURN = "distrusted_turn"
    STT_LOW_CONFIDENCE = "stt_low_confidence"


RULE_OF: Final[Mapping[RejectionCode, str]] = {
    RejectionCode.UNKNOWN_TARGET: "EVD-008",
    RejectionCode.INVALID_SIGNAL_KIND: "EVD-008",
    RejectionCode.INVALID_CONFIDENCE: "EVD-009",
    RejectionCode.NO_TRANSCRIPT_TURN: "EVD-009",
    RejectionCode.DISTRUSTED_TURN: "EVD-009",
    RejectionCode.STT_LOW_CONFIDENCE: "EVD-010",
}


@dataclass(frozen=True, slots=True)
class Rejected:
    """The signal is not recorded."""

    proposal: SignalProposal
    code: RejectionCode
    reason: str
    turn_ids: tuple[str, ...] = ()

    @property
    def rule_id(self) -> str:
        """The rule the rejection enforces."""
        return RULE_OF[self.code]


@dataclass(frozen=True, slots=True)
class Recorded:
    """The signal is recorded: a new entry (``revision == 1``) or a merge (``> 1``)."""

    proposal: SignalProposal
    entry: LedgerEntry
    linked_by: str

    @property
    def merged(self) -> bool:
        """True when an existing entry was updated."""
        return self.entry.revision > 1


@dataclass(frozen=True, slots=True)
class Duplicate:
    """The signal repeats an entry exactly: nothing new to record."""

    proposal: SignalProposal
    signal_id: str


SignalDecision = Rejected | Recorded | Duplicate


def _valid_confidence(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if 0.0 <= number <= 1.0 else None


def default_dimension(kind: SignalKind, declared: EvidenceDimension | None) -> EvidenceDimension:
    """The target's dimension, else ``metacognitive`` for process kinds, else
    ``knowledge_understanding`` (our 06 chapter)."""
    if declared is not None:
        return declared
    if kind in PROCESS_KINDS:
        return EvidenceDimension.METACOGNITIVE
    return EvidenceDimension.KNOWLEDGE_UNDERSTANDING


def describe(kind: SignalKind, target: TargetInfo, proposal: SignalProposal) -> str:
    """The human-readable ``description`` of an evidence event: the kind and the target's
    label. The candidate's words, the rubric level and the scaffolding report have fields of
    their own (``excerpt``, ``rubricLevel``, ``scaffoldingIntensity``,
    ``scaffoldingEffective``)."""
    return f"{_KIND_PHRASES[kind]} for '{target.label}'"


@dataclass(frozen=True, slots=True)
class _Accepted:
    """A proposal that passed every check: what the entry is made of."""

    target_id: str
    target: TargetInfo
    kind: SignalKind
    confidence: float
    linked: tuple[TurnInfo, ...]
    linked_by: str

    @property
    def turn_ids(self) -> tuple[str, ...]:
        return tuple(turn.turn_id for turn in self.linked)

    def quoted(self, proposal: SignalProposal) -> str | None:
        """The excerpt when it is the candidate's words (found in their turns, §3), else
        ``None``: words they did not say (a passage of their submission the model copied, an
        injected instruction, the model's paraphrase) are never stored as theirs."""
        return (proposal.excerpt_text or None) if self.linked_by == "excerpt" else None


def decide_signal(
    proposal: SignalProposal,
    *,
    node_id: str,
    targets: Mapping[str, TargetInfo],
    node_turns: Sequence[TurnInfo],
    answer_turns: Sequence[TurnInfo],
    existing: Mapping[tuple[str, str, SignalKind], LedgerEntry],
    turn_confidence: Mapping[str, float],
    next_signal_id: str,
) -> SignalDecision:
    """Decide on one proposal (pure; see the module docstring for the checks)."""
    checked = _check_vocabulary(proposal, node_id, targets)
    if isinstance(checked, Rejected):
        return checked
    target_id, kind, confidence = checked
    linked, how = link_turns(proposal.excerpt_text, node_turns, answer_turns)
    accepted = _Accepted(target_id, targets[target_id], kind, confidence, tuple(linked), how)
    rejected = _check_turns(proposal, node_id, accepted)
    if rejected is not None:
        return rejected
    previous = existing.get((node_id, target_id, kind))
    if previous is None:
        return Recorded(proposal, _new_entry(proposal, accepted, node_id, next_signal_id), how)
    return _merge(proposal, accepted, previous, turn_confidence, node_id)


def _check_vocabulary(
    proposal: SignalProposal, node_id: str, targets: Mapping[str, TargetInfo]
) -> Rejected | tuple[str, SignalKind, float]:
    """Checks 1-3: (target id, kind, confidence), else the rejection."""
    signal_type = proposal.signal_type
    if not isinstance(signal_type, str) or signal_type not in targets:
        return Rejected(
            proposal,
            RejectionCode.UNKNOWN_TARGET,
            f"signalType {proposal.target_id} is not an evidence target of node {node_id}",
        )
    if not isinstance(proposal.signal_kind, str) or proposal.signal_kind not in _KINDS:
        return Rejected(
            proposal,
            RejectionCode.INVALID_SIGNAL_KIND,
            f"signalKind {proposal.signal_kind!r} is not one of {', '.join(sorted(_KINDS))}",
        )
    confidence = _valid_confidence(proposal.confidence)
    if confidence is None:
        return Rejected(
            proposal,
            RejectionCode.INVALID_CONFIDENCE,
            f"confidence {proposal.confidence!r} is not a number between 0 and 1",
        )
    return signal_type, SignalKind(proposal.signal_kind), confidence


def _check_turns(proposal: SignalProposal, node_id: str, accepted: _Accepted) -> Rejected | None:
    """Checks 4-6: linked to a candidate turn, none distrusted, none heard below EVD-010."""
    if not accepted.linked:
        return Rejected(
            proposal,
            RejectionCode.NO_TRANSCRIPT_TURN,
            f"no candidate turn at node {node_id} supports the signal",
        )
    if any(turn.distrusted for turn in accepted.linked):
        return Rejected(
            proposal,
            RejectionCode.DISTRUSTED_TURN,
            "the supporting turn contains instructions addressed to the examiner",
            accepted.turn_ids,
        )
    lowest = min(turn.confidence for turn in accepted.linked)
    if lowest < STT_MIN_CONFIDENCE:
        return Rejected(
            proposal,
            RejectionCode.STT_LOW_CONFIDENCE,
            f"STT confidence {lowest:.2f} of the supporting turn is below {STT_MIN_CONFIDENCE}",
            accepted.turn_ids,
        )
    return None


def _new_entry(
    proposal: SignalProposal, accepted: _Accepted, node_id: str, signal_id: str
) -> LedgerEntry:
    """The first entry of its (node, target, kind)."""
    kind, target = accepted.kind, accepted.target
    return LedgerEntry(
        signal_id=signal_id,
        node_id=node_id,
        target_id=accepted.target_id,
        signal_kind=kind,
        dimension=default_dimension(kind, target.dimension),
        description=describe(kind, target, proposal),
        confidence=accepted.confidence,
        turn_ids=accepted.turn_ids,
        stt=SttSummary.of([turn.confidence for turn in accepted.linked]),
        llm_proposal=True,
        excerpt=accepted.quoted(proposal),
        rubric_level=proposal.rubric_level_text,
        scaffolding_intensity=proposal.scaffolding,
        scaffolding_effective=proposal.scaffolding_helped,
    )


def _merge(
    proposal: SignalProposal,
    accepted: _Accepted,
    previous: LedgerEntry,
    turn_confidence: Mapping[str, float],
    node_id: str,
) -> Recorded | Duplicate:
    """The entry merged with the proposal (module docstring), or a duplicate when the merge
    changes nothing."""
    merged_ids = previous.turn_ids + tuple(
        t for t in accepted.turn_ids if t not in previous.turn_ids
    )
    merged_confidence = max(previous.confidence, accepted.confidence)
    if merged_ids == previous.turn_ids and merged_confidence == previous.confidence:
        return Duplicate(proposal, previous.signal_id)
    confidences = [turn_confidence[turn_id] for turn_id in merged_ids if turn_id in turn_confidence]
    entry = replace(
        previous,
        node_id=node_id,
        target_id=accepted.target_id,
        signal_kind=accepted.kind,
        confidence=merged_confidence,
        turn_ids=merged_ids,
        stt=SttSummary.of(confidences) if confidences else previous.stt,
        llm_proposal=True,
        revision=previous.revision + 1,
        excerpt=_first(previous.excerpt, accepted.quoted(proposal)),
        rubric_level=_first(previous.rubric_level, proposal.rubric_level_text),
        scaffolding_intensity=_first(previous.scaffolding_intensity, proposal.scaffolding),
        scaffolding_effective=_first(previous.scaffolding_effective, proposal.scaffolding_helped),
    )
    return Recorded(proposal, entry, accepted.linked_by)


def _first[T](kept: T | None, fallback: T | None) -> T | None:
    """The entry's own value, else the merged signal's."""
    return kept if kept is not None else fallback
