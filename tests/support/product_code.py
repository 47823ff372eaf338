"""The product's own Python source, as the code ratchets (tests/test_*_ratchet.py) read it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = (
    "config",
    "web",
    "accounts",
    "authoring",
    "publishing",
    "sessions",
    "proctoring",
    "bot",
    "marking",
    "lti",
    "webhooks",
)
"""The Django project and its apps: everything outside the domain core ``ioa/``."""
PACKAGES = ("ioa", *APPS)


def source_files(package: str) -> Iterator[Path]:
    """``package``'s Python files in path order, migrations left out."""
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path
