"""Nodes of the exam graph (02-schema §3-§6)."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, model_validator

from ioa.schema.enums import QUESTION_LIKE_KINDS, EndType, NodeKind
from ioa.schema.evidence import EvidenceTarget
from ioa.schema.fields import (
    MAX_PROMPT_SEED_CHARS,
    ActionName,
    Identifier,
    Lax,
    StrictModel,
    Text,
)
from ioa.schema.grounding import Grounding
from ioa.schema.policies import (
    CandidateCommandPolicy,
    CompletionPolicy,
    ContextPolicy,
    FollowUpPolicy,
    RecoveryHandler,
    TimeBudget,
)
from ioa.schema.transitions import Transition


class Prompt(StrictModel):
    """Fixed wording spoken verbatim: the opening question, or an end node's closing."""

    opening: Text | None = None
    closing: Text | None = None
    """Required on end nodes (NOD-E002)."""


class Node(StrictModel):
    """One step of the exam. End nodes (``kind: end``) carry ``endType`` and a closing, and
    have no transitions, evidence targets, follow-up policy or time budget.
    """

    nodeId: Identifier
    """Unique in the package, in one namespace with the pool ids (NOD-001, PKG-006)."""
    kind: Annotated[NodeKind, Lax]
    title: Text | None = None
    promptSeed: Annotated[str, Field(min_length=1, max_length=MAX_PROMPT_SEED_CHARS, pattern=r"\S")]
    """The LLM's brief for this node (NOD-005, NOD-008)."""
    prompt: Prompt | None = None
    scenario: Text | None = None
    """Scenario text presented to the candidate (scenario nodes)."""
    endType: Annotated[EndType, Lax] | None = None
    """End nodes only (NOD-E001)."""
    evidenceTargets: list[EvidenceTarget] = Field(default_factory=list)
    followUpPolicy: FollowUpPolicy | None = None
    completionPolicy: CompletionPolicy | None = None
    timeBudget: TimeBudget | None = None
    timeBudgetMs: Annotated[int, Field(gt=0)] | None = Field(
        default=None, exclude=True, json_schema_extra={"deprecated": True}
    )
    """Deprecated alias of ``timeBudget.maxDurationSec`` in milliseconds; converted on load."""
    forbiddenActions: list[ActionName] = Field(default_factory=list)
    """Added to ``globalPolicies.forbiddenActions`` for this node."""
    allowedActions: list[ActionName] = Field(default_factory=list)
    candidateCommands: CandidateCommandPolicy | None = None
    """Replaces ``globalPolicies.defaultCandidateCommands`` when present."""
    recoveryHandlers: list[RecoveryHandler] = Field(default_factory=list)
    contextPolicy: ContextPolicy | None = None
    transitions: list[Transition] = Field(default_factory=list)
    """Evaluated in order, first match wins; empty on end nodes."""
    grounding: Grounding | None = None
    """Ask about a passage of the candidate's material (docs/spec/candidate-materials.md)."""

    @model_validator(mode="after")
    def _convert_time_budget_ms(self) -> Self:
        """Convert the deprecated ``timeBudgetMs`` into ``timeBudget.maxDurationSec``."""
        milliseconds = self.timeBudgetMs
        if milliseconds is None:
            return self
        seconds = milliseconds / 1000
        if self.timeBudget is None:
            self.timeBudget = TimeBudget(maxDurationSec=seconds)
        elif self.timeBudget.maxDurationSec != seconds:
            raise ValueError(
                f"timeBudgetMs ({milliseconds} ms = {seconds:g} s) disagrees with "
                f"timeBudget.maxDurationSec ({self.timeBudget.maxDurationSec:g} s); "
                "remove the deprecated timeBudgetMs"
            )
        self.timeBudgetMs = None
        return self

    @property
    def is_end(self) -> bool:
        """True for end nodes."""
        return self.kind is NodeKind.END

    @property
    def is_question_like(self) -> bool:
        """True for question and scenario nodes (the rules' "question nodes")."""
        return self.kind in QUESTION_LIKE_KINDS
