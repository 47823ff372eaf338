"""TRN-001..007, 010, 011, 101, 102: transition rules."""

from __future__ import annotations

from typing import Any

from ioa.validation.rules.transition import condition_signature
from tests.ioa.builders import example, findings_of, get, put, validate
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

Q = "nodes[q-dijkstra]"
W = "nodes[wrapup]"


def _cond(document: dict[str, Any], index: int, condition: object) -> None:
    put(document, f"{Q}.transitions[{index}].condition", condition)


def _loop_back(document: dict[str, Any]) -> None:
    put(document, f"{W}.transitions[0].targetNodeId", "warmup")


def _loop_back_with_escape(document: dict[str, Any]) -> None:
    _loop_back(document)
    get(document, f"{W}.transitions").append(
        {
            "id": "e-wrap-timeout",
            "targetNodeId": "end-normal",
            "condition": {"type": "time_elapsed", "seconds": 120},
        }
    )


CASES = [
    Case(
        "TRN-001",
        lambda d: put(d, f"{W}.transitions[0].targetNodeId", "nowhere"),
        lambda d: put(d, f"{W}.transitions[0].targetNodeId", "pool-scenario"),
        path=f"{W}.transitions[0].targetNodeId",
    ),
    Case(
        "TRN-002",
        lambda d: get(d, f"{W}.transitions[0]").pop("condition"),
        unchanged,
        path=f"{W}.transitions[0].condition",
    ),
    Case(
        "TRN-002",
        lambda d: put(d, f"{W}.transitions[0].condition", {"count": 3}),
        unchanged,
        path=f"{W}.transitions[0].condition.type",
        label="no-type",
    ),
    Case(
        "TRN-003",
        lambda d: _cond(d, 2, {"type": "sometimes"}),
        lambda d: _cond(d, 0, {"type": "evidence_sufficient"}),
        path=f"{Q}.transitions[2].condition.type",
    ),
    Case(
        "TRN-004",
        lambda d: _cond(d, 0, {"type": "evidence_satisfied"}),
        lambda d: _cond(d, 0, {"type": "evidence_satisfied", "targetIds": []}),
        path=f"{Q}.transitions[0].condition.targetIds",
    ),
    Case(
        "TRN-005",
        lambda d: _cond(d, 0, {"type": "evidence_sufficient", "requiredEvidence": ["tgt-x"]}),
        lambda d: _cond(
            d, 0, {"type": "evidence_sufficient", "requiredEvidence": ["tgt-greedy-choice"]}
        ),
        path=f"{Q}.transitions[0].condition.requiredEvidence[0]",
    ),
    Case(
        "TRN-006",
        lambda d: _cond(d, 1, {"type": "always"}),
        lambda d: _cond(d, 1, {"type": "time_elapsed", "seconds": 300}),
        path=f"{Q}.transitions[2].condition",
    ),
    Case("TRN-007", _loop_back, _loop_back_with_escape, path="nodes[warmup].transitions"),
    Case(
        "TRN-010",
        lambda d: get(d, f"{Q}.transitions").insert(
            2,
            {
                "id": "e-q1-wrap-turns",
                "targetNodeId": "wrapup",
                "condition": {"type": "turn_count_reached", "count": 8},
            },
        ),
        lambda d: get(d, f"{Q}.transitions").insert(
            2,
            {
                "id": "e-q1-wrap-turns",
                "targetNodeId": "wrapup",
                "condition": {"type": "turn_count_reached", "count": 9},
            },
        ),
        path=f"{Q}.transitions[2].condition",
    ),
    Case(
        "TRN-011",
        lambda d: _cond(d, 0, {"type": "evidence_satisfied", "targetIds": ["tgt-model-graph"]}),
        lambda d: _cond(d, 0, {"type": "evidence_satisfied", "targetIds": ["tgt-complexity"]}),
        path=f"{Q}.transitions[0].condition.targetIds[0]",
    ),
    Case(
        "TRN-101",
        lambda d: _cond(d, 1, {"type": "turn_count_reached", "count": 0}),
        lambda d: _cond(d, 1, {"type": "turn_count_reached", "count": 1}),
        path=f"{Q}.transitions[1].condition.count",
    ),
    Case(
        "TRN-101",
        lambda d: _cond(d, 2, {"type": "always", "count": 3}),
        unchanged,
        path=f"{Q}.transitions[2].condition.count",
        label="extra",
    ),
    Case(
        "TRN-101",
        lambda d: _cond(d, 1, {"type": "candidate_command", "command": "dance"}),
        lambda d: _cond(d, 1, {"type": "candidate_command", "command": "skip"}),
        label="command",
    ),
    Case(
        "TRN-101",
        lambda d: _cond(d, 1, {"type": "policy_escalation", "escalation": "panic"}),
        lambda d: _cond(d, 1, {"type": "policy_escalation", "escalation": "skip_node"}),
        label="escalation",
    ),
    Case(
        "TRN-101",
        lambda d: _cond(d, 1, {"type": "time_elapsed"}),
        lambda d: _cond(d, 1, {"type": "time_elapsed", "seconds": 1.5}),
        path=f"{Q}.transitions[1].condition.seconds",
        label="missing",
    ),
    Case(
        "TRN-102",
        lambda d: put(d, f"{W}.transitions[0].id", "e-warmup-q1"),
        lambda d: put(d, f"{W}.transitions[0].id", "e-wrap-end-2"),
        path=f"{W}.transitions[0].id",
    ),
    Case(
        "TRN-102",
        lambda d: get(d, f"{W}.transitions[0]").pop("id"),
        unchanged,
        label="missing",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


def test_deprecated_alias_is_compared_as_evidence_satisfied() -> None:
    written = {"type": "evidence_sufficient", "requiredEvidence": ["b", "a"]}
    canonical = {"type": "evidence_satisfied", "targetIds": ["a", "b"]}
    assert condition_signature(written) == condition_signature(canonical)


def test_alias_and_canonical_spelling_on_one_node_are_ambiguous() -> None:
    document = example()
    _cond(
        document,
        1,
        {
            "type": "evidence_sufficient",
            "requiredEvidence": ["tgt-complexity", "tgt-greedy-choice"],
        },
    )
    (finding,) = findings_of(validate(document), "TRN-010")
    assert finding.path == f"{Q}.transitions[1].condition"


def test_self_loop_without_escape_is_a_cycle() -> None:
    document = example()
    put(document, f"{W}.transitions[0].targetNodeId", "wrapup")
    (finding,) = findings_of(validate(document), "TRN-007")
    assert finding.path == f"{W}.transitions"


def test_forced_exit_leaving_the_cycle_is_an_escape() -> None:
    document = example()
    put(
        document,
        f"{W}.transitions[0]",
        {
            "id": "e-wrap-back",
            "targetNodeId": "warmup",
            "condition": {"type": "candidate_command", "command": "revise_earlier_answer"},
        },
    )
    get(document, f"{W}.transitions").append(
        {"id": "e-wrap-end", "targetNodeId": "end-normal", "condition": {"type": "always"}}
    )
    assert not findings_of(validate(document), "TRN-007")
