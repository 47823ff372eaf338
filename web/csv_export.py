"""CSV downloads, safe to open in a spreadsheet: every CSV the product exports goes through
:func:`csv_response`.

Formula injection (CWE-1236): a cell whose text starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return (or their full-width forms) is read as a formula by Excel, LibreOffice and
Google Sheets: ``=HYPERLINK(...)`` in a display name would become a live link. Such a cell is
prefixed with an apostrophe (``'=HYPERLINK(...)``), which spreadsheets show as text. Numbers
(``-12.5``) are left as they are.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from typing import Final

from django.http import HttpResponse

FORMULA_TRIGGERS: Final = ("=", "+", "-", "@", "\t", "\r", "\n")
FORMULA_TRIGGERS_WIDE: Final = ("\uff1d", "\uff0b", "\uff0d", "\uff20")  # full-width forms
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def safe_cell(value: object) -> object:
    """The cell as a spreadsheet will read it as text (see the module docstring)."""
    if value is None or isinstance(value, (int, float)):
        return value
    text = str(value)
    if text.startswith(FORMULA_TRIGGERS + FORMULA_TRIGGERS_WIDE) and not _NUMBER.match(text):
        return "'" + text
    return text


def csv_response(
    filename: str, header: Sequence[object], rows: Iterable[Sequence[object]]
) -> HttpResponse:
    """An attachment download of ``header`` and ``rows``, every cell neutralised."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow([safe_cell(cell) for cell in header])
    writer.writerows([safe_cell(cell) for cell in row] for row in rows)
    return response
