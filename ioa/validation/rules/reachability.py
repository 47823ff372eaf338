"""Step 8: graph reachability (TRN-008, TRN-009). Linear in nodes + transitions."""

from __future__ import annotations

from collections.abc import Iterator

from ioa.schema.enums import RUNTIME_ENTERED_END_TYPES
from ioa.validation.document import is_one_of
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.graph import exam_graph
from ioa.validation.registry import RuleInput, rule

_RUNTIME_ENTERED = frozenset(end_type.value for end_type in RUNTIME_ENTERED_END_TYPES)


@rule(
    "TRN-008",
    phase=Phase.REACHABILITY,
    severity=Severity.ERROR,
    summary="The graph MUST be traversable from initialNodeId to at least one end node.",
)
def some_end_reachable(inp: RuleInput) -> Iterator[Issue]:
    """Following transitions from the initial node reaches an end node."""
    doc = inp.doc
    graph = exam_graph(doc)
    if graph.start is None:
        return
    if any(doc.nodes[index].is_end for index in graph.reachable):
        return
    yield Issue(
        ("initialNodeId",),
        f"no end node can be reached from initialNodeId '{doc.initial_node_id}' by following "
        f"transitions ({len(graph.reachable)} node(s) reachable, none of kind end); add a "
        "transition path to an end node",
    )


@rule(
    "TRN-009",
    phase=Phase.REACHABILITY,
    severity=Severity.WARNING,
    summary=(
        "No node SHOULD be unreachable from initialNodeId (runtime-entered end nodes excepted)."
    ),
)
def no_orphans(inp: RuleInput) -> Iterator[Issue]:
    """Every node can be reached, except ends the runtime enters on its own."""
    doc = inp.doc
    graph = exam_graph(doc)
    if graph.start is None:
        return
    reachable = graph.reachable
    for node in doc.nodes:
        if node.index in reachable or not node.is_object:
            continue
        if node.is_end and is_one_of(node.get("endType"), _RUNTIME_ENTERED):
            continue
        yield node.issue(
            f"node {node.name} cannot be reached from initialNodeId '{doc.initial_node_id}', so "
            "no candidate will ever see it; add a transition (or pool) that leads to it, or "
            "remove it"
        )
