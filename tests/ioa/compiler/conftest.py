"""Fixtures of the adapter compiler tests: the example packages and their compiled flows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ioa.compiler import CompiledFlow, compile_package

ROOT = Path(__file__).resolve().parents[3]
SHARED_EXAMPLE = ROOT.parent / "shared" / "examples" / "cs201-graph-algorithms.json"


def example_paths() -> list[Path]:
    """Every package in examples/ (the shared example when the directory is empty)."""
    paths = sorted((ROOT / "examples").glob("*.json"))
    return paths or [SHARED_EXAMPLE]


def cs201_path() -> Path:
    local = ROOT / "examples" / "cs201-graph-algorithms.json"
    return local if local.exists() else SHARED_EXAMPLE


@pytest.fixture
def cs201() -> dict[str, Any]:
    """The CS201 package as a fresh JSON dict (tests may mutate it)."""
    document: dict[str, Any] = json.loads(cs201_path().read_text(encoding="utf-8"))
    return document


@pytest.fixture
def cs201_flow(cs201: dict[str, Any]) -> CompiledFlow:
    """The compiled CS201 flow (fresh for every test, so tests may mutate it)."""
    return compile_package(cs201)
