"""The closing flush of a transactional test, run again when a concurrent writer deadlocks it.

A transactional test (``django_db(transaction=True)``) ends with Django's ``flush``: one
``TRUNCATE`` of every table, locking them in a set's iteration order (it changes with each
process's hash seed). The browser and bot tests leave real processes running (daphne, the bot
runner) that may still write for the session they served; a write that holds one table and then
asks for another can close a cycle with the ``TRUNCATE``, and Postgres breaks it by aborting one of
the two. When the victim is the flush, Django reports "couldn't be flushed" and the test errors
although it passed. An aborted flush rolls back whole, so it is safe to run again: a flush that a
deadlock, a lock timeout or a serialisation failure aborted is retried a few times, each after a
short pause; any other error is raised at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.core.management.base import CommandError
from django.test import TransactionTestCase

RETRIED_SQLSTATES = frozenset({"40P01", "40001", "55P03"})
"""Deadlock detected, serialisation failure, lock not available."""

ATTEMPTS = 5
PAUSE_SECS = 0.2


def _aborted_by_concurrency(error: BaseException) -> bool:
    cause: BaseException | None = error
    while cause is not None:
        if getattr(cause, "sqlstate", None) in RETRIED_SQLSTATES:
            return True
        cause = cause.__cause__
    return False


def flush_with_retries(
    flush: Callable[[], None], *, attempts: int = ATTEMPTS, pause_secs: float = PAUSE_SECS
) -> None:
    """Runs ``flush``; runs it again (up to ``attempts`` times in all) while it fails only
    because a concurrent transaction aborted it."""
    for attempt in range(1, attempts + 1):
        try:
            flush()
            return
        except CommandError as error:
            if attempt == attempts or not _aborted_by_concurrency(error):
                raise
            time.sleep(pause_secs * attempt)


def install() -> None:
    """Every transactional test's closing flush goes through :func:`flush_with_retries`."""
    original = TransactionTestCase._fixture_teardown
    if getattr(original, "retries_concurrency_aborts", False):
        return

    def _fixture_teardown(self: TransactionTestCase) -> None:
        flush_with_retries(lambda: original(self))

    _fixture_teardown.retries_concurrency_aborts = True  # type: ignore[attr-defined]
    TransactionTestCase._fixture_teardown = _fixture_teardown  # type: ignore[method-assign]
