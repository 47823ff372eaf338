"""``Any`` outside the domain core only goes down (issue #36).

``ioa/`` is strict mypy with no ``Any`` of its own; the apps still use some, where Django,
Channels or DRF hand over untyped values. This counts every use (an ``Any`` name or
``typing.Any`` attribute in the syntax tree, annotations included; migrations left out) and
fails when it grows above :data:`BASELINE`, naming the apps; when it falls below, the test asks
for the baseline to be lowered to the new count, so a removed ``Any`` cannot come back unseen.
"""

from __future__ import annotations

import ast

from tests.support.product_code import APPS, source_files

BASELINE = 140
"""The count on 2026-12-06 (after ``user: object`` became ``accounts.models.Requester``)."""


def any_uses(source: str) -> int:
    """How many times ``Any`` is used in ``source`` (imports are not uses)."""
    return sum(
        1
        for node in ast.walk(ast.parse(source))
        if (isinstance(node, ast.Name) and node.id == "Any")
        or (isinstance(node, ast.Attribute) and node.attr == "Any")
    )


def count_by_app() -> dict[str, int]:
    counts = {}
    for app in APPS:
        counts[app] = sum(any_uses(p.read_text(encoding="utf-8")) for p in source_files(app))
    return counts


def test_the_counter_counts_uses_not_imports() -> None:
    source = (
        "from typing import Any\nimport typing\nx: Any = 1\n"
        "def f(a: typing.Any) -> list[Any]: ...\n"
    )
    assert any_uses(source) == 3


def test_any_outside_the_core_never_grows() -> None:
    counts = count_by_app()
    total = sum(counts.values())
    assert total <= BASELINE, (
        f"Any is used {total} times outside ioa/ (baseline {BASELINE}): {counts}. Type the new "
        "code precisely (a Protocol, a TypedDict, the model) instead of Any."
    )
    assert total == BASELINE, f"Any fell to {total} ({counts}): lower BASELINE to {total}."
