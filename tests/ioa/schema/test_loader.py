"""ioa.schema.loader: load_package errors and paths, check_schema."""

from __future__ import annotations

import logging

import pytest

from ioa.errors import IoaError, PackageLoadError
from ioa.schema import check_schema, load_package
from ioa.schema.paths import path_from_schema_location, render_path, usable_node_labels
from tests.ioa.builders import delete, example, put


def test_load_error_lists_problems_with_report_paths() -> None:
    document = put(example(), "nodes[q-dijkstra].followUpPolicy.maxFollowUps", -1)
    with pytest.raises(PackageLoadError) as raised:
        load_package(document)
    assert isinstance(raised.value, IoaError)
    paths = [path for path, _ in raised.value.problems]
    assert paths == ["nodes[q-dijkstra].followUpPolicy.maxFollowUps"]
    assert "greater than or equal to 0" in str(raised.value)


@pytest.mark.parametrize("document", [None, [], "x", 1, {"nodes": "no"}])
def test_load_rejects_non_packages(document: object) -> None:
    with pytest.raises(PackageLoadError):
        load_package(document)


def test_check_schema_never_raises_and_returns_the_package_when_valid() -> None:
    assert check_schema(example()).package is not None
    result = check_schema(delete(example(), "nodes[warmup].kind"))
    assert result.package is None
    assert [(problem.path, problem.error_type) for problem in result.problems] == [
        (("nodes", 0, "kind"), "missing")
    ]


def test_condition_union_tags_are_not_part_of_the_path() -> None:
    document = put(
        example(), "nodes[q-dijkstra].transitions[1].condition", {"type": "turn_count_reached"}
    )
    (problem,) = check_schema(document).problems
    assert problem.path == ("nodes", 1, "transitions", 1, "condition", "count")


def test_alias_errors_point_at_the_written_field() -> None:
    document = put(
        example(),
        "nodes[q-dijkstra].transitions[0].condition",
        {"type": "evidence_sufficient", "requiredEvidence": "tgt-greedy-choice"},
    )
    (problem,) = check_schema(document).problems
    assert problem.path == ("nodes", 1, "transitions", 0, "condition", "requiredEvidence")


def test_unknown_condition_type_points_at_type() -> None:
    document = put(example(), "nodes[q-dijkstra].transitions[2].condition.type", "sometimes")
    (problem,) = check_schema(document).problems
    assert problem.path[-1] == "type"
    assert "'sometimes'" in problem.message


def test_deprecated_fields_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    document = delete(example(), "nodes[warmup].timeBudget")
    put(document, "nodes[warmup].timeBudgetMs", 90000)
    with caplog.at_level(logging.WARNING, logger="ioa.schema.loader"):
        load_package(document)
    assert "nodes[warmup].timeBudgetMs" in caplog.text


def test_paths_address_nodes_by_usable_id() -> None:
    document = example()
    document["nodes"][2]["nodeId"] = "warmup"  # duplicate: not usable
    document["nodes"][3]["nodeId"] = "42"  # all digits: not usable
    labels = usable_node_labels(document)
    assert labels[1] == "q-dijkstra"
    assert 0 not in labels
    assert 2 not in labels
    assert 3 not in labels
    assert render_path(("nodes", 1, "followUpPolicy"), labels) == "nodes[q-dijkstra].followUpPolicy"
    assert render_path(("nodes", 3, "kind"), labels) == "nodes[3].kind"
    assert render_path((), labels) == "$"
    assert render_path(("metadata", "extensions", "my key"), labels) == (
        'metadata.extensions["my key"]'
    )
    assert render_path(("$compiled", "adapterVersion"), labels) == "$compiled.adapterVersion"


def test_location_mapping_tolerates_odd_locations() -> None:
    assert path_from_schema_location(("a", 1, "b"), None) == ("a", 1, "b")
    assert path_from_schema_location(("metadata", "extensions", 1, "[key]"), {"metadata": {}}) == (
        "metadata",
        "extensions",
        1,
    )
