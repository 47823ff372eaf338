"""Compiled translation catalogues (docs/i18n.md): ``locale/<lang>/LC_MESSAGES/*.po`` → ``.mo``.

The ``.mo`` files are committed: Django reads them at run time, and neither ``make run`` nor CI
needs GNU gettext. They are compiled from the ``.po`` files with :mod:`polib` (pure Python,
pinned in requirements/dev.txt) by ``make messages`` (``python -m config.messages``);
``tests/config/test_translations.py`` fails when a committed ``.mo`` differs from its ``.po``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import polib

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"


def catalogues(root: Path = LOCALE_DIR) -> Iterator[Path]:
    """Every ``.po`` file under ``root``, sorted."""
    yield from sorted(root.glob("*/LC_MESSAGES/*.po"))


def compiled(po_path: Path) -> dict[tuple[str, str], object]:
    """What the ``.mo`` of ``po_path`` must hold: (msgctxt, msgid) → translation (a string or
    the plural forms), translated and not fuzzy entries only."""
    po = polib.pofile(str(po_path))
    return {
        (e.msgctxt or "", e.msgid): (
            tuple(e.msgstr_plural[k] for k in sorted(e.msgstr_plural))
            if e.msgid_plural
            else e.msgstr
        )
        for e in po.translated_entries()
    }


def read_mo(mo_path: Path) -> dict[tuple[str, str], object]:
    """The translations a ``.mo`` file holds, in the shape of :func:`compiled`."""
    mo = polib.mofile(str(mo_path))
    return {
        (e.msgctxt or "", e.msgid): (
            tuple(e.msgstr_plural[k] for k in sorted(e.msgstr_plural))
            if e.msgid_plural
            else e.msgstr
        )
        for e in mo
        if e.msgid
    }


def compile_all(root: Path = LOCALE_DIR) -> list[Path]:
    """Compile every ``.po`` under ``root`` next to itself; returns the ``.mo`` paths."""
    written = []
    for po_path in catalogues(root):
        mo_path = po_path.with_suffix(".mo")
        polib.pofile(str(po_path)).save_as_mofile(str(mo_path))
        written.append(mo_path)
    return written


if __name__ == "__main__":
    for path in compile_all():
        sys.stdout.write(f"wrote {path.relative_to(LOCALE_DIR.parent)}\n")
