"""Prints the shape of the house: long functions, the largest classes, ``Any`` in the apps, and
function-level imports that cross from one app into another.

Run it from the project root: ``python bench/house.py`` (``--limit 60`` sets what counts as a long
function, ``--top 10`` how many of each to list). It reads the code as text with ``ast`` and runs
nothing of the project, so it works on any checkout; compare two checkouts by running it in each.

The figures are the ones issue #22 names: functions over 60 lines (and those in ``ioa/``), the
decision functions ``observe._evaluate``, ``log._apply`` and ``rules.decide_level``, the class
with the most methods, ``Any`` outside ``ioa/``, and function-level imports by direction. Every
top-level package of the project counts (a folder with an ``__init__.py``, ``tests/`` aside), so a
new app is measured without editing this script.
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_PARTS = {"migrations", ".venv", "node_modules", "tests", "bench", "var"}
WATCHED = ("_evaluate", "_apply", "decide_level")


@dataclass(frozen=True)
class Function:
    path: str
    name: str
    lines: int


@dataclass(frozen=True)
class Klass:
    path: str
    name: str
    methods: int


def _packages(root: Path) -> tuple[str, ...]:
    """The project's top-level packages (every app, ``ioa``, ``config``, ``web``): the folders of
    ``root`` holding an ``__init__.py``, less the skipped ones (``tests``)."""
    return tuple(
        sorted(
            path.parent.name
            for path in root.glob("*/__init__.py")
            if path.parent.name not in SKIPPED_PARTS
        )
    )


def _sources(root: Path, apps: tuple[str, ...]) -> Iterator[Path]:
    for app in apps:
        for path in sorted((root / app).rglob("*.py")):
            if not SKIPPED_PARTS.intersection(path.relative_to(root).parts):
                yield path


def _functions(tree: ast.AST, rel: str) -> Iterator[Function]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            yield Function(rel, node.name, end - node.lineno + 1)


def _classes(tree: ast.AST, rel: str) -> Iterator[Klass]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods = sum(
                isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) for item in node.body
            )
            yield Klass(rel, node.name, methods)


def _any_count(tree: ast.AST) -> int:
    return sum(
        1
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and node.id == "Any")
        or (isinstance(node, ast.Attribute) and node.attr == "Any")
    )


def _function_level_imports(tree: ast.AST, app: str, apps: tuple[str, ...]) -> Iterator[str]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                target = inner.module.split(".")[0]
            elif isinstance(inner, ast.Import):
                target = inner.names[0].name.split(".")[0]
            else:
                continue
            if target in apps:
                yield f"{app}->{target}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()

    functions: list[Function] = []
    classes: list[Klass] = []
    any_by_app: Counter[str] = Counter()
    crossings: Counter[str] = Counter()
    apps = _packages(args.root)
    for path in _sources(args.root, apps):
        rel = str(path.relative_to(args.root))
        app = rel.split("/")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        functions.extend(_functions(tree, rel))
        classes.extend(_classes(tree, rel))
        if app != "ioa":
            any_by_app[app] += _any_count(tree)
        crossings.update(_function_level_imports(tree, app, apps))

    long = sorted((f for f in functions if f.lines > args.limit), key=lambda f: -f.lines)
    print(
        f"functions over {args.limit} lines: {len(long)} "
        f"(in ioa/: {sum(f.path.startswith('ioa/') for f in long)})"
    )
    for f in long[: args.top]:
        print(f"  {f.lines:4d}  {f.path}:{f.name}")
    print("watched decision functions:")
    for name in WATCHED:
        found = [f for f in functions if f.name == name and f.path.startswith("ioa/")]
        sizes = ", ".join(f"{f.path} {f.lines}" for f in found) or "gone"
        print(f"  {name}: {sizes}")
    print("largest classes by methods:")
    for k in sorted(classes, key=lambda k: -k.methods)[: min(args.top, 5)]:
        print(f"  {k.methods:4d}  {k.path}:{k.name}")
    print(f"Any outside ioa/: {sum(any_by_app.values())} ({dict(sorted(any_by_app.items()))})")
    across = Counter({d: n for d, n in crossings.items() if d.split("->")[0] != d.split("->")[1]})
    print(
        f"function-level imports of project modules: {sum(crossings.values())}, "
        f"across apps: {sum(across.values())}"
    )
    for direction, count in across.most_common():
        print(f"  {count:4d}  {direction}")


if __name__ == "__main__":
    main()
