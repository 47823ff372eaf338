"""TRN-008, TRN-009: reachability."""

from __future__ import annotations

from tests.ioa.builders import end_node, example, findings_of, put, question_node, validate
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

CASES = [
    Case(
        "TRN-008",
        lambda d: put(d, "nodes[wrapup].transitions[0].targetNodeId", "warmup"),
        unchanged,
        path="initialNodeId",
    ),
    Case(
        "TRN-009",
        lambda d: d["nodes"].append(question_node("q-orphan", "wrapup")),
        lambda d: d["nodes"].append(end_node("end-terminated-2", "terminated")),
        path="nodes[q-orphan]",
    ),
    Case(
        "TRN-009",
        lambda d: d["nodes"].append(end_node("end-normal-2", "normal")),
        unchanged,
        label="normal-end",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


def test_pool_members_are_reached_through_the_pool() -> None:
    report = validate(example())
    assert not findings_of(report, "TRN-009")


def test_nodes_behind_an_orphan_are_orphans_too() -> None:
    document = example()
    document["nodes"].append(question_node("q-orphan-a", "q-orphan-b"))
    document["nodes"].append(question_node("q-orphan-b", "wrapup"))
    paths = {finding.path for finding in findings_of(validate(document), "TRN-009")}
    assert paths == {"nodes[q-orphan-a]", "nodes[q-orphan-b]"}


def test_reachability_is_skipped_when_the_start_is_unknown() -> None:
    report = validate(put(example(), "initialNodeId", "nope"))
    assert not findings_of(report, "TRN-008")
    assert not findings_of(report, "TRN-009")
