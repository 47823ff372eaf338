"""The pipeline: order, robustness, de-duplication, determinism."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from ioa.validation import Issue, Phase, RuleInput, Severity, validate_package
from ioa.validation.findings import PHASE_ORDER
from ioa.validation.registry import REGISTRY, RuleRegistry, RuleSpec
from tests.ioa.builders import example, findings_of, put, validate

EXAMPLES = sorted((Path(__file__).parents[3] / "examples").glob("*.json"))


def test_the_cs201_example_passes_with_no_error() -> None:
    report = validate(example())
    assert report.passed
    assert report.result == "pass"
    assert report.errors == ()
    body = report.to_dict()
    assert body["result"] == "pass"
    assert body["errors"] == []
    assert body["summary"]["nodesValidated"] == 9
    assert body["summary"]["transitionsValidated"] == 11


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_every_committed_example_passes(path: Path) -> None:
    report = validate(json.loads(path.read_text(encoding="utf-8")))
    assert report.passed, report.to_dict()["errors"]


def test_missing_initial_node_yields_pkg_002() -> None:
    report = validate(put(example(), "initialNodeId", "no-such-node"))
    assert report.result == "reject"
    assert "PKG-002" in {finding.rule_id for finding in report.errors}


def test_findings_are_sorted_by_pipeline_step_then_document_position() -> None:
    document = example()
    put(document, "nodes[end-normal].prompt", {})  # node phase, late node
    put(document, "nodes[warmup].promptSeed", "")  # node phase, first node
    put(document, "metadata.packageId", "x")  # package phase
    put(document, "nodes[q-dijkstra].evidenceTargets[0].weight", 2)  # evidence phase
    report = validate(document)
    steps = [finding.phase.step for finding in report.findings]
    assert steps == sorted(steps)
    node_paths = [f.path for f in report.findings if f.rule_id in {"NOD-005", "NOD-E002"}]
    assert node_paths == ["nodes[warmup].promptSeed", "nodes[end-normal].prompt.closing"]


def test_later_phases_still_run_on_a_broken_document() -> None:
    document = example()
    put(document, "nodes[warmup].kind", 7)
    put(document, "nodes[q-dijkstra].evidenceTargets[0].weight", 1.5)
    put(document, "questionPools[0].difficultyCalibration", None)
    ids = validate(document).rule_ids()
    assert {"NOD-002", "EVD-004", "FAIR-003"} <= ids


def test_malformed_nodes_do_not_hide_the_others() -> None:
    document = example()
    document["nodes"].insert(3, ["not", "a", "node"])
    document["nodes"].insert(3, None)
    report = validate(document)
    assert {f.path for f in findings_of(report, "NOD-001")} == {"nodes[3]", "nodes[4]"}
    assert report.to_dict()["summary"]["nodesValidated"] == 11


def test_validated_at_is_utc_with_z() -> None:
    plus_two = timezone(timedelta(hours=2))
    report = validate_package(example(), now=datetime(2026, 5, 6, 4, 0, tzinfo=plus_two))
    assert report.to_dict()["validatedAt"] == "2026-05-06T02:00:00Z"


def test_naive_clock_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        validate_package(example(), now=datetime(2026, 5, 6))


def test_default_clock_is_now() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    report = validate_package(example())
    assert before <= report.validated_at


def test_reports_are_deterministic() -> None:
    document = put(example(), "nodes[q-dijkstra].followUpPolicy.maxFollowUps", -1)
    assert validate(document).to_dict() == validate(document).to_dict()


def test_identical_findings_are_reported_once() -> None:
    document = example()
    document["nodes"].append(dict(document["nodes"][0]))
    report = validate(document)
    keys = [(f.rule_id, f.path, f.message) for f in report.findings]
    assert len(keys) == len(set(keys))


def test_a_rule_that_raises_becomes_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def exploding(inp: RuleInput) -> Iterator[Issue]:
        yield Issue(("nodes",), "first")
        raise RuntimeError("boom")

    spec = REGISTRY.get("PKG-009")
    broken = RuleSpec(
        spec.rule_id, spec.phase, spec.severity, spec.summary, spec.stages, spec.module, exploding
    )
    registry = RuleRegistry()
    for item in REGISTRY:
        registry.add(broken if item.rule_id == "PKG-009" else item)
    monkeypatch.setattr("ioa.validation.execution.REGISTRY", registry)
    report = validate(example())
    (internal,) = findings_of(report, "VAL-002")
    assert internal.severity is Severity.ERROR
    assert internal.phase is Phase.PACKAGE
    assert "PKG-009" in internal.message
    assert "RuntimeError: boom" in internal.message
    assert not findings_of(report, "PKG-009"), "a crashed rule reports nothing half-done"
    assert report.result == "reject"
    assert findings_of(report, "VAL-001"), "the other steps still ran"


def test_pipeline_order_matches_chapter_08() -> None:
    assert [phase.value for phase in PHASE_ORDER[:10]] == [
        "schema",
        "package",
        "node",
        "transition",
        "evidence",
        "policy",
        "fairness",
        "reachability",
        "adapter",
        "compatibility",
    ]
