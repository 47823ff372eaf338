"""Transitions and their conditions (02-schema §11, TRN-*).

A condition is a tagged object: ``type`` picks the variant and each variant has exactly the
parameters it needs. The deprecated spelling ``{"type": "evidence_sufficient",
"requiredEvidence": [...]}`` (TRN-005) is converted on load to ``evidence_satisfied`` with
``targetIds``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from ioa.schema.enums import (
    EVIDENCE_SUFFICIENT_ALIAS,
    CandidateCommandType,
    ConditionType,
    RecoveryEscalation,
)
from ioa.schema.fields import Identifier, Lax, Seconds, StrictModel


class AlwaysCondition(StrictModel):
    """Taken on natural completion, and as the forced exit (time or follow-ups exhausted)."""

    type: Literal["always"]


class EvidenceSatisfiedCondition(StrictModel):
    """Natural completion with every listed target of the source node evidenced (TRN-004/011).

    An empty list means the node's ``completionPolicy`` alone decides.
    """

    type: Literal["evidence_satisfied"]
    targetIds: list[Identifier]


class TurnCountReachedCondition(StrictModel):
    """Checked every turn: the candidate has taken ``count`` turns in this node."""

    type: Literal["turn_count_reached"]
    count: Annotated[int, Field(ge=1)]


class TimeElapsedCondition(StrictModel):
    """Checked every turn: ``seconds`` have passed since the node was entered."""

    type: Literal["time_elapsed"]
    seconds: Seconds


class CandidateCommandCondition(StrictModel):
    """Checked every turn: the candidate issued ``command`` and it was accepted."""

    type: Literal["candidate_command"]
    command: Annotated[CandidateCommandType, Lax]


class PolicyEscalationCondition(StrictModel):
    """Checked every turn: a recovery handler of this node escalated with ``escalation``."""

    type: Literal["policy_escalation"]
    escalation: Annotated[RecoveryEscalation, Lax]


class EvidenceSufficientCondition(StrictModel):
    """Deprecated spelling of :class:`EvidenceSatisfiedCondition` (TRN-005); converted on load."""

    type: Literal["evidence_sufficient"]
    requiredEvidence: list[Identifier] | None = None


TransitionCondition = Annotated[
    AlwaysCondition
    | EvidenceSatisfiedCondition
    | TurnCountReachedCondition
    | TimeElapsedCondition
    | CandidateCommandCondition
    | PolicyEscalationCondition,
    Field(discriminator="type"),
]
"""Any canonical condition, discriminated by ``type``."""

CONDITION_PARAMETERS: dict[ConditionType, tuple[str, ...]] = {
    ConditionType.ALWAYS: (),
    ConditionType.EVIDENCE_SATISFIED: ("targetIds",),
    ConditionType.TURN_COUNT_REACHED: ("count",),
    ConditionType.TIME_ELAPSED: ("seconds",),
    ConditionType.CANDIDATE_COMMAND: ("command",),
    ConditionType.POLICY_ESCALATION: ("escalation",),
}
"""The parameters each condition type requires (and the only ones it accepts)."""


def normalise_condition(value: object) -> object:
    """Rewrite the deprecated ``evidence_sufficient`` spelling to ``evidence_satisfied``.

    Any other value is returned unchanged; unknown extra fields are kept so that the schema
    still reports them.
    """
    if not isinstance(value, dict) or value.get("type") != EVIDENCE_SUFFICIENT_ALIAS:
        return value
    converted: dict[str, object] = {
        key: item for key, item in value.items() if key not in ("type", "requiredEvidence")
    }
    converted["type"] = ConditionType.EVIDENCE_SATISFIED.value
    converted["targetIds"] = value.get("requiredEvidence") if "requiredEvidence" in value else []
    if converted["targetIds"] is None:
        converted["targetIds"] = []
    return converted


class Transition(StrictModel):
    """An edge of the exam graph. Evaluated in array order; the first match wins."""

    id: Identifier
    """Unique within the package; recorded in ``transition_decision`` events."""
    targetNodeId: Identifier
    """A node id, or a ``questionPools[].poolId`` (the runtime picks one member)."""
    condition: TransitionCondition

    @field_validator("condition", mode="before")
    @classmethod
    def _accept_deprecated_spelling(cls, value: object) -> object:
        return normalise_condition(value)
