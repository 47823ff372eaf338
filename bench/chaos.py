#!/usr/bin/env python
"""Chaos run (issue #33): text exams on Celery workers while a seeded schedule stops and restarts
Redis, kills workers (SIGKILL), drains them (SIGTERM) and restarts the web process; prints the
figures and exits 1 when an invariant fails.

The scenario is ``tests/support/chaos.py`` (the same code ``tests/bot/test_chaos.py`` runs):
real processes throughout (a ``redis-server`` of the run's own on a free port, daphne, Celery
workers, ``relay_outbox``, an LTI platform, a webhook receiver), candidates over HTTP and the
exam room's WebSocket, the offline examiner. It prints the fault schedule as injected, exams
started / completed normally / resumed after a kill or a drain / not completed and why, marks
per completed exam, grades at the LMS and webhook deliveries per exam, duplicated events, chains
verified, the wall time and the answer latency p50/p95 before, during and after the faults.

Needs Postgres (``DATABASE_URL``; a throw-away database ``test_<name>_chaos`` is created and
dropped) and ``redis-server`` on the PATH; the machine's own Redis is never touched.

Usage: ``DATABASE_URL=postgres://... python bench/chaos.py [--exams 50] [--workers 2] [--seed 33]``
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def setup_django() -> str:
    """Django on a fresh throw-away Postgres database; returns its name."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["VIVA_OUTBOUND_ALLOWED_NETWORKS"] = "127.0.0.0/8"  # the LTI platform's keyset
    os.environ.setdefault("VIVA_LOG_LEVEL", "WARNING")
    os.environ.setdefault("DJANGO_SECRET_KEY", uuid.uuid4().hex * 2)
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("bench/chaos.py needs DATABASE_URL=postgres://...")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()  # the LTI launches use Django's test client ("testserver")
    db = settings.DATABASES["default"]
    db.setdefault("TEST", {})["NAME"] = f"test_{db['NAME']}_chaos"
    return str(connection.creation.create_test_db(verbosity=0, autoclobber=True))


def drop_database(name: str) -> None:
    """Drop the throw-away database even if a killed process's connection lingers."""
    from django.db import connection, connections

    connections.close_all()
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def arguments() -> argparse.Namespace:
    from tests.support.chaos import ChaosOptions

    default = ChaosOptions()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exams", type=int, default=default.exams)
    parser.add_argument("--workers", type=int, default=default.workers)
    parser.add_argument("--seed", type=int, default=default.seed, help="of the fault schedule")
    parser.add_argument("--faults", type=int, default=default.faults, help="at least 4")
    parser.add_argument("--think", type=float, default=default.think, help="seconds per answer")
    parser.add_argument("--stagger", type=float, default=default.stagger)
    parser.add_argument("--chaos-start", type=float, default=default.chaos_start)
    parser.add_argument("--chaos-end", type=float, default=default.chaos_end)
    return parser.parse_args()


def main(args: argparse.Namespace) -> int:
    """Run the scenario; 1 when an invariant failed."""
    from tests.support.chaos import ChaosOptions, run

    options = ChaosOptions(
        exams=args.exams,
        workers=args.workers,
        seed=args.seed,
        faults=args.faults,
        think=args.think,
        stagger=args.stagger,
        chaos_start=args.chaos_start,
        chaos_end=args.chaos_end,
    )
    print(
        f"chaos run: {options.exams} text exams, {options.workers} workers, seed {options.seed}, "
        f"{options.faults} faults between {options.chaos_start:g} s and {options.chaos_end:g} s "
        f"({os.cpu_count()} CPUs)",
        flush=True,
    )
    result = run(options)
    print(result.text())
    return 1 if result.failures or result.known else 0


if __name__ == "__main__":
    parsed = arguments()
    database = setup_django()
    try:
        code = main(parsed)
    finally:
        drop_database(database)
    sys.exit(code)
