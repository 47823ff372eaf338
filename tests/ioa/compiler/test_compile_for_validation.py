"""``compile_for_validation`` and the copy-free compile: same output, no shared state."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ioa.canonical import checksum
from ioa.compiler import (
    CompileError,
    compile_for_validation,
    compile_normalised,
    compile_package,
    compile_with_findings,
    package_document,
    serialise_compiled_flow,
)
from ioa.compiler.compiler import json_copy
from ioa.schema import load_package
from tests.ioa.compiler.conftest import example_paths


@pytest.mark.parametrize("path", example_paths(), ids=lambda path: Path(path).stem)
def test_same_flow_document_and_findings_as_compile_package(path: Path) -> None:
    document = json.loads(Path(path).read_text())
    flow, normalised, findings = compile_for_validation(document)
    assert serialise_compiled_flow(flow) == serialise_compiled_flow(compile_package(document))
    assert normalised == package_document(document)
    _flow, expected_findings = compile_with_findings(document)
    assert list(findings) == expected_findings
    assert flow["packageChecksum"] == checksum(normalised)


def test_warnings_are_returned(cs201: dict[str, Any]) -> None:
    del cs201["nodes"][0]["prompt"]["opening"]
    result = compile_for_validation(cs201)
    assert [finding.rule_id for finding in result.findings] == ["ADP-C004"]
    assert [w["ruleId"] for w in result.flow["compileWarnings"]] == ["ADP-C004"]


def test_raises_like_compile_package(cs201: dict[str, Any]) -> None:
    cs201["nodes"][1]["allowedActions"] = ["reveal_answer"]
    with pytest.raises(CompileError) as expected:
        compile_package(copy.deepcopy(cs201))
    with pytest.raises(CompileError) as raised:
        compile_for_validation(cs201)
    assert raised.value.findings == expected.value.findings
    assert str(raised.value) == str(expected.value)


def _ids_of_containers(value: object) -> list[int]:
    found: list[int] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(id(item))
            stack.extend(item.values())
        elif isinstance(item, list):
            found.append(id(item))
            stack.extend(item)
    return found


def test_a_flow_never_shares_a_container_with_itself(cs201: dict[str, Any]) -> None:
    """Tests and the runtime edit flows in place: no edit may show up in two places."""
    for flow in (compile_package(cs201), compile_for_validation(cs201).flow):
        ids = _ids_of_containers(flow)
        assert len(ids) == len(set(ids))


def test_compile_normalised_never_shares_with_its_input(cs201: dict[str, Any]) -> None:
    document = package_document(cs201)
    pristine = copy.deepcopy(document)
    flow, _findings = compile_normalised(document)
    assert flow is not None
    assert not set(_ids_of_containers(flow)) & set(_ids_of_containers(document))
    flow["nodes"][1]["metadata"]["transitions"][0]["condition"]["type"] = "edited"
    flow["runtime"]["persona"]["name"] = "edited"
    assert document == pristine


def test_the_owned_checksum_is_the_canonical_one() -> None:
    for path in example_paths():
        model = load_package(json.loads(Path(path).read_text()))
        document = package_document(model)
        assert compile_for_validation(model).flow["packageChecksum"] == checksum(document)


def test_json_copy_is_a_deep_copy() -> None:
    value: dict[str, Any] = {"a": [1, 2.5, {"b": None, "c": True}], "d": "é", "e": -0.0}
    copied = json_copy(value)
    assert copied == value
    assert copied is not value
    assert copied["a"] is not value["a"]
    assert copied["a"][2] is not value["a"][2]
    assert list(copied) == list(value)


def test_json_copy_falls_back_to_deepcopy() -> None:
    class Tag(str):
        pass

    value = {"tag": Tag("x"), "items": [Tag("y")]}
    copied = json_copy(value)
    assert copied == value
    assert type(copied["tag"]) is Tag
    assert copied["items"] is not value["items"]
