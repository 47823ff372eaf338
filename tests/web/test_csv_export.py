"""Every CSV export neutralises spreadsheet formulas (``web.csv_export``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from web.csv_export import FORMULA_TRIGGERS, FORMULA_TRIGGERS_WIDE, safe_cell

ROOT = Path(__file__).resolve().parents[2]
APPS = ("accounts", "authoring", "publishing", "sessions", "marking", "bot", "config")
TRIGGERS = FORMULA_TRIGGERS + FORMULA_TRIGGERS_WIDE
NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@given(st.text())
def test_no_cell_can_start_a_formula(text: str) -> None:
    cell = safe_cell(text)
    assert not cell.startswith(TRIGGERS) or NUMBER.match(cell)
    assert cell.removeprefix("'") == text or cell == text


@pytest.mark.parametrize("number", ["-12.5", "+3", "-0.25e3", "42"])
def test_numbers_are_left_alone(number: str) -> None:
    assert safe_cell(number) == number


@pytest.mark.parametrize(
    "cell", ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\uff1d1"]
)
def test_formulas_become_text(cell: str) -> None:
    assert safe_cell(cell) == "'" + cell


def test_no_module_writes_csv_without_the_guard() -> None:
    """Every CSV export goes through web.csv_export.csv_response."""
    offenders = [
        str(path.relative_to(ROOT))
        for folder in (
            "accounts",
            "authoring",
            "publishing",
            "sessions",
            "marking",
            "bot",
            "lti",
            "webhooks",
            "config",
            "web",
        )
        for path in (ROOT / folder).rglob("*.py")
        if "csv.writer(" in path.read_text(encoding="utf-8")
        or "csv.DictWriter(" in path.read_text(encoding="utf-8")
    ]
    assert offenders == ["web/csv_export.py"]
