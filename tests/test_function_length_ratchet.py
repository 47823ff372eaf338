"""Functions stay under 60 lines, and the few longer ones only get shorter (issue #36).

The style guide asks for functions under :data:`LIMIT` lines. This walks every function and
method of the product's packages (``ioa/`` and the apps; migrations left out) and measures it
from its ``def`` line to its last line, docstring included. A function over the limit that is
not in :data:`LONGER` fails, naming it; one in :data:`LONGER` may not grow past its recorded
length; one that fell to the limit or below, or no longer exists, must leave :data:`LONGER`, so
the list can only shrink.
"""

from __future__ import annotations

import ast

from tests.support.product_code import PACKAGES, ROOT, source_files

LIMIT = 60
LONGER = {
    "sessions/commands.py::command_handle": 64,
    "bot/audio.py::voice_io": 91,
    "bot/pipeline.py::build_pipeline": 73,
    "bot/runners.py::run_bot": 75,
    "bot/session_runner.py::_run": 78,
    "bot/webrtc_views.py::webrtc_offer": 64,
    "marking/api/views.py::_detail": 71,
    "marking/services.py::session_mark": 67,
    "marking/services.py::irregularity_record": 97,
}
"""The functions over the limit on 2026-12-06, with their lengths then: to be split, never to
grow."""


def function_lengths(source: str, path: str) -> dict[str, int]:
    """``path::name`` → lines, for every function in ``source`` (the longest of a repeated
    name, e.g. two ``__init__`` methods of one module)."""
    lengths: dict[str, int] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            key = f"{path}::{node.name}"
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            lengths[key] = max(length, lengths.get(key, 0))
    return lengths


def product_function_lengths() -> dict[str, int]:
    lengths: dict[str, int] = {}
    for package in PACKAGES:
        for path in source_files(package):
            relative = path.relative_to(ROOT).as_posix()
            lengths.update(function_lengths(path.read_text(encoding="utf-8"), relative))
    return lengths


def test_the_measure_runs_from_the_def_to_the_last_line() -> None:
    source = (
        "def short():\n    return 1\n\n"
        "class A:\n    async def method(self):\n        x = 1\n\n        return x\n"
    )
    assert function_lengths(source, "m.py") == {"m.py::short": 2, "m.py::method": 4}


def test_no_new_function_is_over_the_limit() -> None:
    lengths = product_function_lengths()
    new = {key: n for key, n in lengths.items() if n > LIMIT and key not in LONGER}
    assert not new, (
        f"functions over {LIMIT} lines: {new}. Split them (one concept per function), do not "
        "add them to LONGER."
    )


def test_the_longer_ones_only_shrink() -> None:
    lengths = product_function_lengths()
    grown = {key: (lengths[key], n) for key, n in LONGER.items() if lengths.get(key, 0) > n}
    assert not grown, f"grew (now, recorded): {grown}; split instead."
    done = [key for key in LONGER if lengths.get(key, 0) <= LIMIT]
    assert not done, f"now at most {LIMIT} lines or gone: remove {done} from LONGER."
    shrunk = {key: lengths[key] for key, n in LONGER.items() if LIMIT < lengths[key] < n}
    assert not shrunk, f"shorter now: record the new lengths in LONGER: {shrunk}"
