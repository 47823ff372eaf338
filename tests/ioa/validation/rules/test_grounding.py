"""GRD-001..003: grounded nodes (docs/spec/candidate-materials.md §2)."""

from __future__ import annotations

from typing import Any

from ioa.validation import REGISTRY
from ioa.validation.pipeline import load_rules
from tests.ioa.builders import add_nodes, example, get, grounded_node, put, validate
from tests.ioa.validation.rules.cases import Case, assert_near_miss, assert_triggers, parametrize


def _add_grounded(document: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """Add a grounded node ``q-own`` (leading to the wrap-up) and reach it from q-dijkstra."""
    node = grounded_node("q-own", "wrapup")
    node.update(overrides)
    add_nodes(document, node)
    transitions = get(document, "nodes[q-dijkstra].transitions")
    transitions.insert(
        0,
        {
            "id": "e-to-own",
            "targetNodeId": "q-own",
            "condition": {"type": "turn_count_reached", "count": 9},
        },
    )
    return document


def _grounding(document: dict[str, Any]) -> dict[str, Any]:
    return {
        "material": "report",
        "pick": "limitation",
        "fallbackQuestion": "What is one limitation of your approach?",
    }


CASES = [
    Case(
        "GRD-001",
        lambda d: put(d, "nodes[warmup].grounding", _grounding(d)),
        lambda d: _ground_dijkstra(d),
        path="nodes[warmup].grounding",
    ),
    Case(
        "GRD-002",
        lambda d: _add_grounded(d, prompt={"opening": "Why did you choose this?"}),
        lambda d: _add_grounded(d, prompt={}),
        path="nodes[q-own].prompt.opening",
    ),
    Case(
        "GRD-003",
        lambda d: _add_grounded(d, evidenceTargets=[], completionPolicy={"minTurns": 1}),
        _add_grounded,
        path="nodes[q-own].evidenceTargets",
    ),
]


def _ground_dijkstra(document: dict[str, Any]) -> None:
    """Ground the question node q-dijkstra (removing its opening, GRD-002)."""
    put(document, "nodes[q-dijkstra].grounding", _grounding(document))
    del get(document, "nodes[q-dijkstra].prompt")["opening"]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


def test_a_package_with_a_grounded_node_is_publishable() -> None:
    report = validate(_add_grounded(example()))
    assert report.passed, report.to_dict()
    assert not [f for f in report.findings if f.rule_id.startswith("GRD")]


def test_the_runtime_and_compiler_rules_are_declared() -> None:
    load_rules()
    for rule_id in ("GRD-004", "GRD-005"):
        spec = REGISTRY.get(rule_id)
        assert spec.check is None
        assert "ioa." in spec.enforced_by
