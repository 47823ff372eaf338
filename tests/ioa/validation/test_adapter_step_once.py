"""Step 9 does its work once per validation: one dump, one compile, one shared view.

The adapter step compiles with ``ioa.compiler.compile_for_validation`` and hands the normalised
document and the compile findings to the ADP rules (``RuleInput.compiled_from`` /
``compile_findings``); the rules share one :class:`FlowView` per validation
(``RuleInput.memo``). These tests pin that down, and that nothing is shared between
validations, packages or threads.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest

import ioa.compiler
from ioa.compiler import compile_package
from ioa.compiler import compiler as compiler_module
from ioa.schema import AssessmentPackage, check_schema
from ioa.validation import adapter_step
from ioa.validation.context import DEFAULT_CONTEXT
from ioa.validation.document import PackageDocument
from ioa.validation.registry import RuleInput
from ioa.validation.report import ValidationReport
from ioa.validation.rules import adapter as adapter_rules
from tests.ioa.builders import delete, example, findings_of, validate


def _counting(monkeypatch: pytest.MonkeyPatch, target: object, name: str) -> list[object]:
    """Replace ``target.name`` with a wrapper that records its first argument."""
    calls: list[object] = []
    original: Callable[..., Any] = getattr(target, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0] if args else None)
        return original(*args, **kwargs)

    monkeypatch.setattr(target, name, wrapper)
    return calls


def _without_opening() -> dict[str, Any]:
    """A valid package whose warm-up has no opening (an ADP-C004 compile warning)."""
    document: dict[str, Any] = delete(example(), "nodes[warmup].prompt.opening")
    return document


def _reports_equal(first: ValidationReport, second: ValidationReport) -> bool:
    return first.to_dict() == second.to_dict()


def test_one_dump_and_one_compile_per_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    compiles = _counting(monkeypatch, compiler_module, "_compile")
    dumps = _counting(monkeypatch, compiler_module, "package_document")
    rule_dumps = _counting(monkeypatch, adapter_rules, "package_document")
    recompiles = _counting(monkeypatch, adapter_rules, "compile_normalised")

    report = validate(_without_opening())

    assert report.passed
    assert findings_of(report, "ADP-C004")  # the warning came from the single compile
    assert len(compiles) == 1
    assert len(dumps) == 1
    assert rule_dumps == []
    assert recompiles == []


def test_the_rules_share_one_view(monkeypatch: pytest.MonkeyPatch) -> None:
    views = _counting(monkeypatch, adapter_rules, "FlowView")
    validate(example())
    validate(example())
    assert len(views) == 2  # one per validation, not one per rule


def _compiler_without_validation_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """An ``ioa.compiler`` offering only ``compile_package`` (the real one)."""
    module = types.ModuleType("ioa.compiler")
    module.compile_package = compile_package  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ioa.compiler", module)


@pytest.mark.parametrize("make", [example, _without_opening])
def test_the_fallback_path_gives_the_same_report(
    monkeypatch: pytest.MonkeyPatch, make: Callable[[], dict[str, Any]]
) -> None:
    single = validate(make())
    _compiler_without_validation_entry(monkeypatch)
    recompiles = _counting(monkeypatch, adapter_rules, "compile_normalised")
    fallback = validate(make())
    assert len(recompiles) == 1  # ADP-C004 compiled again: the warnings were not handed over
    assert _reports_equal(single, fallback)


def test_a_replaced_compile_package_is_the_one_called(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []

    def compile_spy(package: AssessmentPackage) -> object:
        seen.append(package)
        return compile_package(package)

    monkeypatch.setattr(ioa.compiler, "compile_package", compile_spy)
    assert validate(example()).passed
    assert len(seen) == 1


def test_unusable_compile_findings_fall_back_to_a_recompile() -> None:
    assert adapter_step.compile_issues("not findings") is None
    assert adapter_step.compile_issues([object()]) is None
    assert adapter_step.compile_issues(()) == ()


def test_validations_do_not_share_views_or_warnings() -> None:
    warned = validate(_without_opening())
    clean = validate(example())
    again = validate(_without_opening())
    assert findings_of(warned, "ADP-C004")
    assert not findings_of(clean, "ADP-C004")
    assert _reports_equal(warned, again)


def test_replace_starts_an_empty_memo() -> None:
    document = example()
    inp = RuleInput(PackageDocument(document), check_schema(document), DEFAULT_CONTEXT)
    assert inp.memo("key", lambda: [1]) == [1]
    assert inp.memo("key", lambda: [2]) == [1]
    other = replace(inp, compiled={"nodes": []})
    assert other.memo("key", lambda: [3]) == [3]
    assert inp.memo("key", lambda: [4]) == [1]


def test_the_view_belongs_to_its_input() -> None:
    """Two inputs with different flows (or packages) never see each other's view."""
    document = example()
    package = check_schema(document).package
    assert package is not None
    flow: dict[str, Any] = dict(compile_package(package))
    renamed = {**flow, "nodes": [{**flow["nodes"][0], "name": "renamed"}, *flow["nodes"][1:]]}
    inp = RuleInput(PackageDocument(document), check_schema(document), DEFAULT_CONTEXT, flow)
    first = adapter_rules.flow_view(inp, package, flow)
    assert adapter_rules.flow_view(inp, package, flow) is first
    other_input = replace(inp, compiled=renamed)
    second = adapter_rules.flow_view(other_input, package, renamed)
    assert second is not first
    assert second.flow is renamed
    assert second.compiled_nodes[0].get("name") == "renamed"


def test_concurrent_validations_match_sequential_ones() -> None:
    documents = [example(), _without_opening(), delete(example(), "nodes[wrapup].prompt.opening")]
    texts = [json.dumps(document) for document in documents]
    expected = [validate(json.loads(text)).to_dict() for text in texts]

    def run(index: int) -> bool:
        return (
            validate(json.loads(texts[index % len(texts)])).to_dict()
            == expected[index % len(texts)]
        )

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(run, range(24)))
