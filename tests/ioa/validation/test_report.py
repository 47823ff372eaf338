"""The report format of chapter 08."""

from __future__ import annotations

from ioa.validation import Severity
from tests.ioa.builders import delete, example, put, validate

FINDING_KEYS = {"ruleId", "severity", "nodeId", "message", "path"}


def test_report_keys_and_summary() -> None:
    document = put(example(), "nodes[q-dijkstra].followUpPolicy.maxFollowUps", -1)
    body = validate(document).to_dict()
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
    assert body["packageId"] == "0192f3a0-7c1e-7b3a-9d2e-3f4a5b6c7d8e"
    assert body["irVersion"] == "ioa-orm/0.2"
    assert body["result"] == "reject"
    assert body["summary"] == {
        "errors": len(body["errors"]),
        "warnings": len(body["warnings"]),
        "info": len(body["info"]),
        "nodesValidated": 9,
        "transitionsValidated": 11,
    }
    for bucket, severity in (("errors", "error"), ("warnings", "warning"), ("info", "info")):
        for finding in body[bucket]:
            assert set(finding) == FINDING_KEYS
            assert finding["severity"] == severity


def test_chapter_08_example_finding() -> None:
    document = put(example(), "nodes[q-dijkstra].followUpPolicy.maxFollowUps", -1)
    finding = next(f for f in validate(document).to_dict()["errors"] if f["ruleId"] == "NOD-Q007")
    assert finding["nodeId"] == "q-dijkstra"
    assert finding["path"] == "nodes[q-dijkstra].followUpPolicy.maxFollowUps"
    assert finding["message"].startswith("followUpPolicy.maxFollowUps must be >= 0, got -1")


def test_unknown_package_id_and_version_are_null() -> None:
    body = validate([1, 2]).to_dict()
    assert body["packageId"] is None
    assert body["irVersion"] is None
    assert body["summary"]["nodesValidated"] == 0


def test_report_accessors() -> None:
    report = validate(delete(example(), "metadata.author"))
    assert report.passed
    assert all(f.severity is Severity.WARNING for f in report.warnings)
    assert "PKG-009" in report.rule_ids()
