"""EVD-001..007, EVD-101: evidence rules."""

from __future__ import annotations

from tests.ioa.builders import get, put
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

Q = "nodes[q-dijkstra]"
T0 = f"{Q}.evidenceTargets[0]"

CASES = [
    Case(
        "EVD-001",
        lambda d: put(d, f"{Q}.evidenceTargets[2].id", "tgt-complexity"),
        lambda d: put(d, f"{Q}.evidenceTargets[2].id", "tgt-negative-weights-2"),
        path=f"{Q}.evidenceTargets[2].id",
    ),
    Case(
        "EVD-002",
        lambda d: (
            put(d, "nodes[scn-network-latency].evidenceTargets[0].id", "tgt-model-graph"),
            put(
                d,
                "nodes[scn-network-latency].transitions[0].condition.targetIds",
                ["tgt-model-graph", "tgt-choose-algorithm-net"],
            ),
        ),
        unchanged,
        path="nodes[scn-network-latency].evidenceTargets[0].id",
    ),
    Case(
        "EVD-003",
        lambda d: put(d, f"{T0}.label", ""),
        lambda d: put(d, f"{T0}.label", "G"),
        path=f"{T0}.label",
    ),
    Case(
        "EVD-004",
        lambda d: put(d, f"{T0}.weight", 1.5),
        lambda d: put(d, f"{T0}.weight", 1.0),
        path=f"{T0}.weight",
    ),
    Case(
        "EVD-004",
        lambda d: put(d, f"{T0}.weight", "0.5"),
        lambda d: put(d, f"{T0}.weight", None),
        label="type",
    ),
    Case(
        "EVD-005",
        lambda d: put(d, f"{T0}.weight", 0.4),
        lambda d: put(d, f"{T0}.weight", 0.46),
        path=f"{Q}.evidenceTargets",
    ),
    Case(
        "EVD-006",
        lambda d: get(d, f"{T0}.rubricDescriptor.levels").pop("absent"),
        unchanged,
        path=f"{T0}.rubricDescriptor.levels",
    ),
    Case(
        "EVD-007",
        lambda d: put(d, f"{T0}.markingCriteria", []),
        lambda d: put(d, f"{T0}.markingCriteria", ["LO4"]),
        path=f"{T0}.markingCriteria",
    ),
    Case(
        "EVD-007",
        lambda d: put(d, f"{T0}.markingCriteria", ["LO9"]),
        lambda d: (
            put(d, f"{T0}.markingCriteria", ["LO9"]),
            put(d, "metadata.learningOutcomes", []),
        ),
        path=f"{T0}.markingCriteria[0]",
        label="unknown-outcome",
    ),
    Case(
        "EVD-101",
        lambda d: put(d, f"{Q}.completionPolicy.requiredEvidenceTargetIds", ["tgt-x"]),
        lambda d: put(d, f"{Q}.completionPolicy.requiredEvidenceTargetIds", ["tgt-complexity"]),
        path=f"{Q}.completionPolicy.requiredEvidenceTargetIds[0]",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)
