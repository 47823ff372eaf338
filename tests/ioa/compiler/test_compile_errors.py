"""Chapter 07 §11: the adapter fails closed, in the validation report format."""

from __future__ import annotations

from typing import Any

import pytest

from ioa.compiler import (
    CompileError,
    compile_normalised,
    compile_package,
    compile_with_findings,
    package_document,
)
from ioa.errors import IoaError, PackageLoadError


def compile_error(package: dict[str, Any]) -> CompileError:
    with pytest.raises(CompileError) as caught:
        compile_package(package)
    return caught.value


def test_undefined_evidence_reference_in_a_transition(cs201: dict[str, Any]) -> None:
    cs201["nodes"][1]["transitions"][0]["condition"]["targetIds"].append("tgt-unknown")
    error = compile_error(cs201)
    assert [f.to_dict() for f in error.errors] == [
        {
            "ruleId": "ADP-C001",
            "severity": "error",
            "nodeId": "q-dijkstra",
            "message": "transition condition references evidence target 'tgt-unknown', which "
            "this node does not define",
            "path": "nodes[q-dijkstra].transitions[0].condition.targetIds[2]",
        }
    ]
    assert error.errors[0].path == ("nodes", 1, "transitions", 0, "condition", "targetIds", 2)


def test_undefined_evidence_reference_in_the_completion_policy(cs201: dict[str, Any]) -> None:
    cs201["nodes"][2]["completionPolicy"]["requiredEvidenceTargetIds"] = ["tgt-greedy-choice"]
    error = compile_error(cs201)
    assert [(f.rule_id, f.rendered_path) for f in error.errors] == [
        ("ADP-C001", "nodes[scn-delivery-routes].completionPolicy.requiredEvidenceTargetIds[0]")
    ]


def test_transition_to_a_missing_node(cs201: dict[str, Any]) -> None:
    cs201["nodes"][0]["transitions"][0]["targetNodeId"] = "q-missing"
    error = compile_error(cs201)
    assert [(f.rule_id, f.rendered_path) for f in error.errors] == [
        ("ADP-C002", "nodes[warmup].transitions[0].targetNodeId")
    ]
    assert "q-missing" in str(error)


def test_a_pool_is_a_valid_transition_target(cs201: dict[str, Any]) -> None:
    flow, findings = compile_with_findings(cs201)  # e-q1-pool targets pool-scenario
    assert flow is not None
    assert findings == []


def test_assessment_node_without_an_opening_prompt(cs201: dict[str, Any]) -> None:
    del cs201["nodes"][1]["prompt"]
    error = compile_error(cs201)
    assert [(f.rule_id, f.severity, f.rendered_path) for f in error.findings] == [
        ("ADP-C003", "error", "nodes[q-dijkstra].prompt.opening")
    ]


@pytest.mark.parametrize("index", [0, 4], ids=["warmup", "wrapup"])
def test_scaffolding_node_without_an_opening_is_a_warning(
    cs201: dict[str, Any], index: int
) -> None:
    del cs201["nodes"][index]["prompt"]
    flow = compile_package(cs201)
    node_id = cs201["nodes"][index]["nodeId"]
    assert [(w["ruleId"], w["severity"], w["nodeId"]) for w in flow["compileWarnings"]] == [
        ("ADP-C004", "warning", node_id)
    ]
    content = flow["nodes"][index]["task_messages"][0]["content"]
    assert "OPENING QUESTION:" not in content
    assert "BRIEF:" in content


def test_end_node_without_a_closing_is_a_warning(cs201: dict[str, Any]) -> None:
    del cs201["nodes"][6]["prompt"]
    flow = compile_package(cs201)
    assert [(w["ruleId"], w["path"]) for w in flow["compileWarnings"]] == [
        ("ADP-C004", "nodes[end-timeout].prompt.closing")
    ]
    assert flow["nodes"][6]["pre_actions"] == [{"type": "end_conversation"}]


def test_action_both_allowed_and_forbidden_on_the_node(cs201: dict[str, Any]) -> None:
    cs201["nodes"][1]["allowedActions"].append("reveal_answer")
    error = compile_error(cs201)
    assert [(f.rule_id, f.rendered_path) for f in error.errors] == [
        ("ADP-C005", "nodes[q-dijkstra].allowedActions[3]")
    ]


def test_action_allowed_on_a_node_but_forbidden_globally(cs201: dict[str, Any]) -> None:
    cs201["nodes"][2]["allowedActions"].append("ask_multiple_questions_at_once")
    error = compile_error(cs201)
    assert [(f.rule_id, f.node_id) for f in error.errors] == [("ADP-C005", "scn-delivery-routes")]


def test_every_error_is_reported_at_once(cs201: dict[str, Any]) -> None:
    cs201["nodes"][0]["transitions"][0]["targetNodeId"] = "q-missing"
    del cs201["nodes"][1]["prompt"]
    cs201["nodes"][1]["allowedActions"].append("reveal_rubric")
    error = compile_error(cs201)
    assert sorted(f.rule_id for f in error.errors) == ["ADP-C002", "ADP-C003", "ADP-C005"]
    assert str(error).startswith("cannot compile the package: 3 error(s): ")


def test_a_construct_without_mapping_fails_closed() -> None:
    """ADP-015 / A-7: a schema field the adapter does not know is never dropped silently."""
    import json

    from tests.ioa.compiler.conftest import cs201_path

    document = package_document(json.loads(cs201_path().read_text()))
    document["nodes"][1]["bloomLevel"] = "analyse"
    document["assessmentMode"] = "oral"
    flow, findings = compile_normalised(document)
    assert flow is None
    assert [(f.rule_id, f.rendered_path) for f in findings] == [
        ("ADP-015", "assessmentMode"),
        ("ADP-015", "nodes[q-dijkstra].bloomLevel"),
    ]


def test_compile_errors_are_core_errors(cs201: dict[str, Any]) -> None:
    del cs201["nodes"][1]["prompt"]
    assert isinstance(compile_error(cs201), IoaError)


def test_a_document_that_is_not_a_package_is_refused_by_the_loader(cs201: dict[str, Any]) -> None:
    cs201["nodes"][1]["unknownField"] = 1
    with pytest.raises(PackageLoadError):
        compile_package(cs201)
