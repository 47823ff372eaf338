"""Per-worker services when the suite runs in parallel (pytest-xdist, ``make test`` / ``.ci/run``).

Loaded with ``-p tests.support.xdist_services`` (pyproject's ``addopts``) so it runs before
pytest-django imports the settings. Each xdist worker (``PYTEST_XDIST_WORKER=gwN``) gets:

* its own Redis database: ``REDIS_URL``'s database number minus N (``/15`` → gw0 ``/15``, gw1
  ``/14``, …; plus N from a base below N), so channel groups, the cache, Celery queues and
  ``flushdb`` of one worker never reach another's; the same for ``CELERY_BROKER_URL``;
* its own Postgres test database, which pytest-django already names ``test_<name>_gwN``; child
  processes (``tests.support.processes.child_environment``) follow ``settings.DATABASES``.

Without xdist (a plain ``pytest``) nothing changes.
"""

from __future__ import annotations

import os


def worker_number() -> int | None:
    """N for xdist worker ``gwN``; None outside xdist."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker.removeprefix("gw")) if worker.startswith("gw") else None


def redis_url_for_worker(url: str, number: int) -> str:
    """``url`` with its database number lowered by ``number`` (raised when the base is too low to
    go down; the base is 0 when ``url`` names none)."""
    head, slash, tail = url.rpartition("/")
    if not slash or head.endswith("/") or not tail.isdigit():
        head, tail = url.rstrip("/"), "0"
    base = int(tail)
    database = base - number if base >= number else base + number
    return f"{head}/{database}"


BASE_REDIS_URL = os.environ.get("REDIS_URL", "").strip()
"""``REDIS_URL`` as the run was started with (worker gw0's)."""


def _separate_redis_databases() -> None:
    number = worker_number()
    if not number:
        return
    for name in ("REDIS_URL", "CELERY_BROKER_URL"):
        url = os.environ.get(name, "").strip()
        if url.startswith(("redis://", "rediss://")):
            os.environ[name] = redis_url_for_worker(url, number)


_separate_redis_databases()
