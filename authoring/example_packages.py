"""The example packages shipped in examples/, offered as starting points in the studio."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings

EXAMPLES_DIR = Path(settings.BASE_DIR) / "examples"


@cache
def example_documents() -> dict[str, dict[str, Any]]:
    """Example name (file stem) → parsed document, sorted by name."""
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(EXAMPLES_DIR.glob("*.json"))
    }


def example_titles() -> list[tuple[str, str]]:
    return [
        (name, str(doc.get("metadata", {}).get("title", name)))
        for name, doc in example_documents().items()
    ]
