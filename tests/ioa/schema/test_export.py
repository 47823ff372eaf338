"""The committed JSON Schema equals the one generated from the models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioa.schema.export import SCHEMA_PATH, build_json_schema, main, render_json_schema
from tests.ioa.builders import example


def test_committed_schema_is_up_to_date() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_json_schema(), (
        "docs/spec/package.schema.json is stale: run python -m ioa.schema.export"
    )


def test_schema_is_fail_closed_except_extensions() -> None:
    schema = build_json_schema()
    assert schema["additionalProperties"] is False
    for name, definition in schema["$defs"].items():
        if definition.get("type") == "object":
            assert definition.get("additionalProperties") is False, name
    extensions = schema["$defs"]["PackageMetadata"]["properties"]["extensions"]
    assert extensions.get("additionalProperties", True) is not False


def test_schema_declares_the_deprecated_spellings() -> None:
    schema = build_json_schema()
    assert schema["$defs"]["EvidenceSufficientCondition"]["deprecated"] is True
    assert schema["$defs"]["Node"]["properties"]["timeBudgetMs"]["deprecated"] is True


def test_check_mode(tmp_path: Path) -> None:
    target = tmp_path / "schema.json"
    assert main(["--check", "--output", str(target)]) == 1
    assert main(["--output", str(target)]) == 0
    assert main(["--check", "--output", str(target)]) == 0
    assert json.loads(target.read_text())["$id"].endswith("package.schema.json")


def test_example_satisfies_the_exported_schema_shape() -> None:
    schema = build_json_schema()
    required = set(schema["required"])
    assert {"irVersion", "metadata", "initialNodeId", "nodes"} <= required


def test_exported_schema_accepts_the_examples_and_rejects_unknown_fields() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(build_json_schema())
    document = example()
    assert not list(validator.iter_errors(document))
    document["nodes"][0]["colour"] = "red"
    assert list(validator.iter_errors(document))
    alias = example()
    alias["nodes"][1]["transitions"][0]["condition"] = {
        "type": "evidence_sufficient",
        "requiredEvidence": ["tgt-greedy-choice"],
    }
    assert not list(validator.iter_errors(alias))
