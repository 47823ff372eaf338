"""The adapter-phase rules (ADP-001..016, POL-005/007/008) on real and broken compiled flows.

Every rule gets at least one mutation of the compiled CS201 flow that must make it fail, and a
near miss (a similar change that is legitimate) that must pass. Rules run through the registry,
exactly as the validation pipeline runs them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ioa.compiler import compile_package
from ioa.compiler.task_message import CONSISTENCY_DIRECTIVE
from ioa.schema import check_schema
from ioa.validation.context import DEFAULT_CONTEXT
from ioa.validation.document import PackageDocument
from ioa.validation.findings import Issue, Phase, Stage
from ioa.validation.pipeline import load_rules, validate_package
from ioa.validation.registry import REGISTRY, RuleInput
from tests.ioa.compiler.conftest import cs201_path, example_paths

Flow = dict[str, Any]
Mutation = Callable[[Flow], None]

ADAPTER_RULES = [f"ADP-{n:03d}" for n in range(1, 17)] + ["POL-005", "POL-007", "POL-008"]


@pytest.fixture(scope="module")
def package() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(cs201_path().read_text())
    return document


@pytest.fixture(scope="module")
def flow(package: dict[str, Any]) -> Flow:
    return dict(compile_package(package))


def run_rule(rule_id: str, package: dict[str, Any], flow: object) -> list[Issue]:
    load_rules()
    spec = REGISTRY.get(rule_id)
    assert spec.check is not None, f"{rule_id} is only declared"
    inp = RuleInput(
        doc=PackageDocument(package),
        schema=check_schema(package),
        context=DEFAULT_CONTEXT,
        compiled=flow,
    )
    return list(spec.check(inp))


def node(flow: Flow, name: str) -> dict[str, Any]:
    return next(n for n in flow["nodes"] if n["name"] == name)


def edit_task(name: str, edit: Callable[[str], str]) -> Mutation:
    def mutate(flow: Flow) -> None:
        message = node(flow, name)["task_messages"][0]
        message["content"] = edit(message["content"])

    return mutate


def drop_line(name: str, line: str) -> Mutation:
    def edit(content: str) -> str:
        assert line in content.split("\n"), line
        return "\n".join(x for x in content.split("\n") if x != line)

    return edit_task(name, edit)


def set_path(*path: Any, value: Any) -> Mutation:
    def mutate(flow: Flow) -> None:
        target: Any = flow
        for key in path[:-1]:
            target = node(flow, key) if target is flow and key not in flow else target[key]
        target[path[-1]] = value

    return mutate


def delete_path(*path: Any) -> Mutation:
    def mutate(flow: Flow) -> None:
        target: Any = flow
        for key in path[:-1]:
            target = node(flow, key) if target is flow and key not in flow else target[key]
        del target[path[-1]]

    return mutate


def props(flow: Flow) -> dict[str, Any]:
    properties: dict[str, Any] = flow["functions"]["report_observation"]["properties"]
    return properties


def signal_item(flow: Flow) -> dict[str, Any]:
    item: dict[str, Any] = props(flow)["signals"]["items"]
    return item


def edge(flow: Flow, edge_id: str) -> dict[str, Any]:
    return next(e for e in flow["edges"] if e["id"] == edge_id)


def filter_named(flow: Flow, name: str) -> dict[str, Any]:
    return next(f for f in flow["outputValidationFilters"]["filters"] if f["name"] == name)


def seq(*mutations: Mutation) -> Mutation:
    def mutate(flow: Flow) -> None:
        for mutation in mutations:
            mutation(flow)

    return mutate


def reverse_do_not_block(content: str) -> str:
    lines = content.split("\n")
    start = lines.index("Do NOT:") + 1
    end = lines.index("", start)
    return "\n".join([*lines[:start], *reversed(lines[start:end]), *lines[end:]])


DO_NOT_REVEAL = "- reveal_answer: reveal or hint at the expected answer"
DO_NOT_MULTIPLE = "- ask_multiple_questions_at_once: ask more than one question in a single turn"
MAY_EXAMPLE = "- request_example: ask the candidate for an example"
RUBRIC_LEVEL = "Explains settling, relaxation and why the greedy choice is safe."

BROKEN: dict[str, list[tuple[str, Mutation]]] = {
    "ADP-001": [
        ("duplicate config", lambda f: f["nodes"].append(copy.deepcopy(f["nodes"][1]))),
        ("missing config", lambda f: f["nodes"].pop(3)),
        (
            "stray config",
            lambda f: f["nodes"].append({**copy.deepcopy(f["nodes"][1]), "name": "x"}),
        ),
    ],
    "ADP-002": [
        ("renamed", set_path("q-dijkstra", "name", value="Q-Dijkstra")),
        ("reordered", lambda f: f["nodes"].reverse()),
    ],
    "ADP-003": [
        (
            "extra function",
            lambda f: node(f, "q-dijkstra")["functions"].append("request_transition"),
        ),
        ("not registered", set_path("warmup", "functions", value=[])),
        ("extra schema", lambda f: f["functions"].update(request_transition={})),
        ("end node offers it", set_path("end-normal", "functions", value=["report_observation"])),
    ],
    "ADP-004": [
        ("confidence optional", lambda f: signal_item(f)["required"].remove("confidence")),
        ("excerpt untyped", lambda f: signal_item(f)["properties"]["excerpt"].pop("type")),
        (
            "unbounded confidence",
            lambda f: signal_item(f)["properties"]["confidence"].pop("maximum"),
        ),
        (
            "signalKind incomplete",
            lambda f: signal_item(f)["properties"]["signalKind"]["enum"].pop(),
        ),
        ("signals not an array", lambda f: props(f)["signals"].update(type="object")),
    ],
    "ADP-005": [
        ("alias missing", lambda f: props(f)["commandDetected"]["enum"].remove("thinking_time")),
        (
            "canonical missing",
            lambda f: props(f)["commandDetected"]["enum"].remove("clarification"),
        ),
        ("no field", lambda f: props(f).pop("commandDetected")),
    ],
    "ADP-006": [
        ("action dropped", drop_line("q-dijkstra", DO_NOT_REVEAL)),
        ("block renamed", edit_task("q-dijkstra", lambda c: c.replace("Do NOT:", "Avoid:"))),
    ],
    "ADP-007": [
        ("action dropped", drop_line("q-dijkstra", MAY_EXAMPLE)),
        ("block missing", edit_task("warmup", lambda c: c.replace("You may:", "Options:"))),
    ],
    "ADP-008": [
        ("wrong value", set_path("q-dijkstra", "metadata", "maxFollowUps", value=2)),
        ("missing", delete_path("q-dijkstra", "metadata", "maxFollowUps")),
        ("not an integer", set_path("q-dijkstra", "metadata", "maxFollowUps", value="3")),
        ("no policy means none", set_path("warmup", "metadata", "maxFollowUps", value=1)),
    ],
    "ADP-009": [
        ("wrong value", set_path("q-dijkstra", "metadata", "timeBudgetSec", value=300)),
        ("missing", delete_path("wrapup", "metadata", "timeBudgetSec")),
    ],
    "ADP-010": [
        ("target dropped", lambda f: node(f, "q-dijkstra")["metadata"]["evidenceTargets"].pop()),
        ("target added", lambda f: node(f, "warmup")["metadata"]["evidenceTargets"].append("t")),
    ],
    "ADP-011": [
        ("wrong id", set_path("q-dijkstra", "metadata", "irNodeId", value="q1")),
        ("missing", delete_path("warmup", "metadata", "irNodeId")),
    ],
    "ADP-012": [
        ("unguarded", lambda f: edge(f, "e-q1-pool").update(guard="llm_decides")),
        ("condition changed", lambda f: edge(f, "e-q1-pool-turns")["condition"].update(count=9)),
        ("edge dropped", lambda f: f["edges"].remove(edge(f, "e-scn1-skip"))),
        ("stray edge", lambda f: f["edges"].append({**edge(f, "e-wrap-end"), "id": "extra"})),
        ("wrong target", lambda f: edge(f, "e-warmup-q1").update(target="wrapup")),
    ],
    "ADP-013": [
        ("forwarded elsewhere", lambda f: f["transcriptHooks"].update(forwardTo="llm")),
        ("candidate not forwarded", lambda f: f["transcriptHooks"].update(speakers=["examiner"])),
        ("missing", lambda f: f.pop("transcriptHooks")),
    ],
    "ADP-014": [
        ("empty topic", lambda f: f["dataChannel"].update(topic=" ")),
        ("missing", lambda f: f.pop("dataChannel")),
    ],
    "ADP-015": [
        (
            "prompt seed rewritten",
            lambda f: node(f, "q-dijkstra")["metadata"].update(promptSeed="Ask about Dijkstra."),
        ),
        (
            "transitions dropped",
            set_path("scn-delivery-routes", "metadata", "transitions", value=[]),
        ),
        ("recovery dropped", delete_path("q-dijkstra", "metadata", "recoveryHandlers")),
        ("pools dropped", lambda f: f["runtime"].update(questionPools=[])),
        ("persona dropped", lambda f: f["runtime"].pop("persona")),
        (
            "completion policy changed",
            lambda f: node(f, "q-dijkstra")["metadata"]["completionPolicy"].update(minTurns=1),
        ),
    ],
    "ADP-016": [
        ("rubric_leak missing", lambda f: f["outputValidationFilters"]["filters"].pop(1)),
        ("length disabled", lambda f: filter_named(f, "length").update(enabled=False)),
        ("length too long", lambda f: filter_named(f, "length").update(maxChars=800)),
        (
            "rubric text not checked",
            lambda f: node(f, "q-dijkstra")["metadata"]["outputFilterContext"][
                "rubricLeakTexts"
            ].remove(RUBRIC_LEVEL),
        ),
        (
            "rubric text in prompt",
            edit_task("q-dijkstra", lambda c: c + "\n\nAim: " + RUBRIC_LEVEL),
        ),
    ],
    "POL-005": [
        ("global action dropped on an end node", drop_line("end-normal", DO_NOT_MULTIPLE)),
        ("global action dropped on a question", drop_line("q-dijkstra", DO_NOT_REVEAL)),
        ("no Do NOT block", edit_task("warmup", lambda c: c.replace("Do NOT:", "Avoid:"))),
    ],
    "POL-007": [
        (
            "directive removed",
            edit_task("q-dijkstra", lambda c: c.replace("CONSISTENCY:", "STYLE:")),
        ),
        (
            "directive weakened",
            edit_task(
                "warmup",
                lambda c: c.replace(
                    "same questioning approach for all candidates",
                    "questioning approach that suits each candidate",
                ),
            ),
        ),
    ],
    "POL-008": [
        (
            "directive removed",
            edit_task("q-dijkstra", lambda c: c.replace("ANXIETY AND DISTRESS:", "X:")),
        ),
        (
            "reassurance requested",
            edit_task(
                "scn-delivery-routes", lambda c: c + "\n\nIf nervous, say: you're doing great."
            ),
        ),
        (
            "reassurance on an end node",
            edit_task("end-normal", lambda c: c + "\n\nAdd: well done!"),
        ),
        (
            "anxiety not reportable",
            lambda f: f["functions"]["report_observation"]["required"].remove("anxietyDetected"),
        ),
    ],
}

NEAR_MISSES: dict[str, list[tuple[str, Mutation]]] = {
    "ADP-001": [("configs reordered (ADP-002's business)", lambda f: f["nodes"].reverse())],
    "ADP-002": [
        (
            "irNodeId wrong but name right (ADP-011's business)",
            set_path("q-dijkstra", "metadata", "irNodeId", value="q1"),
        ),
    ],
    "ADP-003": [
        (
            "description reworded",
            lambda f: f["functions"]["report_observation"].update(description="Report."),
        )
    ],
    "ADP-004": [
        (
            "extra optional signal field",
            lambda f: signal_item(f)["properties"].update(note={"type": "string"}),
        ),
        (
            "confidence bounds as integers",
            lambda f: signal_item(f)["properties"]["confidence"].update(minimum=0, maximum=1),
        ),
    ],
    "ADP-005": [("extra value", lambda f: props(f)["commandDetected"]["enum"].append("none"))],
    "ADP-006": [
        (
            "gloss reworded",
            edit_task(
                "q-dijkstra",
                lambda c: c.replace(DO_NOT_REVEAL, "- reveal_answer: never give it away"),
            ),
        ),
        (
            "global-only action missing (POL-005's business)",
            drop_line("q-dijkstra", DO_NOT_MULTIPLE),
        ),
    ],
    "ADP-007": [
        (
            "gloss reworded",
            edit_task(
                "q-dijkstra", lambda c: c.replace(MAY_EXAMPLE, "- request_example: ask for one")
            ),
        ),
        (
            "an action listed twice",
            edit_task(
                "q-dijkstra", lambda c: c.replace(MAY_EXAMPLE, MAY_EXAMPLE + "\n" + MAY_EXAMPLE)
            ),
        ),
    ],
    "ADP-008": [
        (
            "unrelated metadata changed",
            set_path("q-dijkstra", "metadata", "title", value="Dijkstra"),
        )
    ],
    "ADP-009": [
        (
            "same number as a float",
            set_path("q-dijkstra", "metadata", "timeBudgetSec", value=360.0),
        ),
        (
            "verbatim block changed (ADP-015's business)",
            set_path("q-dijkstra", "metadata", "timeBudget", value={"maxDurationSec": 999}),
        ),
    ],
    "ADP-010": [
        (
            "definitions changed (ADP-015's business)",
            lambda f: node(f, "q-dijkstra")["metadata"]["evidenceTargetDefinitions"].pop(),
        ),
    ],
    "ADP-011": [("config renamed (ADP-002's business)", set_path("q-dijkstra", "name", value="Q"))],
    "ADP-012": [
        ("edges listed in another order", lambda f: f["edges"].reverse()),
        ("checkedOn hint changed", lambda f: edge(f, "e-q1-pool").update(checkedOn="every_turn")),
    ],
    "ADP-013": [
        ("proctor also forwarded", lambda f: f["transcriptHooks"]["speakers"].append("proctor"))
    ],
    "ADP-014": [("another topic name", lambda f: f["dataChannel"].update(topic="viva-events"))],
    "ADP-015": [
        (
            "filter context changed",
            set_path(
                "q-dijkstra", "metadata", "outputFilterContext", "scenarioDomain", value="graphs"
            ),
        ),
        (
            "command aliases extended",
            lambda f: f["runtime"]["commandAliases"].update(again="repeat"),
        ),
    ],
    "ADP-016": [
        (
            "leading_question disabled (a SHOULD)",
            lambda f: filter_named(f, "leading_question").update(enabled=False),
        ),
        ("stricter length", lambda f: filter_named(f, "length").update(maxChars=400)),
        ("short label in the prompt", edit_task("q-dijkstra", lambda c: c + "\n\nAbsent")),
    ],
    "POL-005": [
        ("Do NOT lines in another order", edit_task("q-dijkstra", reverse_do_not_block)),
        (
            "an action listed twice",
            edit_task(
                "warmup", lambda c: c.replace(DO_NOT_REVEAL, DO_NOT_REVEAL + "\n" + DO_NOT_REVEAL)
            ),
        ),
    ],
    "POL-007": [
        (
            "directive extended",
            edit_task(
                "warmup",
                lambda c: c.replace(
                    CONSISTENCY_DIRECTIVE,
                    CONSISTENCY_DIRECTIVE + " Give every candidate the same time.",
                ),
            ),
        ),
        (
            "directive in capitals",
            edit_task(
                "q-dijkstra",
                lambda c: c.replace(
                    "Use the same questioning approach for all candidates",
                    "USE THE SAME QUESTIONING APPROACH FOR ALL CANDIDATES",
                ),
            ),
        ),
    ],
    "POL-008": [
        (
            "procedural support mentioned",
            edit_task("q-dijkstra", lambda c: c + "\n\nSay 'Take your time.' if needed."),
        ),
        (
            "correctness named in a prohibition",
            edit_task("warmup", lambda c: c.replace("good, correct", "correct")),
        ),
    ],
}


def test_every_adapter_rule_is_registered_for_step_9() -> None:
    load_rules()
    registered = [s.rule_id for s in REGISTRY.checks(Phase.ADAPTER, Stage.PUBLISH)]
    assert set(ADAPTER_RULES) <= set(registered)
    assert set(BROKEN) == set(NEAR_MISSES) == set(ADAPTER_RULES)
    for rule_id in ("ADP-C001", "ADP-C002", "ADP-C003", "ADP-C005"):
        assert REGISTRY.get(rule_id).is_declared_only  # raised by the compiler (CompileError)
    assert not REGISTRY.get("ADP-C004").is_declared_only  # warnings of a successful compile


@pytest.mark.parametrize("rule_id", ADAPTER_RULES)
def test_the_compiled_examples_satisfy_every_rule(rule_id: str) -> None:
    for path in example_paths():
        package = json.loads(Path(path).read_text())
        assert run_rule(rule_id, package, compile_package(package)) == []


@pytest.mark.parametrize(
    ("rule_id", "case"),
    [(rule_id, case) for rule_id, cases in BROKEN.items() for case, _ in cases],
)
def test_a_broken_flow_fails_the_rule(
    rule_id: str, case: str, package: dict[str, Any], flow: Flow
) -> None:
    mutate = dict(BROKEN[rule_id])[case]
    broken = copy.deepcopy(flow)
    mutate(broken)
    issues = run_rule(rule_id, package, broken)
    assert issues, f"{rule_id} accepted: {case}"
    assert all(isinstance(issue.message, str) and issue.message for issue in issues)


@pytest.mark.parametrize(
    ("rule_id", "case"),
    [(rule_id, case) for rule_id, cases in NEAR_MISSES.items() for case, _ in cases],
)
def test_a_near_miss_passes_the_rule(
    rule_id: str, case: str, package: dict[str, Any], flow: Flow
) -> None:
    mutate = dict(NEAR_MISSES[rule_id])[case]
    changed = copy.deepcopy(flow)
    mutate(changed)
    assert json.dumps(changed, sort_keys=True) != json.dumps(flow, sort_keys=True), "no change"
    assert run_rule(rule_id, package, changed) == []


def test_issues_point_into_the_package(package: dict[str, Any], flow: Flow) -> None:
    broken = copy.deepcopy(flow)
    set_path("q-dijkstra", "metadata", "maxFollowUps", value=2)(broken)
    [issue] = run_rule("ADP-008", package, broken)
    assert issue.path == ("nodes", 1, "followUpPolicy", "maxFollowUps")
    assert issue.node_id == "q-dijkstra"
    assert issue.message == "metadata.maxFollowUps is 2, expected 3"


def test_a_non_object_flow_is_reported_once(package: dict[str, Any]) -> None:
    assert [i.message for i in run_rule("ADP-001", package, ["not", "a", "flow"])] == [
        "the adapter did not produce a compiled flow object"
    ]
    assert run_rule("ADP-002", package, "nothing") == []


def test_the_pipeline_runs_the_adapter_rules_on_the_examples() -> None:
    for path in example_paths():
        report = validate_package(json.loads(Path(path).read_text()))
        assert report.passed, [f.to_dict() for f in report.errors]
        assert not {"VAL-001", "VAL-003"} & report.rule_ids()


def test_compile_warnings_reach_the_validation_report(package: dict[str, Any]) -> None:
    document = copy.deepcopy(package)
    del document["nodes"][0]["prompt"]  # a warm-up without an opening: allowed, but warned
    report = validate_package(document)
    assert report.passed
    assert [(f.rule_id, f.severity.value, f.path) for f in report.warnings] == [
        ("ADP-C004", "warning", "nodes[warmup].prompt.opening")
    ]


def test_compile_warning_rule_near_miss(package: dict[str, Any], flow: Flow) -> None:
    document = copy.deepcopy(package)
    document["nodes"][5]["prompt"]["opening"] = "Before we finish..."  # end nodes need a closing
    assert run_rule("ADP-C004", document, flow) == []
    del document["nodes"][5]["prompt"]["closing"]
    [issue] = run_rule("ADP-C004", document, flow)
    assert issue.path == ("nodes", 5, "prompt", "closing")


def test_compile_errors_reach_the_validation_report_under_their_ids(
    package: dict[str, Any],
) -> None:
    document = copy.deepcopy(package)
    del document["nodes"][1]["prompt"]  # a question without an opening cannot be compiled
    report = validate_package(document)
    assert not report.passed
    assert [(f.rule_id, f.path) for f in report.errors] == [
        ("ADP-C003", "nodes[q-dijkstra].prompt.opening")
    ]
