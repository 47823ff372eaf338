"""NOD-Q001..012: question node rules."""

from __future__ import annotations

from tests.ioa.builders import example, findings_of, get, put, validate
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

Q = "nodes[q-dijkstra]"

CASES = [
    Case(
        "NOD-Q001",
        lambda d: put(d, f"{Q}.evidenceTargets", []),
        lambda d: put(d, "nodes[warmup].evidenceTargets", []),
        path=f"{Q}.evidenceTargets",
    ),
    Case(
        "NOD-Q002",
        lambda d: put(d, f"{Q}.evidenceTargets[1].id", "tgt-greedy-choice"),
        lambda d: put(d, f"{Q}.evidenceTargets[1].id", "tgt-greedy-choice-2"),
        path=f"{Q}.evidenceTargets[1].id",
    ),
    Case(
        "NOD-Q003",
        lambda d: put(d, f"{Q}.evidenceTargets[0].label", " "),
        lambda d: put(d, f"{Q}.evidenceTargets[0].label", "Greedy"),
        path=f"{Q}.evidenceTargets[0].label",
    ),
    Case(
        "NOD-Q004",
        lambda d: get(d, f"{Q}.evidenceTargets[2]").pop("weight"),
        unchanged,
        path=f"{Q}.evidenceTargets[2].weight",
    ),
    Case(
        "NOD-Q004",
        lambda d: put(d, f"{Q}.evidenceTargets[2].weight", -0.2),
        lambda d: put(d, f"{Q}.evidenceTargets[2].weight", 0),
        label="range",
    ),
    Case(
        "NOD-Q005",
        lambda d: put(d, f"{Q}.evidenceTargets[0].weight", 0.6),
        lambda d: put(d, f"{Q}.evidenceTargets[0].weight", 0.54),
        path=f"{Q}.evidenceTargets",
    ),
    Case(
        "NOD-Q006",
        lambda d: get(d, Q).pop("followUpPolicy"),
        lambda d: put(d, f"{Q}.followUpPolicy", {"maxFollowUps": 0}),
        path=f"{Q}.followUpPolicy",
    ),
    Case(
        "NOD-Q007",
        lambda d: put(d, f"{Q}.followUpPolicy.maxFollowUps", -1),
        lambda d: put(d, f"{Q}.followUpPolicy.maxFollowUps", 0),
        path=f"{Q}.followUpPolicy.maxFollowUps",
    ),
    Case(
        "NOD-Q008",
        lambda d: put(d, f"{Q}.followUpPolicy.maxFollowUps", 11),
        lambda d: put(d, f"{Q}.followUpPolicy.maxFollowUps", 10),
        path=f"{Q}.followUpPolicy.maxFollowUps",
    ),
    Case(
        "NOD-Q009",
        lambda d: put(d, f"{Q}.followUpPolicy.maxFollowUpDurationSec", 0),
        lambda d: put(d, f"{Q}.followUpPolicy.maxFollowUpDurationSec", 0.5),
        path=f"{Q}.followUpPolicy.maxFollowUpDurationSec",
    ),
    Case(
        "NOD-Q010",
        lambda d: put(d, f"{Q}.followUpPolicy.followUpStyle", "socratic"),
        lambda d: put(d, f"{Q}.followUpPolicy.followUpStyle", "free"),
        path=f"{Q}.followUpPolicy.followUpStyle",
    ),
    Case(
        "NOD-Q011",
        lambda d: put(d, f"{Q}.candidateCommands.allowed", ["pause", "raise_hand"]),
        lambda d: (
            put(d, f"{Q}.candidateCommands.allowed", ["pause", "raise_hand"]),
            put(d, "metadata.commandJustification", "Questions are shown on screen."),
        ),
        path=f"{Q}.candidateCommands.allowed",
    ),
    Case(
        "NOD-Q012",
        lambda d: put(d, f"{Q}.followUpPolicy.followUpStyle", "scaffolding"),
        lambda d: (
            put(d, f"{Q}.followUpPolicy.followUpStyle", "scaffolding"),
            put(d, "metadata.structureJustification", "The core question scaffolds by design."),
        ),
        path=f"{Q}.followUpPolicy.followUpStyle",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


def test_welfare_commands_count_as_allowed_for_the_minimum() -> None:
    document = put(example(), f"{Q}.candidateCommands.allowed", ["repeat", "clarification"])
    assert not findings_of(validate(document), "NOD-Q011")


def test_twin_rules_are_both_reported_and_name_each_other() -> None:
    report = validate(put(example(), f"{Q}.followUpPolicy.maxFollowUps", -1))
    (q007,) = findings_of(report, "NOD-Q007")
    (f001,) = findings_of(report, "POL-F001")
    assert "POL-F001" in q007.message
    assert "NOD-Q007" in f001.message
    assert q007.message.startswith("followUpPolicy.maxFollowUps must be >= 0, got -1")
