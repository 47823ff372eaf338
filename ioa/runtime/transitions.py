"""Transition evaluation (spec-notes §2, decision 11; our 03 chapter §5).

* Transitions are evaluated in array order; the first match wins.
* ``time_elapsed``, ``turn_count_reached``, ``candidate_command`` and ``policy_escalation`` are
  checked on every turn; ``evidence_satisfied`` and ``always`` only on natural completion: the
  LLM says ``evidenceSufficient`` and the node's completion policy holds (LLM proposes,
  runtime approves).
* A forced exit (time or follow-ups exhausted, off-topic limit, accepted skip, escalation
  ``skip_node``) takes the node's ``always`` transition, else its first transition.
* A target that names a question pool is resolved with the session's seeded RNG.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ioa.ledger import EvidenceLedger
from ioa.runtime.ids import Rng
from ioa.runtime.plan import ExamPlan, NodePlan
from ioa.schema import (
    AlwaysCondition,
    CandidateCommandCondition,
    CandidateCommandType,
    EvidenceSatisfiedCondition,
    PolicyEscalationCondition,
    RecoveryEscalation,
    TimeElapsedCondition,
    Transition,
    TurnCountReachedCondition,
)


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What is true at the moment transitions are evaluated."""

    natural_completion: bool = False
    candidate_turns: int = 0
    elapsed_ms: int = 0
    command: CandidateCommandType | None = None
    escalation: RecoveryEscalation | None = None
    covered: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, slots=True)
class Completion:
    """Whether the node's completion policy holds, and why not."""

    holds: bool
    missing_targets: tuple[str, ...] = ()
    turns_short: int = 0

    @property
    def why_not(self) -> str:
        parts = []
        if self.missing_targets:
            parts.append("required evidence missing for " + ", ".join(self.missing_targets))
        if self.turns_short:
            parts.append(f"{self.turns_short} more candidate turn(s) needed")
        return "; ".join(parts) or "completion policy holds"


def completion(node: NodePlan, ledger: EvidenceLedger, candidate_turns: int) -> Completion:
    """Check ``completionPolicy``: required targets covered (positive or self_correction) and
    ``minTurns`` candidate turns taken at this node visit."""
    covered = ledger.covered_targets(node.node_id)
    missing = tuple(t for t in node.required_targets if t not in covered)
    short = max(0, node.min_turns - candidate_turns)
    return Completion(not missing and not short, missing, short)


def condition_text(transition: Transition) -> str:
    """The condition as evaluated, for ``transition_decision.conditionEvaluated``."""
    condition = transition.condition
    if isinstance(condition, AlwaysCondition):
        return "always (natural completion approved)"
    if isinstance(condition, EvidenceSatisfiedCondition):
        targets = ", ".join(condition.targetIds) or "completion policy"
        return f"evidence_satisfied({targets}) (natural completion approved)"
    if isinstance(condition, TurnCountReachedCondition):
        return f"turn_count_reached({condition.count})"
    if isinstance(condition, TimeElapsedCondition):
        return f"time_elapsed({condition.seconds:g}s)"
    if isinstance(condition, CandidateCommandCondition):
        return f"candidate_command({condition.command})"
    return f"policy_escalation({condition.escalation})"


def matches(transition: Transition, facts: TurnFacts) -> bool:
    """Whether one transition's condition holds."""
    condition = transition.condition
    if isinstance(condition, AlwaysCondition):
        return facts.natural_completion
    if isinstance(condition, EvidenceSatisfiedCondition):
        return facts.natural_completion and all(t in facts.covered for t in condition.targetIds)
    if isinstance(condition, TurnCountReachedCondition):
        return facts.candidate_turns >= condition.count
    if isinstance(condition, TimeElapsedCondition):
        return facts.elapsed_ms >= round(condition.seconds * 1000)
    if isinstance(condition, CandidateCommandCondition):
        return facts.command is not None and condition.command == facts.command
    if isinstance(condition, PolicyEscalationCondition):
        return facts.escalation is not None and condition.escalation == facts.escalation
    return False


def first_match(node: NodePlan, facts: TurnFacts) -> Transition | None:
    """The first transition (array order) whose condition holds."""
    for transition in node.transitions:
        if matches(transition, facts):
            return transition
    return None


def forced_exit(node: NodePlan) -> Transition | None:
    """The forced-exit edge: the node's ``always`` transition, else its first transition."""
    for transition in node.transitions:
        if isinstance(transition.condition, AlwaysCondition):
            return transition
    return node.transitions[0] if node.transitions else None


def next_time_elapsed_ms(node: NodePlan) -> int | None:
    """The smallest ``time_elapsed`` threshold of the node, in ms (a timer deadline)."""
    thresholds = [
        round(t.condition.seconds * 1000)
        for t in node.transitions
        if isinstance(t.condition, TimeElapsedCondition)
    ]
    return min(thresholds) if thresholds else None


@dataclass(frozen=True, slots=True)
class Target:
    """Where an edge leads: the node, and the pool it was drawn from (if any)."""

    node_id: str
    pool_id: str | None = None


def resolve_target(plan: ExamPlan, target_id: str, rng: Rng) -> Target:
    """Resolve a ``targetNodeId``: a node, or one node drawn from a question pool."""
    members = plan.pools.get(target_id)
    if members is None:
        return Target(target_id)
    return Target(rng.choose(target_id, members), target_id)
