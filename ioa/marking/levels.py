"""Rubric levels as an ordinal scale (EVD-006: excellent, satisfactory, partial, absent).

Marking works on the four levels of a ``rubricDescriptor``; their order is what the rules, the
scores and Krippendorff's ordinal alpha rely on. A level is worth ``points`` out of
:data:`MAX_POINTS`; a target's score is ``points / MAX_POINTS`` (linear: the simplest mapping
a teacher can check by hand, and the one an ordinal scale suggests without inventing
intervals).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final


class Level(IntEnum):
    """A rubric level; the integer value is its rank (and its points)."""

    ABSENT = 0
    PARTIAL = 1
    SATISFACTORY = 2
    EXCELLENT = 3

    @property
    def label(self) -> str:
        """The JSON spelling: ``absent``, ``partial``, ``satisfactory``, ``excellent``."""
        return self.name.lower()

    @property
    def title(self) -> str:
        """For people: ``Absent``, ``Partial``..."""
        return self.name.capitalize()

    @property
    def points(self) -> int:
        return int(self)

    @property
    def score(self) -> float:
        """The share of the target's marks this level earns, in [0, 1]."""
        return round(int(self) / MAX_POINTS, 6)

    @classmethod
    def parse(cls, value: object) -> Level:
        """A level from its name (any case) or its rank; ``ValueError`` otherwise."""
        if isinstance(value, Level):
            return value
        if isinstance(value, bool):
            raise ValueError(f"not a rubric level: {value!r}")
        if isinstance(value, int):
            return cls(value)
        if isinstance(value, str):
            key = value.strip().upper()
            if key in cls.__members__:
                return cls[key]
        raise ValueError(f"not a rubric level: {value!r}")


MAX_POINTS: Final = 3
LEVELS_DESCENDING: Final = (Level.EXCELLENT, Level.SATISFACTORY, Level.PARTIAL, Level.ABSENT)
