"""FAIR-001..004: fairness rules."""

from __future__ import annotations

from typing import Any

from tests.ioa.builders import get, put
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

Q = "nodes[q-dijkstra]"


def _halve_weights(document: dict[str, Any]) -> None:
    for target in get(document, f"{Q}.evidenceTargets"):
        target["weight"] = target["weight"] / 2


CASES = [
    Case(
        "FAIR-001",
        _halve_weights,
        lambda d: (
            _halve_weights(d),
            put(d, "metadata.difficultyJustification", "The core question counts half."),
        ),
        path=f"{Q}.evidenceTargets",
    ),
    Case(
        "FAIR-002",
        lambda d: put(d, f"{Q}.timeBudget.maxDurationSec", 900),
        lambda d: put(d, f"{Q}.timeBudget.maxDurationSec", 600),
        path=f"{Q}.timeBudget",
    ),
    Case(
        "FAIR-002",
        lambda d: put(d, f"{Q}.timeBudget.maxDurationSec", 900),
        lambda d: (
            put(d, f"{Q}.timeBudget.maxDurationSec", 900),
            put(d, "metadata.timeBudgetJustification", "The core question needs more time."),
        ),
        label="justified",
    ),
    Case(
        "FAIR-003",
        lambda d: get(d, "questionPools[0]").pop("difficultyCalibration"),
        lambda d: (
            get(d, "questionPools[0]").pop("difficultyCalibration"),
            put(d, "questionPools[0].nodeIds", ["scn-delivery-routes"]),
        ),
        path="questionPools[0].difficultyCalibration",
    ),
    Case(
        "FAIR-003",
        lambda d: put(d, "questionPools[0].difficultyCalibration.notes", " "),
        unchanged,
        path="questionPools[0].difficultyCalibration.notes",
        label="notes",
    ),
    Case(
        "FAIR-004",
        lambda d: put(d, "metadata.expectedCandidateCount", 60),
        lambda d: put(d, "metadata.expectedCandidateCount", 50),
        path="questionPools[0].nodeIds",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)
