"""NOD-001..012: node rules."""

from __future__ import annotations

from tests.ioa.builders import delete, example, findings_of, put, validate
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

CASES = [
    Case(
        "NOD-001",
        lambda d: put(d, "nodes[wrapup].nodeId", "wrap up"),
        lambda d: put(d, "nodes[wrapup].nodeId", "Wrap_up-2"),
        path="nodes[4].nodeId",
    ),
    Case(
        "NOD-001",
        lambda d: d["nodes"].append("junk"),
        unchanged,
        path="nodes[9]",
        label="not-object",
    ),
    Case("NOD-001", lambda d: delete(d, "nodes[wrapup].nodeId"), unchanged, label="missing"),
    Case(
        "NOD-002",
        lambda d: put(d, "nodes[wrapup].kind", "quiz"),
        lambda d: put(d, "nodes[wrapup].kind", "discussion"),
        path="nodes[wrapup].kind",
    ),
    Case(
        "NOD-003",
        lambda d: put(d, "nodes[wrapup].transitions", []),
        lambda d: put(d, "nodes[end-normal].transitions", []),
        path="nodes[wrapup].transitions",
    ),
    Case(
        "NOD-005",
        lambda d: put(d, "nodes[warmup].promptSeed", "   "),
        lambda d: put(d, "nodes[warmup].promptSeed", "Greet."),
        path="nodes[warmup].promptSeed",
    ),
    Case(
        "NOD-008",
        lambda d: put(d, "nodes[warmup].promptSeed", "a" * 8001),
        lambda d: put(d, "nodes[warmup].promptSeed", "a" * 8000),
        path="nodes[warmup].promptSeed",
    ),
    Case(
        "NOD-010",
        lambda d: (delete(d, "nodes[warmup].timeBudget"), put(d, "nodes[warmup].timeBudgetMs", -5)),
        lambda d: (
            delete(d, "nodes[warmup].timeBudget"),
            put(d, "nodes[warmup].timeBudgetMs", 90000),
        ),
        path="nodes[warmup].timeBudgetMs",
    ),
    Case(
        "NOD-010",
        lambda d: put(d, "nodes[warmup].timeBudget.maxDurationSec", 0),
        lambda d: put(d, "nodes[warmup].timeBudget.maxDurationSec", 0.5),
        path="nodes[warmup].timeBudget.maxDurationSec",
        label="seconds",
    ),
    Case(
        "NOD-011",
        lambda d: put(d, "nodes[q-dijkstra].timeBudget.maxDurationSec", 20),
        lambda d: put(d, "nodes[q-dijkstra].timeBudget.maxDurationSec", 30),
        path="nodes[q-dijkstra].timeBudget",
    ),
    Case(
        "NOD-011",
        lambda d: delete(d, "nodes[q-dijkstra].timeBudget"),
        lambda d: delete(d, "nodes[warmup].timeBudget"),
        label="missing",
    ),
    Case(
        "NOD-012",
        lambda d: put(d, "nodes[warmup].candidateCommands", {"allowed": []}),
        lambda d: delete(d, "nodes[warmup].candidateCommands"),
        path="nodes[warmup].candidateCommands",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


def test_question_budget_in_milliseconds_is_checked_after_conversion() -> None:
    document = example()
    delete(document, "nodes[q-dijkstra].timeBudget")
    put(document, "nodes[q-dijkstra].timeBudgetMs", 700_000)
    (finding,) = findings_of(validate(document), "NOD-011")
    assert finding.path == "nodes[q-dijkstra].timeBudgetMs"
    assert "700 s" in finding.message


def test_end_nodes_need_no_transitions_or_commands() -> None:
    report = validate(example())
    assert not findings_of(report, "NOD-003")
    assert not findings_of(report, "NOD-012")
