"""SCH-001..003: schema conformance."""

from __future__ import annotations

from tests.ioa.builders import delete, example, findings_of, put, validate
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    replace_with,
    unchanged,
)

CASES = [
    Case("SCH-001", lambda d: replace_with([d]), unchanged, path="$"),
    Case("SCH-001", lambda d: replace_with(None), unchanged, label="null"),
    Case(
        "SCH-002",
        lambda d: put(d, "nodes[wrapup].contextPolicy.strategy", "forget_everything"),
        lambda d: put(d, "nodes[wrapup].contextPolicy.strategy", "append"),
        path="nodes[wrapup].contextPolicy.strategy",
    ),
    Case(
        "SCH-002",
        lambda d: put(d, "persona.roleMessage", 42),
        lambda d: put(d, "persona.roleMessage", "You are a calm examiner."),
        path="persona.roleMessage",
        label="type",
    ),
    Case(
        "SCH-003",
        lambda d: put(d, "nodes[warmup].colour", "red"),
        lambda d: put(d, "metadata.extensions", {"colour": "red", "studio": {"x": [1]}}),
        path="nodes[warmup].colour",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


def test_specific_rule_replaces_the_schema_finding_at_the_same_path() -> None:
    document = put(example(), "nodes[q-dijkstra].followUpPolicy.maxFollowUps", -1)
    report = validate(document)
    paths = {finding.path for finding in findings_of(report, "SCH-002")}
    assert "nodes[q-dijkstra].followUpPolicy.maxFollowUps" not in paths
    assert findings_of(report, "NOD-Q007")


def test_missing_required_field_is_reported_once_under_the_specific_rule() -> None:
    report = validate(delete(example(), "metadata.title"))
    assert [f.path for f in findings_of(report, "PKG-007")] == ["metadata.title"]
    assert not findings_of(report, "SCH-002")


def test_schema_errors_without_a_specific_rule_keep_their_path_and_explain_the_fix() -> None:
    report = validate(put(example(), "metadata.version", 42))
    (finding,) = findings_of(report, "SCH-002")
    assert finding.path == "metadata.version"
    assert "version" in finding.message
    assert "42" in finding.message


def test_malformed_language_is_reported_once_under_its_specific_rule() -> None:
    report = validate(put(example(), "metadata.language", "English!"))
    assert not findings_of(report, "SCH-002")
    (finding,) = findings_of(report, "PKG-013")
    assert finding.path == "metadata.language" and "'English!'" in finding.message


def test_non_object_document_gets_only_the_document_finding() -> None:
    report = validate("not a package")
    assert [f.rule_id for f in report.errors] == ["SCH-001"]
    assert "got 'not a package'" in report.errors[0].message
