"""NOD-E001..007, NOD-E101/E102: end node rules."""

from __future__ import annotations

from tests.ioa.builders import delete, end_node, example, findings_of, get, put, validate
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

E = "nodes[end-normal]"
TARGET = {"id": "tgt-x", "label": "X", "weight": 1.0}

CASES = [
    Case(
        "NOD-E001",
        lambda d: delete(d, f"{E}.endType"),
        unchanged,
        path=f"{E}.endType",
    ),
    Case(
        "NOD-E001",
        lambda d: put(d, f"{E}.endType", "aborted"),
        lambda d: put(d, f"{E}.endType", "normal"),
        label="enum",
    ),
    Case(
        "NOD-E002",
        lambda d: put(d, f"{E}.prompt", {"opening": "Bye."}),
        lambda d: put(d, f"{E}.prompt", {"closing": "Bye."}),
        path=f"{E}.prompt.closing",
    ),
    Case(
        "NOD-E003",
        lambda d: put(d, f"{E}.evidenceTargets", [TARGET]),
        lambda d: put(d, f"{E}.evidenceTargets", []),
        path=f"{E}.evidenceTargets",
    ),
    Case(
        "NOD-E004",
        lambda d: put(d, f"{E}.followUpPolicy", {"maxFollowUps": 0}),
        unchanged,
        path=f"{E}.followUpPolicy",
    ),
    Case(
        "NOD-E005",
        lambda d: put(d, f"{E}.timeBudget", {"maxDurationSec": 30}),
        unchanged,
        path=f"{E}.timeBudget",
    ),
    Case(
        "NOD-E005",
        lambda d: put(d, f"{E}.timeBudgetMs", 30000),
        unchanged,
        path=f"{E}.timeBudgetMs",
        label="ms",
    ),
    Case(
        "NOD-E006",
        lambda d: put(d, f"{E}.endType", "timeout"),
        lambda d: d["nodes"].append(end_node("end-normal-2", "normal")),
        path="nodes",
    ),
    Case(
        "NOD-E007",
        lambda d: d["nodes"].remove(get(d, "nodes[end-technical]")),
        lambda d: (
            d["nodes"].remove(get(d, "nodes[end-technical]")),
            put(d, "metadata.endNodeRationale", "Technical failures are handled by the platform."),
        ),
        path="nodes",
    ),
    Case(
        "NOD-E101",
        lambda d: put(
            d,
            f"{E}.transitions",
            [{"id": "e-again", "targetNodeId": "warmup", "condition": {"type": "always"}}],
        ),
        lambda d: delete(d, f"{E}.transitions"),
        path=f"{E}.transitions",
    ),
    Case(
        "NOD-E102",
        lambda d: put(d, "nodes[wrapup].endType", "normal"),
        unchanged,
        path="nodes[wrapup].endType",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


def test_runtime_entered_ends_do_not_count_without_a_normal_end() -> None:
    document = example()
    put(document, "nodes[wrapup].transitions[0].targetNodeId", "end-timeout")
    report = validate(document)
    assert findings_of(report, "NOD-E006")
    assert not findings_of(report, "TRN-008")  # an end is reachable, just not a normal one


def test_unreachable_normal_end_does_not_count() -> None:
    document = example()
    put(document, "nodes[wrapup].transitions[0].targetNodeId", "end-terminated")
    (finding,) = findings_of(validate(document), "NOD-E006")
    assert "'end-terminated'" in finding.message
