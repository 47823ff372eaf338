"""CMP-001..004, CMP-008..010: compatibility rules."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from ioa.schema import AssessmentPackage
from ioa.validation import PublishedPackage, ValidationContext
from ioa.versioning import IrVersion, SupportPolicy
from tests.ioa.builders import example, findings_of, get, put, validate
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

PACKAGE_ID = "0192f3a0-7c1e-7b3a-9d2e-3f4a5b6c7d8e"


def _published(version: str, ir_version: str) -> ValidationContext:
    return ValidationContext(published=(PublishedPackage(PACKAGE_ID, version, ir_version),))


FUTURE_POLICY = SupportPolicy(
    current=IrVersion(0, 4),
    released={
        (0, 1): ("exam-runtime-ir", "ioa-orm"),
        (0, 2): ("ioa-orm",),
        (0, 3): ("ioa-orm",),
        (0, 4): ("ioa-orm",),
    },
)
"""A runtime two releases ahead: 0.1 is end of life, 0.2 still supported."""

CASES = [
    Case(
        "CMP-001",
        unchanged,
        lambda d: put(d, "irVersion", "exam-runtime-ir/0.1"),
        path="irVersion",
        context=_published("1.0.0", "exam-runtime-ir/0.1"),
    ),
    Case(
        "CMP-001",
        unchanged,
        lambda d: put(d, "metadata.version", "1.1.0"),
        context=_published("1.0.0", "exam-runtime-ir/0.1"),
        label="new-version",
    ),
    Case(
        "CMP-002",
        lambda d: put(d, "irVersion", "ioa-orm/0.9"),
        lambda d: put(d, "irVersion", "ioa-orm/0.2"),
        path="irVersion",
    ),
    Case(
        "CMP-002",
        lambda d: put(d, "irVersion", "exam-runtime-ir/0.2"),
        lambda d: put(d, "irVersion", "ioa-orm/0.1"),
        label="wrong-name",
    ),
    Case("CMP-002", lambda d: put(d, "irVersion", "ioa-orm/0.0"), unchanged, label="unreleased"),
    Case(
        "CMP-003",
        lambda d: put(d, "irVersion", "exam-runtime-ir/0.1"),
        unchanged,
        path="irVersion",
    ),
    Case(
        "CMP-004",
        unchanged,
        lambda d: put(d, "irVersion", "ioa-orm/1.0"),
        path="irVersion",
        context=_published("0.9.0", "ioa-orm/1.0"),
    ),
    Case(
        "CMP-008",
        lambda d: (
            get(d, "nodes[warmup]").pop("timeBudget"),
            put(d, "nodes[warmup].timeBudgetMs", 90000),
        ),
        unchanged,
        path="nodes[warmup].timeBudgetMs",
    ),
    Case(
        "CMP-008",
        lambda d: put(
            d,
            "nodes[q-dijkstra].transitions[0].condition",
            {"type": "evidence_sufficient", "requiredEvidence": ["tgt-greedy-choice"]},
        ),
        unchanged,
        path="nodes[q-dijkstra].transitions[0].condition.type",
        label="alias",
    ),
    Case(
        "CMP-009",
        lambda d: put(d, "irVersion", "exam-runtime-ir/0.1"),
        unchanged,
        path="irVersion",
        context=ValidationContext(support_policy=FUTURE_POLICY),
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)


def test_cmp_004_ignores_other_packages() -> None:
    context = ValidationContext(
        published=(PublishedPackage("another-package", "0.9.0", "ioa-orm/1.0"),)
    )
    assert not findings_of(validate(example(), context), "CMP-004")


def test_end_of_life_message_names_the_supported_versions() -> None:
    document = put(example(), "irVersion", "exam-runtime-ir/0.1")
    report = validate(document, ValidationContext(support_policy=FUTURE_POLICY))
    (finding,) = findings_of(report, "CMP-009")
    assert "ioa-orm/0.4, ioa-orm/0.3, ioa-orm/0.2" in finding.message


def _install_compiler(monkeypatch: pytest.MonkeyPatch, result: object) -> None:
    module = types.ModuleType("ioa.compiler")

    def compile_package(package: AssessmentPackage) -> object:
        assert isinstance(package, AssessmentPackage)
        return result

    module.compile_package = compile_package  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ioa.compiler", module)


def test_cmp_010_compiled_flow_without_adapter_version(monkeypatch: pytest.MonkeyPatch) -> None:
    _install_compiler(monkeypatch, {"nodes": []})
    (finding,) = findings_of(validate(example()), "CMP-010")
    assert finding.path == "$compiled.adapterVersion"


@pytest.mark.parametrize(
    "flow",
    [{"adapterVersion": "pipecat-adapter/0.2"}, types.SimpleNamespace(adapterVersion="x/1")],
)
def test_cmp_010_near_miss(monkeypatch: pytest.MonkeyPatch, flow: Any) -> None:
    _install_compiler(monkeypatch, flow)
    assert not findings_of(validate(example()), "CMP-010")


def test_cmp_010_is_silent_when_nothing_was_compiled() -> None:
    document = put(example(), "initialNodeId", "nope")
    assert not findings_of(validate(document), "CMP-010")
