"""Step 3: end node rules (NOD-E001..007, plus NOD-E101/E102 of this project)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from ioa.schema.enums import EndType
from ioa.validation.document import NodeView, as_list, as_str, as_text, describe, is_one_of
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.graph import exam_graph
from ioa.validation.registry import RuleInput, rule

_END_TYPES: Final = ", ".join(end_type.value for end_type in EndType)
_END_TYPE_VALUES: Final = frozenset(end_type.value for end_type in EndType)
_NORMAL: Final = EndType.NORMAL.value


def _end_nodes(inp: RuleInput) -> Iterator[NodeView]:
    return (node for node in inp.doc.nodes if node.is_end)


@rule(
    "NOD-E001",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="End nodes MUST have an endType from normal, timeout, terminated, technical_failure.",
)
def end_type_valid(inp: RuleInput) -> Iterator[Issue]:
    """Every end node says how the exam ended."""
    for node in _end_nodes(inp):
        value = node.get("endType")
        if "endType" not in node.raw:
            yield node.issue(
                f"end node {node.name} has no endType; add one of {_END_TYPES}", "endType"
            )
        elif not is_one_of(value, _END_TYPE_VALUES):
            yield node.issue(
                f"endType must be one of {_END_TYPES}, got {describe(value)}", "endType"
            )


@rule(
    "NOD-E002",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="End nodes MUST have a prompt.closing message.",
)
def end_has_closing(inp: RuleInput) -> Iterator[Issue]:
    """Every end node has a closing the candidate hears."""
    for node in _end_nodes(inp):
        prompt = node.mapping("prompt")
        closing = as_text(prompt.get("closing")) if prompt is not None else None
        if closing is None:
            yield node.issue(
                f"end node {node.name} needs prompt.closing, the words that close the exam "
                '(e.g. "Thank you, that concludes the examination.")',
                "prompt",
                "closing",
            )


@rule(
    "NOD-E003",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="End nodes MUST NOT have evidenceTargets.",
)
def end_has_no_targets(inp: RuleInput) -> Iterator[Issue]:
    """Nothing is assessed at an end node."""
    for node in _end_nodes(inp):
        value = node.get("evidenceTargets")
        if value is not None and value != []:
            yield node.issue(
                f"end node {node.name} must not have evidenceTargets (nothing is assessed after "
                "the exam ends); move them to a question node or remove them",
                "evidenceTargets",
            )


@rule(
    "NOD-E004",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="End nodes MUST NOT have followUpPolicy.",
)
def end_has_no_follow_ups(inp: RuleInput) -> Iterator[Issue]:
    """No follow-ups after the exam ends."""
    for node in _end_nodes(inp):
        if node.get("followUpPolicy") is not None:
            yield node.issue(
                f"end node {node.name} must not have a followUpPolicy; remove it",
                "followUpPolicy",
            )


@rule(
    "NOD-E005",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="End nodes MUST NOT have timeBudget (or timeBudgetMs).",
)
def end_has_no_time_budget(inp: RuleInput) -> Iterator[Issue]:
    """End nodes are not timed."""
    for node in _end_nodes(inp):
        for key in ("timeBudget", "timeBudgetMs"):
            if node.get(key) is not None:
                yield node.issue(f"end node {node.name} must not have {key}; remove it", key)


@rule(
    "NOD-E006",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary=(
        "Every package MUST have a reachable end node; runtime-entered ends (timeout, "
        "terminated, technical_failure) count only with a reachable normal end."
    ),
)
def normal_end_reachable(inp: RuleInput) -> Iterator[Issue]:
    """A normal end node is reachable from the initial node through transitions."""
    doc = inp.doc
    graph = exam_graph(doc)
    if graph.start is None or not doc.nodes:
        return
    reachable_ends = [
        doc.nodes[index] for index in sorted(graph.reachable) if doc.nodes[index].is_end
    ]
    if any(node.get("endType") == _NORMAL for node in reachable_ends):
        return
    seen = ", ".join(node.name for node in reachable_ends) or "none"
    yield Issue(
        ("nodes",),
        "no end node with endType 'normal' is reachable from initialNodeId "
        f"'{doc.initial_node_id}' (reachable end nodes: {seen}); a timeout, terminated or "
        "technical_failure end is entered by the runtime and does not count alone. Add "
        "transitions that lead to a normal end node",
    )


@rule(
    "NOD-E007",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary=(
        "Packages SHOULD have end nodes for normal, timeout, terminated and technical_failure, "
        "or MUST give metadata.endNodeRationale."
    ),
)
def end_types_covered(inp: RuleInput) -> Iterator[Issue]:
    """Every end type has an end node, unless the rationale explains the gap."""
    doc = inp.doc
    if not doc.nodes or doc.justification("endNodeRationale") is not None:
        return
    present = {as_str(node.get("endType")) for node in doc.nodes if node.is_end}
    missing = [end_type.value for end_type in EndType if end_type.value not in present]
    if missing:
        yield Issue(
            ("nodes",),
            f"no end node for endType {', '.join(missing)}; add one per missing type (the runtime "
            "needs somewhere to go when time runs out, the exam is stopped or fails), or explain "
            "in metadata.endNodeRationale why it does not apply",
        )


@rule(
    "NOD-E101",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="End nodes MUST NOT have transitions (the session ends there).",
)
def end_has_no_transitions(inp: RuleInput) -> Iterator[Issue]:
    """The transitions of an end node are empty or absent."""
    for node in _end_nodes(inp):
        transitions = as_list(node.get("transitions"))
        if transitions:
            yield node.issue(
                f"end node {node.name} has {len(transitions)} transition(s), but the session ends "
                'at an end node; remove them (use "transitions": [])',
                "transitions",
            )


@rule(
    "NOD-E102",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="Only end nodes may have endType.",
)
def end_type_only_on_end(inp: RuleInput) -> Iterator[Issue]:
    """A non-end node with endType is a mistake (wrong kind, or a leftover field)."""
    for node in inp.doc.nodes:
        if node.is_object and not node.is_end and node.get("endType") is not None:
            yield node.issue(
                f"node {node.name} has endType but kind {describe(node.get('kind'))}; set kind to "
                '"end", or remove endType',
                "endType",
            )
