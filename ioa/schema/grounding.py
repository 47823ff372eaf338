"""Grounded nodes: ``nodes[].grounding`` (docs/spec/candidate-materials.md §1).

A grounded node asks about a passage of the candidate's own material. The runtime draws the
passage (never the LLM); the package only says which kind of material to read, what the
passage must state, how long it may be, and what to ask when no passage qualifies.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Final

from pydantic import Field

from ioa.schema.fields import Lax, StrictModel, Text

MIN_PASSAGE_CHARS: Final = 80
"""The smallest ``maxPassageChars`` an author may set."""
MAX_PASSAGE_CHARS: Final = 600
"""The longest passage the cutter ever keeps, and the largest ``maxPassageChars``."""
DEFAULT_PASSAGE_CHARS: Final = 400


class MaterialKind(StrEnum):
    """``grounding.material``: the kind of attached material a node reads."""

    SUBMISSION = "submission"
    REPORT = "report"


class PassagePick(StrEnum):
    """``grounding.pick``: what the drawn passage must state (``any``: one of the three)."""

    CHOICE = "choice"
    RESULT = "result"
    LIMITATION = "limitation"
    ANY = "any"


class Grounding(StrictModel):
    """Ask about a passage of the candidate's material (question and scenario nodes, GRD-001;
    no ``prompt.opening``, GRD-002; at least one evidence target, GRD-003)."""

    material: Annotated[MaterialKind, Lax] = MaterialKind.SUBMISSION
    """Only materials attached with this kind are read."""
    pick: Annotated[PassagePick, Lax]
    """What the passage states: a choice, a result, a limitation, or any of them."""
    maxPassageChars: Annotated[int, Field(ge=MIN_PASSAGE_CHARS, le=MAX_PASSAGE_CHARS)] = (
        DEFAULT_PASSAGE_CHARS
    )
    """The longest passage this node accepts, in characters."""
    fallbackQuestion: Text
    """Spoken verbatim when the candidate has no material of this kind or no passage
    qualifies (fail closed: the LLM is told there is no passage)."""
