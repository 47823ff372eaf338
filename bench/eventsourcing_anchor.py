"""The anchor of ``bench/events.py``'s throughput target: the same workload through the
`eventsourcing <https://pypi.org/project/eventsourcing/>`_ library's own Postgres persistence
(``eventsourcing.postgres``: its ``Application``, mapper and ``PostgresApplicationRecorder``).

One aggregate per exam session; each transcript is one domain event, saved in its own
transaction (``Application.save`` after each event), as our bots append one event per
transaction. The library is installed for the bench only (``requirements/bench.txt``); this
module is imported by the bench's writer processes, never by the product.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any
from urllib.parse import urlsplit

TEXT = "So the algorithm starts by selecting the nearest unvisited node."


def _env(database_url: str, pool_size: int, *, create_table: bool) -> dict[str, str]:
    parts = urlsplit(database_url)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": parts.path.lstrip("/"),
        "POSTGRES_HOST": parts.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(parts.port or 5432),
        "POSTGRES_USER": parts.username or "postgres",
        "POSTGRES_PASSWORD": parts.password or "",
        "POSTGRES_POOL_SIZE": str(pool_size),
        "POSTGRES_MAX_OVERFLOW": "0",
        "CREATE_TABLE": "y" if create_table else "n",
    }


def _application(database_url: str, pool_size: int, *, create_table: bool = False) -> Any:
    """The library's application on ``database_url``; only :func:`create_tables` creates the
    tables (writer processes doing it at once race on Postgres's catalog: "tuple concurrently
    updated")."""
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event

    class ExamTranscript(Aggregate):
        """A session's transcript: one ``Said`` event per candidate turn."""

        def __init__(self, session_id: str) -> None:
            self.session_id = session_id
            self.turns = 0

        @event("Said")
        def said(self, turn_id: str, text: str, start_ms: int, end_ms: int) -> None:
            self.turns += 1

    class Transcripts(Application[uuid.UUID]):
        name = "BenchTranscripts"

    env = _env(database_url, pool_size, create_table=create_table)
    return Transcripts(env=env), ExamTranscript


def create_tables(database_url: str) -> None:
    """Create the library's tables before the clock starts (``CREATE_TABLE``)."""
    app, _ = _application(database_url, 1, create_table=True)
    app.close()


def writer_process(
    database_url: str, session_ids: list[str], per_session: int, barrier: Any, results: Any
) -> None:
    """A thread per session, ``per_session`` events each, one transaction per event."""
    app, aggregate_class = _application(database_url, len(session_ids))
    warmed = threading.Barrier(len(session_ids) + 1)
    go = threading.Barrier(len(session_ids) + 1)

    def work(index: int) -> None:
        transcript = aggregate_class(session_ids[index])
        app.save(transcript)  # the first event: the aggregate's creation
        for turn in range(1, per_session):
            transcript.said(f"turn-{turn}", TEXT, turn * 1000, turn * 1000 + 900)
            app.save(transcript)

    def runner(index: int) -> None:
        app.recorder.datastore.pool.check()  # a running writer has its connections open
        warmed.wait()
        go.wait()
        work(index)

    threads = [threading.Thread(target=runner, args=(i,)) for i in range(len(session_ids))]
    for thread in threads:
        thread.start()
    warmed.wait()
    barrier.wait()
    go.wait()
    for thread in threads:
        thread.join()
    results.put(time.time())
    app.close()


def count_gap_free(database_url: str, per_session: int) -> tuple[int, bool]:
    """Events the library stored, and whether every aggregate has versions 1..per_session."""
    import psycopg

    with psycopg.connect(database_url) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT originator_id, count(*), min(originator_version), max(originator_version) "
            "FROM benchtranscripts_events GROUP BY originator_id"
        )
        rows = cursor.fetchall()
    total = sum(row[1] for row in rows)
    gap_free = all(row[1] == per_session and row[2] == 1 and row[3] == per_session for row in rows)
    return total, gap_free
