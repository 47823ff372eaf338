"""Step 9: how the pipeline finds, runs and reports the adapter."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any

import pytest

from ioa.schema import AssessmentPackage
from ioa.validation import adapter_step
from ioa.validation.adapter_step import ModuleLookup
from tests.ioa.builders import example, findings_of, put, validate


def _fake_compiler(monkeypatch: pytest.MonkeyPatch, compile_package: Any) -> None:
    module = types.ModuleType("ioa.compiler")
    module.compile_package = compile_package  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ioa.compiler", module)


def test_skipped_with_a_reason_when_earlier_steps_failed() -> None:
    report = validate(put(example(), "initialNodeId", "nope"))
    (notice,) = findings_of(report, "VAL-001")
    assert "steps 1-8 found 1 error(s)" in notice.message


def test_skipped_with_a_reason_when_no_compiler_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        adapter_step,
        "find_compiler",
        lambda: (None, ModuleLookup(None, "ioa.compiler is not installed")),
    )
    report = validate(example())
    (notice,) = findings_of(report, "VAL-001")
    assert "ioa.compiler is not installed" in notice.message
    assert report.passed


def test_broken_compiler_rejects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        adapter_step,
        "find_compiler",
        lambda: (None, ModuleLookup(None, "ioa.compiler failed to import: boom", broken=True)),
    )
    report = validate(example())
    assert not report.passed
    assert findings_of(report, "VAL-003")


def test_compiler_receives_the_loaded_package(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []

    def compile_package(package: AssessmentPackage) -> dict[str, str]:
        seen.append(package)
        return {"adapterVersion": "pipecat-adapter/test"}

    _fake_compiler(monkeypatch, compile_package)
    validate(example())
    assert len(seen) == 1
    assert isinstance(seen[0], AssessmentPackage)


def test_compile_exception_rejects(monkeypatch: pytest.MonkeyPatch) -> None:
    def compile_package(package: AssessmentPackage) -> object:
        raise KeyError("no such thing")

    _fake_compiler(monkeypatch, compile_package)
    report = validate(example())
    (failure,) = findings_of(report, "VAL-003")
    assert "KeyError" in failure.message
    assert not report.passed


@dataclass(frozen=True)
class _Finding:
    rule_id: str
    path: tuple[str | int, ...]
    message: str
    node_id: str | None = None


class _CompileError(Exception):
    def __init__(self, findings: list[_Finding]) -> None:
        super().__init__("cannot compile")
        self.findings = tuple(findings)


def test_compile_error_findings_are_reported_under_their_ids(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def compile_package(package: AssessmentPackage) -> object:
        raise _CompileError(
            [_Finding("VAL-003", ("nodes", 1, "prompt"), "no opening", "q-dijkstra")]
        )

    _fake_compiler(monkeypatch, compile_package)
    report = validate(example())
    (finding,) = findings_of(report, "VAL-003")
    assert finding.path == "nodes[q-dijkstra].prompt"
    assert finding.node_id == "q-dijkstra"


def test_compile_error_with_unknown_ids_falls_back_to_val_003(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def compile_package(package: AssessmentPackage) -> object:
        raise _CompileError([_Finding("NOPE-1", ("nodes",), "?")])

    _fake_compiler(monkeypatch, compile_package)
    (failure,) = findings_of(validate(example()), "VAL-003")
    assert "cannot compile" in failure.message


def test_missing_adapter_rules_are_noted(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_compiler(monkeypatch, lambda package: {"adapterVersion": "pipecat-adapter/test"})
    monkeypatch.setattr(
        adapter_step,
        "adapter_rules_lookup",
        lambda: ModuleLookup(None, "ioa.validation.rules.adapter is not installed"),
    )
    report = validate(example())
    (notice,) = findings_of(report, "VAL-001")
    assert "adapter rules were not evaluated" in notice.message
