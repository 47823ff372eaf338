"""The evidence ledger's records (our 06 chapter, ``docs/spec/evidence-ledger.md``).

A :class:`LedgerEntry` is exactly what an ``evidence_signal`` event carries, so the ledger is
rebuilt from a session's events without loss: the live ledger and a replayed one are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ioa.schema.enums import EvidenceDimension, SignalKind

COVERING_KINDS: Final = frozenset({SignalKind.POSITIVE, SignalKind.SELF_CORRECTION})
"""Signal kinds that count a target as evidenced (completion policy, ``evidence_satisfied``,
coverage): spec-notes §2."""

PROCESS_KINDS: Final = frozenset(
    {SignalKind.PROCESS_POSITIVE, SignalKind.PROCESS_NEGATIVE, SignalKind.SELF_CORRECTION}
)
"""Kinds about the reasoning process; their default dimension is ``metacognitive``."""


@dataclass(frozen=True, slots=True)
class SttSummary:
    """STT confidence of the transcript turns a signal rests on (EVD-010)."""

    min: float
    max: float
    mean: float
    turn_count: int

    @classmethod
    def of(cls, confidences: list[float]) -> SttSummary:
        """The summary of a non-empty list of turn confidences."""
        if not confidences:
            raise ValueError("an STT summary needs at least one turn")
        mean = round(sum(confidences) / len(confidences), 6)
        return cls(min(confidences), max(confidences), mean, len(confidences))

    def to_payload(self) -> dict[str, float | int]:
        """The ``sttConfidenceSummary`` object of an ``evidence_signal`` payload."""
        return {"min": self.min, "max": self.max, "mean": self.mean, "turnCount": self.turn_count}


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One accepted signal: a (node, target, kind) with its supporting turns."""

    signal_id: str
    node_id: str
    target_id: str
    signal_kind: SignalKind
    dimension: EvidenceDimension
    description: str
    confidence: float
    turn_ids: tuple[str, ...]
    stt: SttSummary
    llm_proposal: bool
    revision: int = 1
    """1 for the first ``evidence_signal`` of this ``signalId``, +1 for every merge."""
    excerpt: str | None = None
    """The candidate's words the LLM quoted (at most 200 characters)."""
    rubric_level: str | None = None
    """The rubric level the LLM reported, when it gave a usable one."""
    scaffolding_intensity: int | None = None
    """``scaffoldingIntensity`` (0-3), when the LLM gave a usable one."""
    scaffolding_effective: bool | None = None
    """``scaffoldingEffective``, when the LLM gave one."""

    @property
    def key(self) -> tuple[str, str, SignalKind]:
        """Duplicates are merged per (node, target, kind)."""
        return (self.node_id, self.target_id, self.signal_kind)

    @property
    def covers(self) -> bool:
        """Whether this entry evidences its target (positive or self_correction)."""
        return self.signal_kind in COVERING_KINDS


@dataclass(frozen=True, slots=True)
class TargetInfo:
    """What the ledger needs to know about one evidence target of a node."""

    target_id: str
    label: str
    weight: float | None
    dimension: EvidenceDimension | None


@dataclass(frozen=True, slots=True)
class TurnInfo:
    """What the ledger needs to know about one candidate transcript turn."""

    turn_id: str
    text: str
    confidence: float
    distrusted: bool = False
    """The turn contained a prompt-injection attempt: nothing it says is evidence."""
