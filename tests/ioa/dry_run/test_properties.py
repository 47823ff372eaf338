"""The dry run on packages changed at random: every valid one gives a consistent report."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings

from ioa.dry_run import PERSONAS, dry_run, variant_count
from ioa.schema import load_package
from ioa.validation import validate_package
from tests.ioa.validation.test_properties import mutated_packages


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(mutated_packages())
def test_every_valid_package_gives_a_consistent_report(document: Any) -> None:
    assume(validate_package(document).passed)
    package = load_package(document)
    report = dry_run(package)
    runs = report["runCount"]
    assert runs == len(PERSONAS) * variant_count(package) == len(report["runs"])
    for node in report["nodes"]:
        assert 0 <= node["reached"] <= runs
        assert node["forcedExits"] <= sum(node["exits"].values())
    reached = {n["nodeId"]: n["reached"] for n in report["nodes"]}
    assert report["neverReached"] == [n for n, count in reached.items() if count == 0]
    for target in report["targets"]:
        assert 0 <= target["covered"] <= target["reached"] == reached[target["nodeId"]]
    assert report["neverFired"] == [t["id"] for t in report["transitions"] if t["fired"] == 0]
    for run in report["runs"]:
        finished = run["endReason"] is not None
        assert finished == (run["stuckAt"] is None)
        assert run["path"][0] == package.initialNodeId
    for pool in report["pools"]:
        assert sum(pool["drawn"].values()) <= runs
