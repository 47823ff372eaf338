"""The evidence ledger of one session (our 06 chapter).

The ledger is the structured, real-time record of assessment evidence. It changes only through
:meth:`EvidenceLedger.record` (with an entry the controller also emits as an ``evidence_signal``
event) and :meth:`EvidenceLedger.apply_payload` (the same entry read back from a stored event),
so a replayed ledger equals the live one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ioa.errors import LedgerError
from ioa.ledger.model import LedgerEntry, SttSummary, TargetInfo
from ioa.schema.enums import EvidenceDimension, SignalKind


def _unit(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LedgerError(f"evidence_signal payload: {name} must be a number")
    return float(value)


def _optional[T](payload: Mapping[str, Any], key: str, kind: type[T]) -> T | None:
    """An optional payload field (absent in logs written before it existed)."""
    value = payload.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise LedgerError(f"evidence_signal payload: {key} must be a {kind.__name__}")
    return value


@dataclass
class EvidenceLedger:
    """Accepted signals by id, with an index by (node, target, kind)."""

    entries: dict[str, LedgerEntry] = field(default_factory=dict)
    by_key: dict[tuple[str, str, SignalKind], LedgerEntry] = field(default_factory=dict)

    def next_signal_id(self) -> str:
        """The id the next new entry gets (``sig-001``, ``sig-002``...)."""
        return f"sig-{len(self.entries) + 1:03d}"

    def record(self, entry: LedgerEntry) -> None:
        """Store a new or merged entry (it replaces the entry with the same id)."""
        self.entries[entry.signal_id] = entry
        self.by_key[entry.key] = entry

    def apply_payload(self, payload: Mapping[str, Any]) -> LedgerEntry:
        """Record the entry an ``evidence_signal`` payload describes (replay and live)."""
        try:
            signal_id = str(payload["signalId"])
            targets = list(payload["targetIds"])
            summary = payload["sttConfidenceSummary"]
            previous = self.entries.get(signal_id)
            entry = LedgerEntry(
                signal_id=signal_id,
                node_id=str(payload["nodeId"]),
                target_id=str(targets[0]),
                signal_kind=SignalKind(payload["signalKind"]),
                dimension=EvidenceDimension(payload["evidenceDimension"]),
                description=str(payload["description"]),
                confidence=_unit(payload["confidence"], "confidence"),
                turn_ids=tuple(str(t) for t in payload["turnIds"]),
                stt=SttSummary(
                    min=_unit(summary["min"], "min"),
                    max=_unit(summary["max"], "max"),
                    mean=_unit(summary["mean"], "mean"),
                    turn_count=int(summary["turnCount"]),
                ),
                llm_proposal=bool(payload["llmProposal"]),
                revision=1 if previous is None else previous.revision + 1,
                excerpt=_optional(payload, "excerpt", str),
                rubric_level=_optional(payload, "rubricLevel", str),
                scaffolding_intensity=_optional(payload, "scaffoldingIntensity", int),
                scaffolding_effective=_optional(payload, "scaffoldingEffective", bool),
            )
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise LedgerError(f"cannot read evidence_signal payload: {exc}") from exc
        self.record(entry)
        return entry

    def for_node(self, node_id: str) -> list[LedgerEntry]:
        """The entries of one node, in signal id order."""
        return [entry for entry in self.entries.values() if entry.node_id == node_id]

    def covered_targets(self, node_id: str) -> set[str]:
        """Targets of ``node_id`` with an accepted positive or self_correction signal."""
        return {e.target_id for e in self.by_key.values() if e.node_id == node_id and e.covers}

    def satisfied(self, node_id: str, target_ids: Iterable[str]) -> bool:
        """Whether every one of ``target_ids`` is covered at ``node_id``."""
        covered = self.covered_targets(node_id)
        return all(target in covered for target in target_ids)

    def coverage(self, node_id: str, targets: Iterable[TargetInfo]) -> float:
        """Weighted share of the node's targets that are covered, in [0, 1].

        Weights are the targets' ``weight``; when no target declares one, all count equally;
        a target without a weight next to weighted ones counts 0.
        """
        items = list(targets)
        if not items:
            return 0.0
        covered = self.covered_targets(node_id)
        if all(t.weight is None for t in items):
            return round(sum(1 for t in items if t.target_id in covered) / len(items), 6)
        total = sum(t.weight or 0.0 for t in items)
        if total <= 0:
            return 0.0
        share = sum(t.weight or 0.0 for t in items if t.target_id in covered)
        return round(min(1.0, share / total), 6)

    def __len__(self) -> int:
        return len(self.entries)
