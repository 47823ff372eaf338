"""Property tests: any JSON value, and any mutation of the example, gives a well-formed report;
no built-in rule ever raises."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioa.schema import check_schema, load_package
from ioa.validation import REGISTRY, ValidationReport, validate_package
from ioa.validation.context import DEFAULT_CONTEXT
from ioa.validation.document import PackageDocument
from ioa.validation.pipeline import load_rules
from ioa.validation.registry import RuleInput
from ioa.validation.rules import BUILT_IN_MODULES
from tests.ioa.builders import NOW, example

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

PACKAGE_KEYS = [
    "irVersion",
    "metadata",
    "packageId",
    "title",
    "createdAt",
    "structureLevel",
    "nodes",
    "initialNodeId",
    "questionPools",
    "poolId",
    "nodeIds",
    "nodeId",
    "kind",
    "promptSeed",
    "prompt",
    "closing",
    "opening",
    "endType",
    "evidenceTargets",
    "id",
    "label",
    "weight",
    "followUpPolicy",
    "maxFollowUps",
    "maxFollowUpDurationSec",
    "followUpStyle",
    "timeBudget",
    "maxDurationSec",
    "timeBudgetMs",
    "transitions",
    "targetNodeId",
    "condition",
    "type",
    "targetIds",
    "requiredEvidence",
    "count",
    "seconds",
    "command",
    "escalation",
    "candidateCommands",
    "allowed",
    "forbidden",
    "recoveryHandlers",
    "scenario",
    "action",
    "forbiddenActions",
    "allowedActions",
    "globalPolicies",
    "completionPolicy",
    "requiredEvidenceTargetIds",
    "rubricDescriptor",
    "levels",
    "markingCriteria",
    "externalDependencies",
    "uri",
    "extensions",
    "difficultyCalibration",
]
PACKAGE_WORDS = [
    "end",
    "question",
    "scenario",
    "always",
    "evidence_satisfied",
    "evidence_sufficient",
    "time_elapsed",
    "turn_count_reached",
    "normal",
    "timeout",
    "silence",
    "stt_low_confidence",
    "warmup",
    "q-dijkstra",
    "pool-scenario",
    "ioa-orm/0.2",
    "exam-runtime-ir/0.1",
    "closed",
    "open",
    "pause",
    "repeat",
    "skip",
    "retry",
    "https://x.org/a.png",
    "Excellent: yes",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(PACKAGE_WORDS)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(PACKAGE_KEYS) | st.text(max_size=6), children, max_size=6)
    ),
    max_leaves=40,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _parent(document: Any, path: tuple[Any, ...]) -> Any:
    for segment in path[:-1]:
        document = document[segment]
    return document


@st.composite
def mutated_packages(draw: st.DrawFn) -> Any:
    document: Any = example()
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = [path for path in _paths(document) if path]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(document, path)
        operation = draw(st.sampled_from(["delete", "replace", "swap", "duplicate", "rename"]))
        current = parent[path[-1]]
        if operation == "delete":
            del parent[path[-1]]
        elif operation == "replace":
            parent[path[-1]] = draw(json_values)
        elif operation == "swap":
            swaps: dict[type, Any] = {
                str: 7,
                int: "7",
                float: None,
                bool: "true",
                list: {},
                dict: [],
            }
            parent[path[-1]] = swaps.get(type(current), "x")
        elif operation == "duplicate" and isinstance(parent, list):
            parent.append(json.loads(json.dumps(current)))
        else:
            parent[path[-1]] = draw(st.sampled_from(PACKAGE_WORDS))
    return document


BUILT_IN = {module.__name__ for module in BUILT_IN_MODULES}
FINDING_KEYS = {"ruleId", "severity", "nodeId", "message", "path"}


def assert_well_formed(document: object, report: ValidationReport) -> None:
    body = report.to_dict()
    json.dumps(body)  # serialisable
    assert list(body) == [
        "packageId",
        "irVersion",
        "validatedAt",
        "result",
        "errors",
        "warnings",
        "info",
        "summary",
    ]
    assert body["validatedAt"] == "2026-11-02T10:30:00Z"
    assert body["result"] == ("pass" if not body["errors"] else "reject")
    summary = body["summary"]
    assert summary["errors"] == len(body["errors"])
    assert summary["warnings"] == len(body["warnings"])
    assert summary["info"] == len(body["info"])
    assert isinstance(summary["nodesValidated"], int)
    assert isinstance(summary["transitionsValidated"], int)
    for bucket, severity in (("errors", "error"), ("warnings", "warning"), ("info", "info")):
        for finding in body[bucket]:
            assert set(finding) == FINDING_KEYS
            assert finding["severity"] == severity
            assert finding["ruleId"] in REGISTRY
            assert REGISTRY.get(finding["ruleId"]).severity.value == severity
            assert isinstance(finding["message"], str)
            assert finding["message"]
            assert isinstance(finding["path"], str)
            assert finding["path"]
            assert finding["nodeId"] is None or isinstance(finding["nodeId"], str)
    keys = [finding.sort_key for finding in report.findings]
    assert keys == sorted(keys)
    for finding in report.findings:
        if finding.rule_id == "VAL-002":
            assert not any(module in finding.message for module in BUILT_IN), finding.message
    if report.passed:
        load_package(document)  # a passing package always loads


def assert_no_built_in_rule_raises(document: object) -> None:
    load_rules()
    inp = RuleInput(PackageDocument(document), check_schema(document), DEFAULT_CONTEXT)
    for spec in REGISTRY:
        if spec.check is not None and spec.module in BUILT_IN:
            list(spec.check(inp))  # raises -> test failure naming the input


@SETTINGS
@given(json_values)
def test_any_json_value_gets_a_full_report(document: Any) -> None:
    report = validate_package(document, now=NOW)
    assert_well_formed(document, report)
    assert_no_built_in_rule_raises(document)


@SETTINGS
@given(mutated_packages())
def test_any_mutation_of_the_example_gets_a_full_report(document: Any) -> None:
    report = validate_package(document, now=NOW)
    assert_well_formed(document, report)
    assert_no_built_in_rule_raises(document)
    assert report.to_dict() == validate_package(document, now=NOW).to_dict()


@SETTINGS
@given(st.dictionaries(st.sampled_from(PACKAGE_KEYS), json_values, max_size=8))
def test_package_shaped_objects_get_a_full_report(document: Any) -> None:
    report = validate_package(document, now=NOW)
    assert_well_formed(document, report)
    assert_no_built_in_rule_raises(document)
