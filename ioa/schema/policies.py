"""Per-node policies: follow-ups, completion, time, commands, recovery, context (02-schema
§10-§13)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ioa.schema.enums import (
    CandidateCommandType,
    ContextStrategy,
    FollowUpStyle,
    OnViolation,
    RecoveryAction,
    RecoveryEscalation,
    RecoveryScenario,
)
from ioa.schema.fields import Identifier, Lax, Seconds, StrictModel, Text


class FollowUpPolicy(StrictModel):
    """How far the examiner may probe after the opening question (NOD-Q006..010, POL-F*)."""

    maxFollowUps: Annotated[int, Field(ge=0)]
    """Follow-up questions allowed; 0 means ask the opening question and move on (POL-F002)."""
    maxFollowUpDurationSec: Seconds | None = None
    """Time allowed for the follow-up phase; required when ``maxFollowUps > 0`` (POL-F003)."""
    followUpStyle: Annotated[FollowUpStyle, Lax] | None = None
    """The questioning approach; should be the same on every question node (NOD-Q012)."""


class CompletionPolicy(StrictModel):
    """When the runtime approves the LLM's ``evidenceSufficient`` (decision 11)."""

    requiredEvidenceTargetIds: list[Identifier] = Field(default_factory=list)
    """Targets of this node that need an accepted positive or self_correction signal."""
    minTurns: Annotated[int, Field(ge=0)] = 1
    """Candidate turns required before natural completion (default 1)."""


class TimeBudget(StrictModel):
    """The node's time budget. Canonical form; ``timeBudgetMs`` is the deprecated alias."""

    maxDurationSec: Seconds
    """Seconds the node may take before a forced exit."""


class ForbiddenCommand(StrictModel):
    """A candidate command refused at this node, with the reason given to the candidate."""

    command: Annotated[CandidateCommandType, Lax]
    reason: Text
    """Why the command is not available here (recorded and shown to the proctor)."""
    onViolation: Annotated[OnViolation, Lax]


class CandidateCommandPolicy(StrictModel):
    """Which candidate commands a node accepts (POL-002/003, NOD-012, NOD-Q011).

    A node's policy replaces ``globalPolicies.defaultCandidateCommands``; it is not merged.
    The welfare commands (pause, resume, raise_hand, report_audio_issue, emergency_stop,
    finish) are always accepted whatever the policy says.
    """

    allowed: list[Annotated[CandidateCommandType, Lax]] = Field(default_factory=list)
    forbidden: list[ForbiddenCommand] = Field(default_factory=list)


class RecoveryHandler(StrictModel):
    """Behavioural recovery for a conversational problem (POL-R*). Never structural (POL-R004)."""

    scenario: Annotated[RecoveryScenario, Lax]
    action: Annotated[RecoveryAction, Lax]
    """What the examiner does on each attempt."""
    maxAttempts: Annotated[int, Field(ge=1)]
    """Attempts before escalating."""
    escalation: Annotated[RecoveryEscalation, Lax]
    """What happens once the attempts are exhausted."""
    afterSec: Seconds | None = None
    """For ``silence``: seconds of silence that trigger the handler."""
    textAfterSec: Seconds | None = None
    """For ``silence`` in text mode (project extension): seconds without typing or an answer
    that trigger the handler. Absent: 90 s, or twice ``afterSec`` if longer."""


class ContextPolicy(StrictModel):
    """What the LLM context holds when the node is entered (decision: policy-driven, RESET)."""

    strategy: Annotated[ContextStrategy, Lax] = ContextStrategy.RESET
    includePreviousNodeSummary: bool = False
    """With ``reset``: add a short summary of the previous node."""
