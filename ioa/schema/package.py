"""The top-level AssessmentPackage and its metadata (02-schema §1-§2)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ioa.schema.enums import QuestionSelection, StructureLevel
from ioa.schema.fields import (
    IR_VERSION_SCHEMA_PATTERN,
    LANGUAGE_PATTERN,
    MAX_NODES,
    PACKAGE_ID_PATTERN,
    ActionName,
    DateOrTimestamp,
    Identifier,
    Lax,
    Seconds,
    StrictModel,
    Text,
    Timestamp,
)
from ioa.schema.nodes import Node
from ioa.schema.policies import CandidateCommandPolicy


class LearningOutcome(StrictModel):
    """A course learning outcome that evidence targets point to (EVD-007)."""

    id: Text
    text: Text


class ExternalDependency(StrictModel):
    """A URL or file path the package may mention (PKG-011).

    A reference found in a string field is allowed when it equals ``uri``, or when ``uri``
    ends with ``/`` and the reference starts with it.
    """

    uri: Text
    purpose: Text
    """Why the package needs it (for the reviewer)."""


class PackageMetadata(StrictModel):
    """Who made the package, what it is, and the justifications some rules ask for."""

    packageId: Annotated[str, Field(pattern=PACKAGE_ID_PATTERN)]
    """A UUID or ULID (PKG-008), stable across versions of the package."""
    title: Text
    createdAt: Timestamp
    author: Text | None = None
    version: Text | None = None
    """The package's own version (e.g. ``1.0.0``); one published artifact per version."""
    language: Annotated[str, Field(pattern=LANGUAGE_PATTERN)] | None = None
    structureLevel: Annotated[StructureLevel, Lax]
    """Where the exam sits on the closed-open continuum (PKG-012)."""
    structureJustification: Text | None = None
    """Required when structureLevel or follow-up styles are inconsistent (PKG-012, NOD-Q012)."""
    commandJustification: Text | None = None
    """Required when a question node lacks repeat, clarification or pause (NOD-Q011)."""
    endNodeRationale: Text | None = None
    """Required when an endType has no end node (NOD-E007)."""
    sttHandlingJustification: Text | None = None
    """Required when a question node has no stt_low_confidence handler (POL-R005)."""
    difficultyJustification: Text | None = None
    """Required when evidence weight totals differ across question nodes (FAIR-001)."""
    timeBudgetJustification: Text | None = None
    """Required when question time budgets differ by more than 100% (FAIR-002)."""
    expectedCandidateCount: Annotated[int, Field(ge=1)] | None = None
    """Cohort size, for question-sharing risk (FAIR-004)."""
    totalTimeBudgetSec: Seconds | None = None
    """Whole-exam budget; the runtime paces wrap-up and enters the timeout end at the limit."""
    learningOutcomes: list[LearningOutcome] = Field(default_factory=list)
    externalDependencies: list[ExternalDependency] = Field(default_factory=list)
    """Declared external references (PKG-011)."""
    extensions: dict[str, Any] = Field(default_factory=dict)
    """Free-form data for tools; the only place unknown fields are allowed. Ignored by the
    runtime."""


class Persona(StrictModel):
    """The examiner's persona, kept across nodes (Pipecat ``role_message``)."""

    name: Text | None = None
    roleMessage: Text


class GlobalPolicies(StrictModel):
    """Policies that apply to every node."""

    forbiddenActions: list[ActionName] = Field(default_factory=list)
    """Forbidden on every node, in addition to each node's own list (POL-005)."""
    defaultCandidateCommands: CandidateCommandPolicy | None = None
    """Used by nodes that have no ``candidateCommands`` of their own."""


class DifficultyCalibration(StrictModel):
    """Evidence that a pool's questions are of equivalent difficulty (FAIR-003)."""

    method: Text
    """E.g. ``expert_review``, ``pilot_statistics``."""
    notes: Text
    calibratedAt: DateOrTimestamp | None = None


class QuestionPool(StrictModel):
    """Interchangeable nodes for one assessment slot; the runtime picks one per session with
    an RNG seeded from the session id and records the choice."""

    poolId: Identifier
    """Shares the node id namespace; a transition's ``targetNodeId`` may name it."""
    nodeIds: Annotated[list[Identifier], Field(min_length=1)]
    """Existing, non-end nodes."""
    selection: Annotated[QuestionSelection, Lax] = QuestionSelection.RANDOM_ONE
    difficultyCalibration: DifficultyCalibration | None = None
    """Required when the pool has more than one node (FAIR-003)."""


class AssessmentPackage(StrictModel):
    """An IOA-ORM assessment package: the exam graph plus its policies and metadata."""

    irVersion: Annotated[str, Field(pattern=IR_VERSION_SCHEMA_PATTERN)]
    """``ioa-orm/MAJOR.MINOR``; never changes after publication (CMP-001)."""
    metadata: PackageMetadata
    persona: Persona | None = None
    globalPolicies: GlobalPolicies | None = None
    initialNodeId: Identifier
    """The first node; must exist and not be an end node (PKG-001..003)."""
    questionPools: list[QuestionPool] = Field(default_factory=list)
    nodes: Annotated[list[Node], Field(min_length=1, max_length=MAX_NODES)]

    def node(self, node_id: str) -> Node | None:
        """The node with ``node_id``, or None."""
        for candidate in self.nodes:
            if candidate.nodeId == node_id:
                return candidate
        return None

    def pool(self, pool_id: str) -> QuestionPool | None:
        """The question pool with ``pool_id``, or None."""
        for candidate in self.questionPools:
            if candidate.poolId == pool_id:
                return candidate
        return None
