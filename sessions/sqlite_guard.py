"""Per-connection support of the SQLite event-log triggers (migrations 0007 and 0009).

Every new SQLite connection gets two functions the triggers call:

* ``viva_log_flush()``, which is 1 only while Django's own flush
  (``connection.ops.execute_sql_flush``: ``manage.py flush``, test-suite teardown) runs on that
  connection, and 0 otherwise, so the DELETE trigger refuses every other deletion of events;
* ``viva_erasure(old_erased, new_erased, old_payload, new_payload)``, which is 1 only inside
  :func:`erasing` (``sessions.erasure``) for an update that marks a not yet erased event as
  erased by that erasure and changes no payload field but those whose seals it keeps.

A connection without the functions (e.g. the sqlite3 shell) can neither delete nor update events.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db.backends.signals import connection_created


@dataclass
class _GuardState:
    """One connection's guard: a flush is running (1/0); the erasure in progress (id or "")."""

    flushing: int = 0
    erasure: str = ""


def _erasure_allows(
    state: _GuardState, old: object, new: object, before: object, after: object
) -> int:
    """Whether the pending UPDATE is the erasure in progress on this connection (the SQL
    function's arguments: the old and new ``erased`` and the old and new ``payload``, as JSON
    text)."""
    if not state.erasure or old is not None or new is None:
        return 0
    if not (
        isinstance(new, str | bytes)
        and isinstance(before, str | bytes)
        and isinstance(after, str | bytes)
    ):
        return 0  # what json.loads refuses (TypeError)
    try:
        erased, old_payload, new_payload = json.loads(new), json.loads(before), json.loads(after)
    except (TypeError, ValueError):
        return 0
    seals = erased.get("seals") if isinstance(erased, dict) else None
    if erased.get("erasure") != state.erasure or not isinstance(seals, dict):
        return 0
    if not isinstance(old_payload, dict) or not isinstance(new_payload, dict):
        return 0
    keep = set(old_payload) | set(new_payload)
    return int(all(old_payload.get(k) == new_payload.get(k) for k in keep - set(seals)))


# Any: the connection (and its ``ops``) get attributes and a wrapped method Django's types
# do not have.
def _guard(sender: object, connection: Any, **kwargs: object) -> None:
    if connection.vendor != "sqlite":
        return
    state = _GuardState()
    connection._viva_erasure_state = state
    connection.connection.create_function(
        "viva_log_flush", 0, lambda: state.flushing, deterministic=False
    )
    connection.connection.create_function(
        "viva_erasure",
        4,
        lambda *args: _erasure_allows(state, *args),
        deterministic=False,
    )
    ops = connection.ops
    if getattr(ops, "_viva_flush_wrapped", False):
        ops._viva_flush_state = state
        return
    original = ops.execute_sql_flush
    ops._viva_flush_state = state

    def execute_sql_flush(sql_list: list[str]) -> None:
        ops._viva_flush_state.flushing = 1
        try:
            original(sql_list)
        finally:
            ops._viva_flush_state.flushing = 0

    ops.execute_sql_flush = execute_sql_flush
    ops._viva_flush_wrapped = True


@contextmanager
def erasing(connection: Any, erasure_id: str) -> Iterator[None]:  # Any: as for _guard
    """Let the erasure ``erasure_id`` mark this connection's events as erased while inside."""
    connection.ensure_connection()
    state: _GuardState = connection._viva_erasure_state
    state.erasure = erasure_id
    try:
        yield
    finally:
        state.erasure = ""


def install() -> None:
    connection_created.connect(_guard, dispatch_uid="viva-sqlite-log-guard")
