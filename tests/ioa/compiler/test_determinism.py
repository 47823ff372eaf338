"""A-4: the same package always compiles to the same bytes (and the bytes are JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioa.compiler import ADAPTER_VERSION, compile_package, serialise_compiled_flow
from ioa.schema import load_package
from tests.ioa.compiler.conftest import example_paths


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: p.stem)
def test_compiling_twice_gives_identical_bytes(path: Path) -> None:
    first = serialise_compiled_flow(compile_package(json.loads(path.read_text())))
    second = serialise_compiled_flow(compile_package(json.loads(path.read_text())))
    assert first == second
    assert first.encode() == second.encode()


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: p.stem)
def test_the_loaded_model_and_the_dict_compile_to_the_same_bytes(path: Path) -> None:
    document = json.loads(path.read_text())
    from_dict = serialise_compiled_flow(compile_package(document))
    from_model = serialise_compiled_flow(compile_package(load_package(document)))
    assert from_dict == from_model


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: p.stem)
def test_key_order_of_the_source_does_not_change_the_output(path: Path) -> None:
    document = json.loads(path.read_text())
    reordered = json.loads(json.dumps(document, sort_keys=True))
    reordered["nodes"] = [dict(reversed(list(node.items()))) for node in reordered["nodes"]]
    assert serialise_compiled_flow(compile_package(document)) == serialise_compiled_flow(
        compile_package(reordered)
    )


def test_serialisation_is_sorted_indented_json_without_trailing_newline(
    cs201_flow: dict[str, object],
) -> None:
    text = serialise_compiled_flow(cs201_flow)  # type: ignore[arg-type]
    assert json.loads(text) == cs201_flow
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2, ensure_ascii=False)
    assert not text.endswith("\n")


def test_flow_records_versions_and_checksum(cs201_flow: dict[str, object]) -> None:
    assert cs201_flow["adapterVersion"] == ADAPTER_VERSION == "pipecat-adapter/0.2"
    assert cs201_flow["irVersion"] == "ioa-orm/0.2"
    assert str(cs201_flow["packageChecksum"]).startswith("sha256:")
    assert cs201_flow["initialNode"] == "warmup"


def test_a_changed_package_changes_the_checksum(cs201: dict[str, object]) -> None:
    before = compile_package(cs201)["packageChecksum"]
    cs201["nodes"][1]["prompt"]["opening"] += " Take your time."  # type: ignore[index]
    assert compile_package(cs201)["packageChecksum"] != before
