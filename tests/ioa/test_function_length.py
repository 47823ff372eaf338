"""The core's decision functions stay small (issue #22): no function in ``ioa/`` is over 60
lines. A longer one is split into named steps (a table keyed by the input's type, or a tuple of
steps returning ``Flow``), as docs/architecture.md describes; ``python bench/house.py`` lists
the long functions of the whole project."""

from __future__ import annotations

import ast
from pathlib import Path

import ioa

LIMIT = 60


def _long_functions(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > LIMIT:
                    found.append(f"{path.relative_to(root.parent)}:{node.name} ({lines} lines)")
    return found


def test_no_function_in_the_core_is_over_60_lines() -> None:
    assert _long_functions(Path(ioa.__file__).parent) == []


def test_the_check_sees_a_long_function(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (package / "long.py").write_text(f"def long() -> None:\n{body}\n", encoding="utf-8")
    (package / "short.py").write_text("def short() -> None:\n    pass\n", encoding="utf-8")
    assert _long_functions(package) == ["pkg/long.py:long (61 lines)"]
