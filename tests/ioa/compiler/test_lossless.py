"""A-5: critical data survives the adapter verbatim, and can be recovered from the output.

The expectations are read from the package files as written (not from the normalised package),
so a normalisation that changed them would be caught too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ioa.compiler import compile_package
from ioa.compiler.task_message import (
    DO_NOT_HEADER,
    YOU_MAY_HEADER,
    block_action_ids,
    find_block,
)
from tests.ioa.compiler.conftest import example_paths


def recover(flow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What the output says about each node, read only from the compiled flow."""
    recovered: dict[str, dict[str, Any]] = {}
    for node in flow["nodes"]:
        metadata = node["metadata"]
        recovered[node["name"]] = {
            "nodeId": metadata["irNodeId"],
            "prompt": metadata.get("prompt"),
            "evidenceTargets": metadata["evidenceTargetDefinitions"],
            "timeBudget": metadata.get("timeBudget"),
            "forbiddenActions": metadata["forbiddenActions"],
            "allowedActions": metadata["allowedActions"],
            "conditions": [
                edge["condition"]
                for edge in sorted(flow["edges"], key=lambda e: e["order"])
                if edge["source"] == node["name"]
            ],
            "transitions": metadata["transitions"],
        }
    return recovered


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: p.stem)
def test_critical_data_is_recovered_verbatim(path: Path) -> None:
    package = json.loads(path.read_text())
    flow = compile_package(package)
    recovered = recover(flow)  # type: ignore[arg-type]

    assert list(recovered) == [node["nodeId"] for node in package["nodes"]]
    for node in package["nodes"]:
        got = recovered[node["nodeId"]]
        assert got["nodeId"] == node["nodeId"]
        assert got["prompt"] == node.get("prompt")
        assert got["evidenceTargets"] == node.get("evidenceTargets", [])
        assert got["timeBudget"] == node.get("timeBudget")
        assert got["forbiddenActions"] == node.get("forbiddenActions", [])
        assert got["allowedActions"] == node.get("allowedActions", [])
        assert got["conditions"] == [t["condition"] for t in node["transitions"]]
        assert [t["targetNodeId"] for t in got["transitions"]] == [
            t["targetNodeId"] for t in node["transitions"]
        ]
    assert flow["runtime"]["totalTimeBudgetSec"] == package["metadata"]["totalTimeBudgetSec"]


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: p.stem)
def test_the_llm_instructions_carry_question_text_and_actions_verbatim(path: Path) -> None:
    package = json.loads(path.read_text())
    flow = compile_package(package)
    global_forbidden = package.get("globalPolicies", {}).get("forbiddenActions", [])
    for node, compiled in zip(package["nodes"], flow["nodes"], strict=True):
        content = compiled["task_messages"][0]["content"]
        prompt = node.get("prompt", {})
        for text in (prompt.get("opening"), prompt.get("closing"), node.get("scenario")):
            if text:
                assert text in content
        do_not = block_action_ids(find_block(content, DO_NOT_HEADER) or [])
        assert set(do_not) == {*node.get("forbiddenActions", []), *global_forbidden}
        if node["kind"] != "end":
            you_may = block_action_ids(find_block(content, YOU_MAY_HEADER) or [])
            assert you_may == node.get("allowedActions", [])
            for target in node.get("evidenceTargets", []):
                assert f"- {target['id']} ({target['label']}): {target['description']}" in content
            budget = node.get("timeBudget", {}).get("maxDurationSec")
            if budget is not None:
                assert f"Time budget: {budget} seconds" in content


def test_every_node_gets_a_config_and_end_nodes_keep_their_closing(
    cs201_flow: dict[str, Any], cs201: dict[str, Any]
) -> None:
    assert [n["name"] for n in cs201_flow["nodes"]] == [n["nodeId"] for n in cs201["nodes"]]
    for node, compiled in zip(cs201["nodes"], cs201_flow["nodes"], strict=True):
        if node["kind"] == "end":
            assert compiled["functions"] == []
            assert compiled["respond_immediately"] is False
            assert compiled["pre_actions"] == [
                {"type": "end_conversation", "text": node["prompt"]["closing"]}
            ]
        else:
            assert compiled["functions"] == ["report_observation"]
            assert compiled["respond_immediately"] is True


def test_everything_pipecat_cannot_express_is_runtime_metadata(
    cs201_flow: dict[str, Any], cs201: dict[str, Any]
) -> None:
    q1 = next(n for n in cs201_flow["nodes"] if n["name"] == "q-dijkstra")["metadata"]
    source = cs201["nodes"][1]
    assert q1["completionPolicy"] == source["completionPolicy"]
    assert q1["followUpPolicy"] == source["followUpPolicy"]
    assert q1["recoveryHandlers"] == source["recoveryHandlers"]
    assert q1["candidateCommands"]["allowed"] == source["candidateCommands"]["allowed"]
    assert q1["candidateCommands"]["forbidden"] == source["candidateCommands"]["forbidden"]
    assert q1["contextPolicy"] == source["contextPolicy"]
    assert q1["maxFollowUps"] == 3
    assert q1["timeBudgetSec"] == 360
    assert q1["evidenceTargets"] == ["tgt-greedy-choice", "tgt-complexity", "tgt-negative-weights"]
    assert cs201_flow["runtime"]["questionPools"] == cs201["questionPools"]
    assert cs201_flow["runtime"]["persona"] == cs201["persona"]
    assert (
        cs201_flow["runtime"]["globalPolicies"]["forbiddenActions"]
        == (cs201["globalPolicies"]["forbiddenActions"])
    )
    members = {n["name"]: n["metadata"]["questionPoolIds"] for n in cs201_flow["nodes"]}
    assert members["scn-delivery-routes"] == members["scn-network-latency"] == ["pool-scenario"]
    # Nodes without their own command policy get the package default (and say so verbatim).
    wrapup = next(n for n in cs201_flow["nodes"] if n["name"] == "end-normal")["metadata"]
    assert (
        wrapup["effectiveCandidateCommands"]["allowed"]
        == (cs201["globalPolicies"]["defaultCandidateCommands"]["allowed"])
    )


def test_edges_are_guarded_and_pools_are_marked(cs201_flow: dict[str, Any]) -> None:
    edges = cs201_flow["edges"]
    assert all(edge["guard"] == "runtime_controller_approval" for edge in edges)
    by_id = {edge["id"]: edge for edge in edges}
    assert by_id["e-q1-pool"]["targetKind"] == "pool"
    assert by_id["e-q1-pool"]["checkedOn"] == "natural_completion"
    assert by_id["e-q1-pool-turns"]["checkedOn"] == "every_turn"
    assert by_id["e-warmup-q1"]["targetKind"] == "node"
    assert by_id["e-scn1-skip"]["condition"] == {"type": "candidate_command", "command": "skip"}


def test_context_strategies_follow_the_context_policy(cs201_flow: dict[str, Any]) -> None:
    strategies = {n["name"]: n["context_strategy"] for n in cs201_flow["nodes"]}
    assert strategies["q-dijkstra"] == {"strategy": "reset"}
    assert strategies["warmup"] == {"strategy": "reset"}  # the default
    assert strategies["wrapup"]["strategy"] == "reset_with_summary"
    assert strategies["wrapup"]["summaryPrompt"]


def test_a_wrapup_without_context_policy_defaults_to_reset_with_summary(
    cs201: dict[str, Any],
) -> None:
    del cs201["nodes"][4]["contextPolicy"]
    flow = compile_package(cs201)
    assert flow["nodes"][4]["context_strategy"]["strategy"] == "reset_with_summary"


def test_adapter_constants_are_in_the_flow(cs201_flow: dict[str, Any]) -> None:
    assert cs201_flow["dataChannel"]["topic"] == "exam-runtime-events"
    assert cs201_flow["transcriptHooks"]["forwardTo"] == "runtime_controller"
    names = [f["name"] for f in cs201_flow["outputValidationFilters"]["filters"]]
    assert names == [
        "persona_break",
        "rubric_leak",
        "topic_containment",
        "length",
        "leading_question",
    ]
    length = cs201_flow["outputValidationFilters"]["filters"][3]
    assert length["maxChars"] == 500
    assert cs201_flow["runtime"]["commandAliases"]["clarify"] == "clarification"
