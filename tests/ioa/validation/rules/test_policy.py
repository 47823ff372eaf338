"""POL-001..004, POL-006, POL-101: policy rules."""

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
T0 = f"{Q}.evidenceTargets[0]"

CASES = [
    Case(
        "POL-001",
        lambda d: get(d, f"{Q}.allowedActions").append("confirm_correctness"),
        lambda d: get(d, f"{Q}.allowedActions").append("give_time_warning"),
        path=f"{Q}.allowedActions[3]",
    ),
    Case(
        "POL-001",
        lambda d: put(d, "nodes[warmup].allowedActions", ["ask_multiple_questions_at_once"]),
        unchanged,
        path="nodes[warmup].allowedActions[0]",
        label="global",
    ),
    Case(
        "POL-002",
        lambda d: get(d, f"{Q}.candidateCommands.allowed").append("dance"),
        lambda d: get(d, f"{Q}.candidateCommands.allowed").append("slow_down"),
        path=f"{Q}.candidateCommands.allowed[6]",
    ),
    Case(
        "POL-002",
        lambda d: get(d, "globalPolicies.defaultCandidateCommands.allowed").append("dance"),
        unchanged,
        path="globalPolicies.defaultCandidateCommands.allowed[6]",
        label="default",
    ),
    Case(
        "POL-003",
        lambda d: get(d, f"{Q}.candidateCommands.forbidden[0]").pop("reason"),
        lambda d: put(d, f"{Q}.candidateCommands.forbidden[0].reason", "Core question."),
        path=f"{Q}.candidateCommands.forbidden[0].reason",
    ),
    Case(
        "POL-003",
        lambda d: put(d, f"{Q}.candidateCommands.forbidden[0].command", "teleport"),
        lambda d: put(d, f"{Q}.candidateCommands.forbidden[0].command", "help"),
        path=f"{Q}.candidateCommands.forbidden[0].command",
        label="command",
    ),
    Case(
        "POL-003",
        lambda d: put(d, f"{Q}.candidateCommands.forbidden[0].onViolation", "ignore"),
        lambda d: put(d, f"{Q}.candidateCommands.forbidden[0].onViolation", "redirect_to_question"),
        label="on-violation",
    ),
    Case(
        "POL-004",
        lambda d: (
            put(d, f"{Q}.forbiddenActions", []),
            put(d, "globalPolicies.forbiddenActions", ["reveal_answer"]),
        ),
        lambda d: (
            put(d, f"{Q}.forbiddenActions", []),
            put(d, "globalPolicies.forbiddenActions", ["reveal_model_answer", "reveal_scoring"]),
        ),
        path=f"{Q}.forbiddenActions",
    ),
    Case(
        "POL-006",
        lambda d: put(d, f"{T0}.description", "Excellent: explains settling and relaxation."),
        lambda d: put(
            d, f"{T0}.description", "Candidate gives an excellent account of settling: relax."
        ),
        path=f"{T0}.description",
    ),
    Case(
        "POL-006",
        lambda d: put(d, f"{T0}.label", "Grade A: greedy choice"),
        lambda d: put(d, f"{T0}.label", "Grade of the greedy choice"),
        path=f"{T0}.label",
        label="grade",
    ),
    Case(
        "POL-006",
        lambda d: put(d, f"{T0}.description", "Mostly complete: explains settling."),
        unchanged,
        label="own-label",
    ),
    Case(
        "POL-006",
        lambda d: put(
            d,
            f"{Q}.promptSeed",
            "Ask about Dijkstra. Explains settling and relaxation without justifying the greedy "
            "choice.",
        ),
        unchanged,
        path=f"{Q}.promptSeed",
        label="verbatim",
    ),
    Case(
        "POL-101",
        lambda d: get(d, f"{Q}.candidateCommands.forbidden").append(
            {"command": "pause", "reason": "No pauses.", "onViolation": "refuse_politely"}
        ),
        unchanged,
        path=f"{Q}.candidateCommands.forbidden[1].command",
    ),
    Case(
        "POL-101",
        lambda d: put(d, f"{Q}.candidateCommands.forbidden[0].command", "repeat"),
        lambda d: put(d, f"{Q}.candidateCommands.forbidden[0].command", "help"),
        label="both",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


def test_rubric_descriptions_themselves_are_not_leaks() -> None:
    assert not findings_of(validate(example()), "POL-006")
