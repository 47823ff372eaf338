"""Runtime validation before a session starts."""

from __future__ import annotations

from ioa.canonical import checksum
from ioa.validation import validate_for_session
from tests.ioa.builders import NOW, delete, example, findings_of, put

PUBLISHED = checksum(example())


def test_published_package_starts() -> None:
    report = validate_for_session(example(), published_checksum=PUBLISHED, now=NOW)
    assert report.passed, report.to_dict()
    assert set(report.to_dict()) >= {"result", "errors", "warnings", "info", "summary"}


def test_unsupported_version_does_not_start() -> None:
    document = put(example(), "irVersion", "ioa-orm/0.7")
    report = validate_for_session(document, published_checksum=checksum(document), now=NOW)
    (finding,) = findings_of(report, "CMP-002")
    assert "ioa-orm/0.2" in finding.message


def test_legacy_name_starts_with_a_warning() -> None:
    document = put(example(), "irVersion", "exam-runtime-ir/0.1")
    report = validate_for_session(document, published_checksum=checksum(document), now=NOW)
    assert report.passed
    assert findings_of(report, "CMP-003")


def test_altered_package_does_not_start() -> None:
    document = put(example(), "nodes[q-dijkstra].prompt.opening", "Something else?")
    report = validate_for_session(document, published_checksum=PUBLISHED, now=NOW)
    assert not report.passed
    assert findings_of(report, "RUN-001")


def test_unresolvable_references_do_not_start() -> None:
    document = put(example(), "nodes[wrapup].transitions[0].targetNodeId", "gone")
    report = validate_for_session(document, published_checksum=checksum(document), now=NOW)
    assert findings_of(report, "TRN-001")


def test_runtime_validation_skips_publish_only_rules() -> None:
    document = delete(example(), "metadata.author")
    report = validate_for_session(document, published_checksum=checksum(document), now=NOW)
    assert not findings_of(report, "PKG-009")
    assert not findings_of(report, "VAL-001")


def test_garbage_does_not_start() -> None:
    report = validate_for_session("garbage", published_checksum=PUBLISHED, now=NOW)
    assert {"SCH-001", "RUN-001"} <= report.rule_ids()
