"""A transactional test's closing flush survives a process that is still writing.

The browser and bot tests leave real processes running (daphne, the bot runner) that can still be
writing for the session they served when the test ends. Django's flush is one ``TRUNCATE`` of
every table, taken in a set's order; a writer that holds one of those tables and then asks for
another closes a cycle with it, and Postgres aborts the flush (last CI run: "Database
test_viva_gw2 couldn't be flushed" after a test that had passed). Here a second connection
makes exactly that cycle, with the flush as the victim.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from django.db import connection
from django.test import TransactionTestCase

from accounts.models import User

pytestmark = [pytest.mark.services("postgres"), pytest.mark.django_db(transaction=True)]


def _flush_order() -> list[str]:
    """The tables in the order the flush's TRUNCATE names (and locks) them."""
    return connection.introspection.django_table_names(only_existing=True, include_views=False)


def _flush_is_waiting(writer: psycopg.Connection, flusher_pid: int) -> bool:
    row = writer.execute(
        "SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted", (flusher_pid,)
    ).fetchone()
    return bool(row and row[0])


def _writer_that_closes_a_cycle(
    first: str, last: str, flusher_pid: int, holding: threading.Event, problems: list[str]
) -> None:
    """Holds ``last`` as a writer does, waits until the flush queues behind it, then asks for
    ``first`` (which the flush already holds): a deadlock Postgres breaks by aborting the flush,
    whose deadlock check runs first. Then commits, as the writer would."""
    conninfo = connection.get_connection_params()
    conninfo.pop("cursor_factory", None)
    conninfo.pop("context", None)
    with psycopg.connect(**conninfo) as writer:
        writer.execute(f'LOCK TABLE "{last}" IN ROW EXCLUSIVE MODE')
        holding.set()
        deadline = time.monotonic() + 10
        while not _flush_is_waiting(writer, flusher_pid):
            if time.monotonic() > deadline:
                problems.append("the flush never waited for the writer's table")
                return
            time.sleep(0.01)
        writer.execute(f'LOCK TABLE "{first}" IN ACCESS SHARE MODE')
        writer.commit()


def test_a_flush_that_a_concurrent_writer_deadlocks_is_run_again_and_empties_the_database() -> None:
    User.objects.create(username="left-behind")
    tables = _flush_order()
    connection.ensure_connection()
    flusher_pid = connection.connection.info.backend_pid
    holding = threading.Event()
    problems: list[str] = []
    writer = threading.Thread(
        target=_writer_that_closes_a_cycle,
        args=(tables[0], tables[-1], flusher_pid, holding, problems),
    )
    writer.start()
    assert holding.wait(10)

    TransactionTestCase()._fixture_teardown()  # what every transactional test ends with

    writer.join(15)
    assert not writer.is_alive() and problems == []
    assert not User.objects.exists()
