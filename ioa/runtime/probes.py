"""The runtime's own follow-ups: what the examiner asks when the runtime refuses the LLM's
proposal to complete a node, or when the LLM gave nothing to say after an answer (a refusal is a
move, never a silence; our 03 chapter §16, issue #31).

A probe is one of four neutral lines of the exam's language (:meth:`RuntimeTexts.probes`:
explain, example, reason, add). None names a target, a rubric level or the content, so the
probe leaks nothing; it points *toward* the missing evidence by its kind: a node whose first
missing target is applied problem solving starts with the example, any other with the
explanation. Each further probe at the visit takes the next line, never the line the examiner
said last. Every probe is a follow-up (``follow_up_used``), so the node's follow-up budget
bounds how often it can be asked.
"""

from __future__ import annotations

from typing import Literal

from ioa.events import payloads as p
from ioa.runtime.plan import NodePlan
from ioa.runtime.state import NodeVisit, Turn
from ioa.runtime.step import Step
from ioa.schema import EvidenceDimension

FollowUpReason = Literal["evidence_gap", "depth_probe", "clarification", "misconception_probe"]

_STARTS_WITH_EXAMPLE = frozenset({EvidenceDimension.APPLIED_PROBLEM_SOLVING})


def probe_text(step: Step, node: NodeVisit, plan_node: NodePlan, missing: tuple[str, ...]) -> str:
    """The probe to ask now at ``node`` (module docstring), in the exam's language."""
    lines = step.plan.texts.probes()
    first = next((plan_node.targets[t] for t in missing if t in plan_node.targets), None)
    if first is None:
        first = next(iter(plan_node.targets.values()), None)
    start = 1 if first is not None and first.dimension in _STARTS_WITH_EXAMPLE else 0
    index = (start + node.follow_ups) % len(lines)
    if node.examiner_texts and lines[index] == node.examiner_texts[-1]:
        index = (index + 1) % len(lines)
    return lines[index]


def count_follow_up(
    step: Step,
    node: NodeVisit,
    plan_node: NodePlan,
    *,
    answer: list[Turn],
    reason: FollowUpReason,
) -> None:
    """Record the follow-up the examiner is about to ask (``follow_up_used``), triggered by the
    candidate's latest turn (or the node's opening when there is none)."""
    answer_ids = [t.turn_id for t in answer]
    trigger = (answer_ids or node.turn_ids or [f"{node.node_id}-opening"])[-1]
    step.emit(
        p.FollowUpUsed(
            nodeId=node.node_id,
            followUpIndex=node.follow_ups + 1,
            maxFollowUps=plan_node.max_follow_ups,
            reason=reason,
            triggerTurnId=trigger,
        )
    )
