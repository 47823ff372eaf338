"""Reading package files for the command-line tools, with a report for unreadable ones."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from web.json_input import JsonInputError, check_strings, max_depth, nesting_depth


@dataclass(frozen=True)
class LoadedFile:
    path: str
    document: Any = None
    problem: str | None = None  # why the file could not be read as JSON


def load_package_file(path: str) -> LoadedFile:
    """Reads and parses one file; never raises for a missing, unreadable or non-JSON file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return LoadedFile(path, problem=f"{path}: no such file")
    except (OSError, UnicodeDecodeError) as exc:
        return LoadedFile(path, problem=f"{path}: cannot be read ({exc})")
    depth = nesting_depth(text)
    if depth > max_depth():
        return LoadedFile(
            path, problem=f"{path}: nests {depth} levels deep; the limit is {max_depth()}"
        )
    try:
        document = json.loads(text)
        check_strings(document)
    except json.JSONDecodeError as exc:
        return LoadedFile(
            path,
            problem=f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
        )
    except JsonInputError as exc:
        return LoadedFile(path, problem=f"{path}: {exc.message}")
    return LoadedFile(path, document=document)


def unreadable_report(loaded: LoadedFile, now: datetime | None = None) -> dict[str, object]:
    """A rejection report (chapter 08 shape) for a file that is not a JSON document."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    finding = {
        "ruleId": "SCHEMA-000",
        "severity": "error",
        "nodeId": None,
        "message": f"{loaded.problem}. Fix the file so it holds one JSON object.",
        "path": "",
    }
    return {
        "packageId": None,
        "irVersion": None,
        "validatedAt": moment.isoformat().replace("+00:00", "Z"),
        "result": "reject",
        "file": loaded.path,
        "errors": [finding],
        "warnings": [],
        "info": [],
        "summary": {
            "errors": 1,
            "warnings": 0,
            "info": 0,
            "nodesValidated": 0,
            "transitionsValidated": 0,
        },
    }
