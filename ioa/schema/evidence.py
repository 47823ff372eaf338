"""Evidence targets: what a node listens for, and how markers read it (02-schema §7)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ioa.schema.enums import EvidenceDimension
from ioa.schema.fields import Identifier, Lax, StrictModel, Text, Weight


class RubricLevel(StrictModel):
    """One level of a rubric descriptor. For markers only: never shown to the LLM (POL-006)."""

    label: Text
    """Short name of the level, e.g. ``Mostly complete``."""
    description: Text
    """What an answer at this level contains."""


class RubricLevels(StrictModel):
    """The four rubric levels; each is optional, EVD-006 reports missing ones as info."""

    excellent: RubricLevel | None = None
    satisfactory: RubricLevel | None = None
    partial: RubricLevel | None = None
    absent: RubricLevel | None = None


class RubricDescriptor(StrictModel):
    """A rubric for one evidence target (EVD-006)."""

    levels: RubricLevels


class EvidenceTarget(StrictModel):
    """Something the candidate should demonstrate at this node.

    The node's targets are the evidence vocabulary: the LLM reports signals with
    ``signalType`` set to a target ``id``.
    """

    id: Identifier
    """Unique within the node (EVD-001), ideally within the package (EVD-002)."""
    label: Text
    """Human-readable name (EVD-003)."""
    description: Text | None = None
    """Behavioural observation of what demonstrates the target; never rubric level wording
    such as ``Excellent: ...`` (POL-006)."""
    weight: Weight | None = None
    """Share of the node's evidence in [0, 1]; the node's weights sum to 1 (EVD-004/005)."""
    dimension: Annotated[EvidenceDimension, Lax] | None = None
    """The ``evidenceDimension`` reported in evidence events."""
    markingCriteria: list[Text] = Field(default_factory=list)
    """Learning outcome ids (``metadata.learningOutcomes[].id``) this target evidences (EVD-007)."""
    rubricDescriptor: RubricDescriptor | None = None
    """Optional rubric for markers (EVD-006)."""
