"""``python -m tests.support.pooled_appends SESSION_ID...``: appends from several threads at once
through whatever ``DATABASE_URL`` names (a transaction-pooling PgBouncer in
``tests/sessions/test_pgbouncer.py``): per session two threads, each storing single events
(the one-statement group-commit path) and two-event batches (the locked batch path). Prints
``ok N`` with the number stored and exits 0; on the first error prints it and exits 1."""

from __future__ import annotations

import os
import sys
import threading

import django

SINGLES = 12
BATCHES = 4


def _append_many(session_id: str, errors: list[str]) -> None:
    from django.db import connection

    from sessions.event_store import append_event, append_events
    from tests.sessions.factories import event_factory, guardrail

    make = event_factory(session_id)
    try:
        for index in range(SINGLES):
            append_event(session=session_id, event=make(guardrail()))
            if index % 3 == 0 and index // 3 < BATCHES:
                append_events(session=session_id, events=[make(guardrail()), make(guardrail())])
    except Exception as exc:  # reported to the test, which fails on it
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()


def main(session_ids: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    errors: list[str] = []
    threads = [
        threading.Thread(target=_append_many, args=(sid, errors))
        for sid in session_ids
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    if errors:
        print("\n".join(errors))
        return 1
    print(f"ok {len(threads) * (SINGLES + 2 * BATCHES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
