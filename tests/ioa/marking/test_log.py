"""The marker's reading of the log (``ioa.marking.log``): every type it reads has a reader.

A type listed in ``READ_TYPES`` without a reader made ``read_log`` fail with a ``KeyError`` on
the first such event of any session, so marking of that session stopped; nothing else checked
the two tables against each other (found while writing docs/adding-an-event-type.md).
"""

from __future__ import annotations

from ioa.events import EventType
from ioa.marking.log import _READERS, READ_TYPES


def test_every_type_the_marker_reads_has_exactly_one_reader() -> None:
    assert set(_READERS) == set(READ_TYPES)


def test_every_type_the_marker_reads_is_an_event_type() -> None:
    assert set(READ_TYPES) <= {t.value for t in EventType}
