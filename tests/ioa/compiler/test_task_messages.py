"""The LLM's instructions: one developer message per node, built from the template (§4)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ioa.compiler import compile_package, report_observation_schema
from ioa.compiler.report_observation import COMMAND_DETECTED_VALUES, SIGNAL_KINDS
from ioa.compiler.task_message import (
    ANXIETY_DIRECTIVE,
    CONSISTENCY_DIRECTIVE,
    DO_NOT_HEADER,
    YOU_MAY_HEADER,
    find_block,
)
from ioa.languages import directive_language, language_directive, supported_language
from tests.ioa.compiler.conftest import example_paths


def rubric_texts(package: dict[str, Any]) -> list[str]:
    """Patterns of rubric level text: every level description, every label written as a
    descriptor ("Safe:"), multi-word labels anywhere, and the top level names. (A one-word label
    such as "Safe" or "Limited" is an ordinary word a brief may use.)"""
    texts = [r"\bexcellent\b", r"\bsatisfactory\b"]
    for node in package["nodes"]:
        for target in node.get("evidenceTargets", []):
            for level in target.get("rubricDescriptor", {}).get("levels", {}).values():
                texts += [re.escape(level["description"]), rf"\b{re.escape(level['label'])}\s*:"]
                if " " in level["label"]:
                    texts.append(rf"\b{re.escape(level['label'])}\b")
    return texts


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: p.stem)
def test_no_rubric_level_text_reaches_any_task_message(path: Path) -> None:
    package = json.loads(path.read_text())
    texts = rubric_texts(package)
    flow = compile_package(package)
    prompts = [
        message["content"] for node in flow["nodes"] for message in node["task_messages"]
    ] + [node["role_message"] for node in flow["nodes"]]
    for prompt in prompts:
        for text in texts:
            assert not re.search(f"(?i){text}", prompt), text
    # ...while the rubric_leak filter gets them (runtime metadata, never the prompt).
    leak_texts = [
        t for n in flow["nodes"] for t in n["metadata"]["outputFilterContext"]["rubricLeakTexts"]
    ]
    for node in package["nodes"]:
        for target in node.get("evidenceTargets", []):
            for level in target.get("rubricDescriptor", {}).get("levels", {}).values():
                assert level["description"] in leak_texts


def test_the_shared_example_has_rubric_levels_to_hide(cs201: dict[str, Any]) -> None:
    assert len(rubric_texts(cs201)) == 2 + 4 * 2 + 1  # the test above is not vacuous


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: p.stem)
def test_one_developer_message_and_the_persona_as_role_message(path: Path) -> None:
    package = json.loads(path.read_text())
    flow = compile_package(package)
    for node in flow["nodes"]:
        assert [m["role"] for m in node["task_messages"]] == ["developer"]
        assert node["role_message"].startswith(package["persona"]["roleMessage"])
        language = supported_language(package["metadata"].get("language"))
        if language == "en":
            assert node["role_message"] == package["persona"]["roleMessage"]
        else:
            assert node["role_message"].endswith(language_directive(str(language)))
            assert directive_language(node["role_message"]) == language


def test_question_node_message_has_every_block(cs201_flow: dict[str, Any]) -> None:
    content = cs201_flow["nodes"][1]["task_messages"][0]["content"]
    assert content.startswith("PART: Dijkstra's algorithm\n")
    for header in (
        "BRIEF:",
        "OPENING QUESTION:",
        "EVIDENCE TO LISTEN FOR (use these ids as signalType):",
        "CONSTRAINTS:",
        DO_NOT_HEADER,
        YOU_MAY_HEADER,
        "REPORTING:",
        "CONSISTENCY:",
        "ANXIETY AND DISTRESS:",
    ):
        assert header in content.split("\n"), header
    assert CONSISTENCY_DIRECTIVE in content
    assert ANXIETY_DIRECTIVE in content
    assert (
        "- Follow-up budget: at most 3 follow-up questions (style: probing; at most 90 seconds"
        in content
    )
    assert "report_observation" in content
    for marking_data in ("0.5", "0.3", "knowledge_understanding", "LO2"):  # weight, dimension,
        assert marking_data not in content  # marking criteria: never the examiner's business


def test_global_and_node_forbidden_actions_share_one_do_not_block(cs201: dict[str, Any]) -> None:
    cs201["globalPolicies"]["forbiddenActions"].append("discuss_other_candidates")
    flow = compile_package(cs201)
    for node in flow["nodes"]:
        block = find_block(node["task_messages"][0]["content"], DO_NOT_HEADER)
        assert block is not None
        assert "- discuss_other_candidates: discuss other candidates" in block
    q1 = find_block(flow["nodes"][1]["task_messages"][0]["content"], DO_NOT_HEADER)
    assert q1 is not None
    assert len(q1) == 5


def test_scaffolding_node_without_allowed_actions_still_has_a_you_may_block(
    cs201_flow: dict[str, Any],
) -> None:
    block = find_block(cs201_flow["nodes"][0]["task_messages"][0]["content"], YOU_MAY_HEADER)
    assert block == ["- (no additional actions in this part: ask the opening question and listen)"]
    content = cs201_flow["nodes"][0]["task_messages"][0]["content"]
    assert "- Follow-up budget: no follow-up questions in this part." in content


def test_end_node_message_is_the_closing_and_the_prohibitions(cs201_flow: dict[str, Any]) -> None:
    content = cs201_flow["nodes"][5]["task_messages"][0]["content"]
    assert content.startswith("CLOSING:\nThank you. That concludes the examination.")
    assert find_block(content, DO_NOT_HEADER)
    assert "report_observation" not in content


def test_report_observation_schema() -> None:
    schema = report_observation_schema()
    properties = schema["properties"]
    item = properties["signals"]["items"]
    assert item["required"] == ["signalType", "signalKind", "excerpt", "confidence"]
    assert item["properties"]["signalKind"]["enum"] == list(SIGNAL_KINDS)
    assert len(SIGNAL_KINDS) == 8
    assert item["properties"]["excerpt"]["maxLength"] == 200
    assert (
        item["properties"]["confidence"]["minimum"],
        item["properties"]["confidence"]["maximum"],
    ) == (0.0, 1.0)
    assert (
        item["properties"]["scaffoldingIntensity"]["minimum"],
        item["properties"]["scaffoldingIntensity"]["maximum"],
    ) == (0, 3)
    assert item["properties"]["scaffoldingEffective"]["type"] == "boolean"
    assert properties["commandDetected"]["enum"] == list(COMMAND_DETECTED_VALUES)
    assert set(COMMAND_DETECTED_VALUES) >= {
        "repeat", "clarification", "clarify", "request_rephrase", "rephrase", "slow_down",
        "pause", "thinking_aloud", "thinking_time", "help", "skip", "revise_earlier_answer",
        "revise", "finish",
    }  # fmt: skip
    assert schema["required"] == [
        "signals",
        "answerQuality",
        "needsFollowUp",
        "evidenceSufficient",
        "anxietyDetected",
        "spokenText",
    ]
    for optional in (
        "followUpType",
        "distressDetected",
        "rapportMove",
        "dialogueMove",
        "misconceptions",
    ):
        assert optional in properties
    assert schema is not report_observation_schema()  # callers get their own copy
