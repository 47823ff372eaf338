"""The committed rule catalogue equals the one generated from the registry."""

from __future__ import annotations

from pathlib import Path

from ioa.validation import REGISTRY
from ioa.validation.catalogue import (
    CATALOGUE_PATH,
    category_of,
    is_project_rule,
    main,
    render_catalogue,
)
from ioa.validation.pipeline import load_rules


def test_committed_catalogue_is_up_to_date() -> None:
    load_rules()
    assert CATALOGUE_PATH.read_text(encoding="utf-8") == render_catalogue(REGISTRY), (
        "docs/spec/validation-rules.md is stale: run python -m ioa.validation.catalogue"
    )


def test_catalogue_lists_every_rule_once() -> None:
    load_rules()
    text = render_catalogue(REGISTRY)
    for spec in REGISTRY:
        assert text.count(f"| {spec.rule_id} |") == 1, spec.rule_id


def test_runtime_rules_say_who_enforces_them() -> None:
    load_rules()
    text = render_catalogue(REGISTRY)
    row = next(line for line in text.splitlines() if line.startswith("| EVT-004 |"))
    assert "runtime — enforced by" in row


def test_categories_and_project_ids() -> None:
    assert category_of("NOD-Q007") == "NOD-Q"
    assert category_of("PKG-001") == "PKG"
    assert category_of("ADP-C001") == "ADP-C"
    assert is_project_rule("TRN-101")
    assert is_project_rule("SCH-001")
    assert not is_project_rule("TRN-011")


def test_check_mode(tmp_path: Path) -> None:
    target = tmp_path / "rules.md"
    assert main(["--check", "--output", str(target)]) == 1
    assert main(["--output", str(target)]) == 0
    assert main(["--check", "--output", str(target)]) == 0
