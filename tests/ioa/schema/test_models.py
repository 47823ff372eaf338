"""ioa.schema models: shape, strictness, enums, defaults, aliases."""

from __future__ import annotations

from typing import Any

import pytest

from ioa.errors import PackageLoadError
from ioa.schema import (
    ALWAYS_ALLOWED_COMMANDS,
    AssessmentPackage,
    CandidateCommandType,
    ConditionType,
    ContextStrategy,
    EvidenceSatisfiedCondition,
    NodeKind,
    RecoveryScenario,
    SignalKind,
    load_package,
)
from tests.ioa.builders import delete, example, get, put


def test_example_loads() -> None:
    package = load_package(example())
    assert isinstance(package, AssessmentPackage)
    assert package.node("q-dijkstra") is not None
    assert package.pool("pool-scenario") is not None
    assert package.node("nope") is None
    assert package.pool("nope") is None


def test_enums_cover_the_spec_lists() -> None:
    assert len(SignalKind) == 8
    assert {kind.value for kind in NodeKind} >= {
        "question",
        "scenario",
        "task",
        "discussion",
        "warmup",
        "wrapup",
        "branch",
        "identity_check",
        "end",
    }
    assert "stt_low_confidence" in {scenario.value for scenario in RecoveryScenario}
    assert [strategy.value for strategy in ContextStrategy] == [
        "reset",
        "append",
        "reset_with_summary",
    ]
    assert len(ConditionType) == 6


def test_candidate_commands_include_the_canonical_table_and_pol_002() -> None:
    canonical = {
        "repeat",
        "clarification",
        "request_rephrase",
        "slow_down",
        "pause",
        "resume",
        "thinking_aloud",
        "help",
        "skip",
        "revise_earlier_answer",
        "finish",
        "raise_hand",
        "challenge_premise",
        "report_audio_issue",
        "emergency_stop",
        "signal_confidence",
        "volume_up",
        "volume_down",
        "language_switch",
    }
    pol_002 = {
        "repeat",
        "clarification",
        "request_rephrase",
        "pause",
        "raise_hand",
        "skip",
        "volume_up",
        "volume_down",
        "language_switch",
        "thinking_aloud",
    }
    values = {command.value for command in CandidateCommandType}
    assert values == canonical
    assert pol_002 <= values
    assert {command.value for command in ALWAYS_ALLOWED_COMMANDS} == {
        "pause",
        "resume",
        "raise_hand",
        "report_audio_issue",
        "emergency_stop",
        "finish",
    }


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("nodes[q-dijkstra].followUpPolicy.maxFollowUps", "3"),
        ("nodes[q-dijkstra].followUpPolicy.maxFollowUps", True),
        ("nodes[q-dijkstra].followUpPolicy.maxFollowUps", 3.0),
        ("nodes[q-dijkstra].evidenceTargets[0].weight", "0.5"),
        ("nodes[q-dijkstra].evidenceTargets[0].weight", True),
        ("nodes[q-dijkstra].kind", "Question"),
        ("nodes[q-dijkstra].promptSeed", ""),
        ("nodes[q-dijkstra].evidenceTargets[0].dimension", "vibes"),
        ("metadata.createdAt", "2026-11-01T09:00:00"),
        ("metadata.packageId", "not-a-uuid"),
        ("irVersion", "ioa-orm/0.2.0"),
    ],
)
def test_strict_types_and_formats(path: str, value: Any) -> None:
    with pytest.raises(PackageLoadError):
        load_package(put(example(), path, value))


def test_unknown_fields_fail_closed_except_extensions() -> None:
    with pytest.raises(PackageLoadError, match="unknown field 'colour'"):
        load_package(put(example(), "nodes[warmup].colour", "red"))
    package = load_package(put(example(), "metadata.extensions", {"studio": {"any": ["thing"]}}))
    assert package.metadata.extensions == {"studio": {"any": ["thing"]}}


def test_integers_are_accepted_where_numbers_are_expected() -> None:
    package = load_package(put(example(), "nodes[q-dijkstra].evidenceTargets[0].weight", 1))
    assert package.nodes[1].evidenceTargets[0].weight == 1.0


def test_defaults() -> None:
    package = load_package(example())
    warmup = package.nodes[0]
    assert warmup.evidenceTargets == []
    assert warmup.recoveryHandlers == []
    assert warmup.followUpPolicy is None
    assert warmup.completionPolicy is None
    end = package.node("end-normal")
    assert end is not None
    assert end.is_end
    assert not end.is_question_like
    document = example()
    delete(document, "questionPools[0].selection")
    assert load_package(document).questionPools[0].selection == "random_one"


def test_time_budget_ms_is_converted_to_seconds() -> None:
    document = example()
    delete(document, "nodes[warmup].timeBudget")
    put(document, "nodes[warmup].timeBudgetMs", 90500)
    warmup = load_package(document).nodes[0]
    assert warmup.timeBudget is not None
    assert warmup.timeBudget.maxDurationSec == 90.5
    assert "timeBudgetMs" not in warmup.model_dump()


def test_time_budget_ms_equal_to_the_canonical_field_is_accepted() -> None:
    document = put(example(), "nodes[warmup].timeBudgetMs", 90000)
    assert load_package(document).nodes[0].timeBudget is not None


def test_time_budget_ms_conflicting_with_the_canonical_field_is_rejected() -> None:
    document = put(example(), "nodes[warmup].timeBudgetMs", 60000)
    with pytest.raises(PackageLoadError, match="disagrees"):
        load_package(document)


def test_evidence_sufficient_alias_is_converted() -> None:
    document = put(
        example(),
        "nodes[q-dijkstra].transitions[0].condition",
        {"type": "evidence_sufficient", "requiredEvidence": ["tgt-greedy-choice"]},
    )
    condition = load_package(document).nodes[1].transitions[0].condition
    assert isinstance(condition, EvidenceSatisfiedCondition)
    assert condition.targetIds == ["tgt-greedy-choice"]


def test_evidence_sufficient_without_required_evidence_means_completion_policy_only() -> None:
    document = put(
        example(), "nodes[q-dijkstra].transitions[0].condition", {"type": "evidence_sufficient"}
    )
    condition = load_package(document).nodes[1].transitions[0].condition
    assert isinstance(condition, EvidenceSatisfiedCondition)
    assert condition.targetIds == []


def test_condition_parameters_are_exact() -> None:
    with pytest.raises(PackageLoadError):
        load_package(put(example(), "nodes[q-dijkstra].transitions[1].condition.seconds", 5))


def test_serialisation_keeps_integers_integral() -> None:
    dumped = load_package(example()).model_dump(mode="json", exclude_none=True)
    assert dumped["nodes"][1]["timeBudget"] == {"maxDurationSec": 360}
    assert dumped["nodes"][1]["evidenceTargets"][0]["weight"] == 0.5


def test_round_trip_of_the_example() -> None:
    original = example()
    dumped = load_package(original).model_dump(mode="json", exclude_unset=True)
    assert dumped == original


def test_pool_node_ids_must_not_be_empty() -> None:
    with pytest.raises(PackageLoadError):
        load_package(put(example(), "questionPools[0].nodeIds", []))


def test_dump_of_nested_get_helper_is_consistent() -> None:
    document = example()
    assert get(document, "nodes[q-dijkstra].evidenceTargets[tgt-complexity].weight") == 0.3
