"""Signals proposed by the LLM in ``report_observation`` (chapter 07 §3), read leniently.

A malformed signal never fails the whole observation: it is kept as a :class:`SignalProposal`
with whatever could be read, and the ledger rejects it with a reason (EVD-008/009).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

EXCERPT_MAX_CHARS: Final = 200
RUBRIC_LEVEL_MAX_CHARS: Final = 64


@dataclass(frozen=True, slots=True)
class SignalProposal:
    """One entry of ``report_observation.signals`` as the LLM sent it."""

    signal_type: object
    signal_kind: object
    excerpt: object
    confidence: object
    rubric_level: object = None
    scaffolding_intensity: object = None
    scaffolding_effective: object = None

    @classmethod
    def from_args(cls, item: object) -> SignalProposal:
        """Read one signal item (any JSON value)."""
        data: Mapping[str, Any] = item if isinstance(item, Mapping) else {}
        return cls(
            signal_type=data.get("signalType"),
            signal_kind=data.get("signalKind"),
            excerpt=data.get("excerpt"),
            confidence=data.get("confidence"),
            rubric_level=data.get("rubricLevel"),
            scaffolding_intensity=data.get("scaffoldingIntensity"),
            scaffolding_effective=data.get("scaffoldingEffective"),
        )

    @property
    def target_id(self) -> str:
        """The proposed target id as text (for messages)."""
        return self.signal_type if isinstance(self.signal_type, str) else repr(self.signal_type)

    @property
    def excerpt_text(self) -> str:
        """The excerpt, cut to 200 characters (chapter 07 §3); empty if not a string."""
        return self.excerpt[:EXCERPT_MAX_CHARS].strip() if isinstance(self.excerpt, str) else ""

    @property
    def rubric_level_text(self) -> str | None:
        """The rubric level when it is a short string, else None."""
        level = self.rubric_level
        if isinstance(level, str) and 0 < len(level.strip()) <= RUBRIC_LEVEL_MAX_CHARS:
            return level.strip()
        return None

    @property
    def scaffolding(self) -> int | None:
        """``scaffoldingIntensity`` when it is an integer 0-3, else None."""
        value = self.scaffolding_intensity
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
            return value
        return None

    @property
    def scaffolding_helped(self) -> bool | None:
        """``scaffoldingEffective`` when it is a boolean, else None."""
        value = self.scaffolding_effective
        return value if isinstance(value, bool) else None
