"""The runtime's read-only view of a package and its compiled flow (our 03 chapter §1).

Built once per session from the :class:`~ioa.schema.AssessmentPackage` and its compiled flow
(``ioa.compiler``): per node, everything the controller checks on every turn, resolved once
(effective command policy, recovery handlers by scenario, budgets in milliseconds, the output
filter context from the compiled node's ``metadata.outputFilterContext``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from ioa.compiler import CompiledFlow, compile_package
from ioa.errors import ControllerSetupError
from ioa.languages import UnsupportedLanguageError
from ioa.ledger import TargetInfo
from ioa.output_filters import OutputPipeline, RubricText
from ioa.runtime.texts import RuntimeTexts, for_language
from ioa.schema import (
    AssessmentPackage,
    CandidateCommandPolicy,
    EndType,
    Node,
    NodeKind,
    RecoveryHandler,
    RecoveryScenario,
    Transition,
)

ANSWERING_KINDS: Final = frozenset(
    {NodeKind.QUESTION, NodeKind.SCENARIO, NodeKind.TASK, NodeKind.DISCUSSION}
)


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


@dataclass(frozen=True, slots=True)
class NodePlan:
    """One node, resolved for the runtime."""

    node: Node
    node_id: str
    kind: NodeKind
    end_type: EndType | None
    title: str
    targets: Mapping[str, TargetInfo]
    max_follow_ups: int
    follow_up_window_ms: int | None
    budget_ms: int | None
    required_targets: tuple[str, ...]
    min_turns: int
    transitions: tuple[Transition, ...]
    commands: CandidateCommandPolicy
    handlers: Mapping[RecoveryScenario, RecoveryHandler]
    context_strategy: str
    summary_prompt: str | None
    opening: str | None
    closing: str | None
    rubric_texts: tuple[RubricText, ...]
    scenario_domain: str
    target_vocabulary: str
    forbidden_actions: tuple[str, ...]
    speakable_texts: tuple[str, ...] = ()
    """What the examiner may say verbatim here: the opening, scenario and closing (and a
    grounded node's fallback question)."""
    protected_texts: tuple[str, ...] = ()
    """Everything the LLM was told in confidence (:func:`protected_texts`), minus this node's
    speakable texts (the ``protected_text`` filter)."""

    @property
    def is_end(self) -> bool:
        return self.kind is NodeKind.END

    def handler(self, scenario: RecoveryScenario) -> RecoveryHandler | None:
        return self.handlers.get(scenario)


def _rubric_texts(node: Node) -> tuple[RubricText, ...]:
    """Every target description and rubric level label/description (OUT-002)."""
    texts: list[RubricText] = []
    for target in node.evidenceTargets:
        if target.description:
            texts.append(RubricText(target.id, target.description))
        if target.rubricDescriptor is not None:
            levels = target.rubricDescriptor.levels
            for level in (levels.excellent, levels.satisfactory, levels.partial, levels.absent):
                if level is not None:
                    texts.append(RubricText(target.id, level.label))
                    texts.append(RubricText(target.id, level.description))
    return tuple(dict.fromkeys(texts))


def _without_speakable(text: str, speakable: tuple[str, ...]) -> str:
    """``text`` without the lines that carry what the examiner may say (the task message's
    opening question and scenario blocks)."""
    lines = [line for line in text.splitlines() if not any(s in line for s in speakable)]
    return "\n".join(lines)


def _node_plan(
    node: Node, compiled: Mapping[str, Any], default_commands: CandidateCommandPolicy
) -> NodePlan:
    metadata = compiled.get("metadata", {})
    context = compiled.get("context_strategy", {"strategy": "reset"})
    filter_context = metadata.get("outputFilterContext", {})
    completion = node.completionPolicy
    follow_up = node.followUpPolicy
    prompt = node.prompt
    targets = {t.id: TargetInfo(t.id, t.label, t.weight, t.dimension) for t in node.evidenceTargets}
    return NodePlan(
        node=node,
        node_id=node.nodeId,
        kind=node.kind,
        end_type=node.endType,
        title=node.title or node.nodeId,
        targets=targets,
        max_follow_ups=follow_up.maxFollowUps if follow_up else 0,
        follow_up_window_ms=_ms(follow_up.maxFollowUpDurationSec) if follow_up else None,
        budget_ms=_ms(node.timeBudget.maxDurationSec) if node.timeBudget else None,
        required_targets=tuple(completion.requiredEvidenceTargetIds) if completion else (),
        min_turns=completion.minTurns if completion else 1,
        transitions=tuple(node.transitions),
        commands=node.candidateCommands or default_commands,
        handlers={h.scenario: h for h in node.recoveryHandlers},
        context_strategy=str(context.get("strategy", "reset")),
        summary_prompt=context.get("summaryPrompt"),
        opening=prompt.opening if prompt else None,
        closing=prompt.closing if prompt else None,
        rubric_texts=_rubric_texts(node),
        scenario_domain=str(filter_context.get("scenarioDomain", "")),
        target_vocabulary=" ".join(t.label for t in node.evidenceTargets),
        forbidden_actions=tuple(metadata.get("effectiveForbiddenActions", ())),
    )


def protected_texts(package: AssessmentPackage, flow: CompiledFlow) -> tuple[str, ...]:
    """Everything the LLM is told in confidence, for the whole exam (our chapter 04 §7): the
    role message and every node's task messages (briefs, evidence lines, constraints), every
    target's label, description and rubric levels, the learning outcomes the marking criteria
    name, and the summary prompts. A future node's brief is protected now as well."""
    texts: list[str] = []
    for compiled in flow["nodes"]:
        texts.append(str(compiled.get("role_message") or ""))
        for message in compiled.get("task_messages") or ():
            texts.append(str(message.get("content") or ""))
        summary = (compiled.get("context_strategy") or {}).get("summaryPrompt")
        if summary:
            texts.append(str(summary))
    outcomes = {lo.id: lo.text for lo in package.metadata.learningOutcomes or ()}
    for node in package.nodes:
        if node.promptSeed:
            texts.append(node.promptSeed)
        for target in node.evidenceTargets:
            texts += [target.label, target.description or ""]
            texts += [outcomes.get(c, c) for c in target.markingCriteria or ()]
        texts += [item.text for item in _rubric_texts(node)]
    return tuple(t for t in dict.fromkeys(texts) if t.strip())


class ExamPlan:
    """The package as the runtime uses it."""

    def __init__(self, package: AssessmentPackage, flow: CompiledFlow | None = None) -> None:
        self.package = package
        self.flow: CompiledFlow = flow if flow is not None else compile_package(package)
        compiled = {node["name"]: node for node in self.flow["nodes"]}
        policies = package.globalPolicies
        default_commands = (
            policies.defaultCandidateCommands
            if policies and policies.defaultCandidateCommands
            else CandidateCommandPolicy()
        )
        self.nodes: dict[str, NodePlan] = {}
        for node in package.nodes:
            if node.nodeId not in compiled:
                raise ControllerSetupError(f"the compiled flow has no node {node.nodeId!r}")
            self.nodes[node.nodeId] = _node_plan(
                node, dict(compiled[node.nodeId]), default_commands
            )
        self.pools: dict[str, tuple[str, ...]] = {
            pool.poolId: tuple(pool.nodeIds) for pool in package.questionPools
        }
        self.initial_node_id = package.initialNodeId
        if self.initial_node_id not in self.nodes:
            raise ControllerSetupError(f"initialNodeId {self.initial_node_id!r} is not a node")
        self.end_nodes: dict[EndType, str] = {}
        for plan in self.nodes.values():
            if plan.is_end and plan.end_type is not None:
                self.end_nodes.setdefault(plan.end_type, plan.node_id)
        self.wrap_up_node_id: str | None = next(
            (p.node_id for p in self.nodes.values() if p.kind is NodeKind.WRAPUP), None
        )
        protected = protected_texts(package, self.flow)
        for node_id, plan in self.nodes.items():
            grounding = plan.node.grounding
            fallback = grounding.fallbackQuestion if grounding is not None else None
            speakable = tuple(
                t for t in (plan.opening, plan.closing, plan.node.scenario, fallback) if t
            )
            self.nodes[node_id] = replace(
                plan,
                speakable_texts=speakable,
                protected_texts=tuple(_without_speakable(t, speakable) for t in protected),
            )
        total = package.metadata.totalTimeBudgetSec
        self.total_budget_ms: int | None = _ms(total)
        self.pipeline = OutputPipeline.from_config(dict(self.flow["outputValidationFilters"]))
        try:
            self.texts: RuntimeTexts = for_language(package.metadata.language)
            """The runtime's own lines in the exam's language."""
        except UnsupportedLanguageError as error:  # PKG-013 keeps these from being published
            raise ControllerSetupError(str(error)) from error
        self.exam_id = package.metadata.packageId
        self.exam_version = package.metadata.version or package.irVersion
        budgets = [p.budget_ms or 0 for p in self.nodes.values() if not p.is_end]
        self.estimated_duration_sec: float = (
            total if total is not None else round(sum(budgets) / 1000, 3)
        )

    def node(self, node_id: str) -> NodePlan:
        """The plan of ``node_id`` (KeyError if unknown)."""
        return self.nodes[node_id]

    def end_node(self, end_type: EndType) -> str | None:
        """The end node for ``end_type``, else the normal end, else None."""
        return self.end_nodes.get(end_type) or self.end_nodes.get(EndType.NORMAL)

    @property
    def wrap_up_reserve_ms(self) -> int | None:
        """How long before the total budget runs out the wrap-up beat fires: the wrap-up
        node's own budget (else a tenth of the total), at most half of the total."""
        if self.total_budget_ms is None:
            return None
        reserve: int | None = None
        if self.wrap_up_node_id is not None:
            reserve = self.nodes[self.wrap_up_node_id].budget_ms
        if reserve is None:
            reserve = self.total_budget_ms // 10
        return min(reserve, self.total_budget_ms // 2)
