"""PKG-001..013: package rules."""

from __future__ import annotations

from typing import Any

import pytest

from ioa.validation.rules.package import external_references, structure_inconsistency
from tests.ioa.builders import add_nodes, delete, example, findings_of, put, question_node, validate
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)


def _with_question_nodes(document: dict[str, Any], count: int) -> None:
    extra = [question_node(f"q-extra-{index}", "wrapup") for index in range(count)]
    add_nodes(document, *extra)


def _declare(document: dict[str, Any], uri: str) -> None:
    put(document, "metadata.externalDependencies", [{"uri": uri, "purpose": "course notes"}])


CASES = [
    Case(
        "PKG-001",
        lambda d: put(d, "initialNodeId", ["warmup", "q-dijkstra"]),
        unchanged,
        path="initialNodeId",
    ),
    Case("PKG-001", lambda d: delete(d, "initialNodeId"), unchanged, label="missing"),
    Case(
        "PKG-002",
        lambda d: put(d, "initialNodeId", "no-such-node"),
        lambda d: put(d, "initialNodeId", "q-dijkstra"),
        path="initialNodeId",
    ),
    Case(
        "PKG-002",
        lambda d: put(d, "initialNodeId", "pool-scenario"),
        lambda d: put(d, "initialNodeId", "scn-delivery-routes"),
        label="pool",
    ),
    Case(
        "PKG-003",
        lambda d: put(d, "initialNodeId", "end-normal"),
        lambda d: put(d, "initialNodeId", "wrapup"),
        path="initialNodeId",
    ),
    Case(
        "PKG-004",
        lambda d: put(d, "irVersion", "ioa-orm/v0.2"),
        lambda d: put(d, "irVersion", "exam-runtime-ir/0.1"),
        path="irVersion",
    ),
    Case("PKG-004", lambda d: delete(d, "irVersion"), unchanged, label="missing"),
    Case("PKG-005", lambda d: put(d, "nodes", []), unchanged, path="nodes"),
    Case("PKG-005", lambda d: put(d, "nodes", {"warmup": {}}), unchanged, label="not-array"),
    Case(
        "PKG-006",
        lambda d: put(d, "nodes[wrapup].nodeId", "warmup"),
        lambda d: put(d, "nodes[wrapup].nodeId", "wrapup-2"),
        path="nodes[4].nodeId",
    ),
    Case(
        "PKG-007",
        lambda d: delete(d, "metadata.createdAt"),
        lambda d: put(d, "metadata.createdAt", "2026-11-01T09:00:00+01:00"),
        path="metadata.createdAt",
    ),
    Case(
        "PKG-007",
        lambda d: put(d, "metadata.createdAt", "1 November 2026"),
        lambda d: put(d, "metadata.createdAt", "2026-11-01T09:00:00.250Z"),
        label="format",
    ),
    Case("PKG-007", lambda d: delete(d, "metadata"), unchanged, path="metadata", label="object"),
    Case(
        "PKG-008",
        lambda d: put(d, "metadata.packageId", "pkg-2026-0506-001"),
        lambda d: put(d, "metadata.packageId", "01ARZ3NDEKTSV4RRFFQ69G5FAV"),
        path="metadata.packageId",
    ),
    Case(
        "PKG-009",
        lambda d: delete(d, "metadata.author"),
        lambda d: put(d, "metadata.author", "Dr. Lee"),
        path="metadata.author",
    ),
    Case(
        "PKG-010",
        lambda d: _with_question_nodes(d, 192),
        lambda d: _with_question_nodes(d, 191),
        path="nodes",
    ),
    Case(
        "PKG-011",
        lambda d: put(
            d,
            "nodes[q-dijkstra].promptSeed",
            "Show the figure at https://example.org/dijkstra.png and ask about it.",
        ),
        lambda d: (
            put(
                d,
                "nodes[q-dijkstra].promptSeed",
                "Show the figure at https://example.org/dijkstra.png and ask about it.",
            ),
            _declare(d, "https://example.org/"),
        ),
        path="nodes[q-dijkstra].promptSeed",
    ),
    Case(
        "PKG-011",
        lambda d: put(d, "nodes[scn-delivery-routes].scenario", "See ../assets/map.svg first."),
        lambda d: put(
            d,
            "nodes[scn-delivery-routes].scenario",
            "Discuss TCP/IP and/or O(n/2) routing with km/h speeds, e.g. 1/2.5 of the time.",
        ),
        path="nodes[scn-delivery-routes].scenario",
        label="path",
    ),
    Case(
        "PKG-012",
        lambda d: put(d, "metadata.structureLevel", "closed"),
        lambda d: (
            put(d, "metadata.structureLevel", "closed"),
            put(d, "metadata.structureJustification", "Probing is part of each question."),
        ),
        path="metadata.structureLevel",
    ),
    Case("PKG-012", lambda d: delete(d, "metadata.structureLevel"), unchanged, label="missing"),
    Case(
        "PKG-012",
        lambda d: put(d, "metadata.structureLevel", "structured"),
        lambda d: put(d, "metadata.structureLevel", "open"),
        label="enum",
    ),
    Case(
        "PKG-013",
        lambda d: put(d, "metadata.language", "fr"),
        lambda d: put(d, "metadata.language", "de-AT"),
        path="metadata.language",
    ),
    Case(
        "PKG-013",
        lambda d: put(d, "metadata.language", "xx"),
        lambda d: put(d, "metadata.language", "es-419"),
        label="unregistered",
    ),
    Case(
        "PKG-014",
        lambda d: put(d, "metadata.extensions", {"voice": {"thinkingPauseSec": 45}}),
        lambda d: put(d, "metadata.extensions", {"voice": {"thinkingPauseSec": 9}}),
        path="metadata.extensions.voice",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://example.org/a?b=1.", ["https://example.org/a?b=1"]),
        ("mail mailto:exams@example.org now", ["mailto:exams@example.org"]),
        ("visit www.example.org", ["www.example.org"]),
        ("load /etc/passwd", ["/etc/passwd"]),
        ("open (./notes/week1.md)", ["./notes/week1.md"]),
        ("read ~/slides", ["~/slides"]),
        ("use C:\\exam\\q1.pdf", ["C:\\exam\\q1.pdf"]),
        ("figure img/graph.png", ["img/graph.png"]),
        ("file:///tmp/x", ["file:///tmp/x"]),
        ("TCP/IP and/or O(n/2), km/h, 1/2.5, V/E ratio", []),
        ("Dijkstra's O((V+E) log V) bound", []),
        ("no slash at all: just prose.", []),
    ],
)
def test_external_reference_detection(text: str, expected: list[str]) -> None:
    assert external_references(text) == expected


@pytest.mark.parametrize(
    ("level", "allowances", "consistent"),
    [
        ("closed", {"a": 0, "b": 1}, True),
        ("closed", {"a": 0, "b": 2}, False),
        ("semi-structured", {"a": 0, "b": 2}, True),
        ("semi-structured", {"a": 0, "b": 0}, False),
        ("open", {"a": 1, "b": 2, "c": 0}, True),
        ("open", {"a": 1, "b": 0}, False),
        ("open", {}, True),
    ],
)
def test_structure_level_consistency(
    level: str, allowances: dict[str, int], consistent: bool
) -> None:
    assert (structure_inconsistency(level, allowances) is None) is consistent


def test_question_nodes_without_follow_up_policy_count_as_zero_follow_ups() -> None:
    document = put(example(), "metadata.structureLevel", "semi-structured")
    for node_id in ("q-dijkstra", "scn-delivery-routes", "scn-network-latency"):
        delete(document, f"nodes[{node_id}].followUpPolicy")
    assert findings_of(validate(document), "PKG-012")


def test_pkg_002_message_names_the_existing_nodes() -> None:
    report = validate(put(example(), "initialNodeId", "no-such-node"))
    (finding,) = findings_of(report, "PKG-002")
    assert "'no-such-node'" in finding.message
    assert "'warmup'" in finding.message


@pytest.mark.parametrize("tag", ["fr", "pt-BR", "zh-Hant-TW", "qaa"])
def test_pkg_013_unsupported_language_is_an_error_naming_the_supported_ones(tag: str) -> None:
    found = findings_of(validate(put(example(), "metadata.language", tag)), "PKG-013")
    assert found and found[0].severity.value == "error"
    assert f"'{tag}'" in found[0].message and "en, de, es" in found[0].message


@pytest.mark.parametrize("tag", ["en", "en-GB", "de", "de-CH", "es", "es-MX", "DE"])
def test_pkg_013_supported_languages_pass(tag: str) -> None:
    assert not findings_of(validate(put(example(), "metadata.language", tag)), "PKG-013")


def test_pkg_013_absent_language_means_english() -> None:
    assert not findings_of(validate(delete(example(), "metadata.language")), "PKG-013")


@pytest.mark.parametrize(
    ("voice", "named"),
    [
        ("slow", "must be an object"),
        ({"thinkingPauseSec": "8"}, "thinkingPauseSec"),
        ({"hesitantPauseSec": 31}, "hesitantPauseSec"),
        ({"hesitantPauseSec": 7, "thinkingPauseSec": 5}, "grow"),
    ],
)
def test_pkg_014_unusable_pause_settings_are_errors_naming_the_setting(
    voice: object, named: str
) -> None:
    document = put(example(), "metadata.extensions", {"voice": voice})
    found = findings_of(validate(document), "PKG-014")
    assert found and found[0].severity.value == "error"
    assert named in found[0].message


def test_pkg_014_usable_pause_settings_pass() -> None:
    voice = {"thinkingPauseSec": 8, "hesitantPauseSec": 3}
    document = put(example(), "metadata.extensions", {"voice": voice})
    assert not findings_of(validate(document), "PKG-014")
    assert not findings_of(validate(example()), "PKG-014")
