"""Real server processes for tests: the ASGI server (daphne) and a Celery worker.

Both inherit the test process's settings, with the database name switched to the test database so
they see what the test wrote (use ``django_db(transaction=True)`` so writes are committed).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_environment(**extra: str) -> dict[str, str]:
    """The environment for a child process: same services, the test database."""
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("postgresql"):
        user = db.get("USER") or "postgres"
        password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
        host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
        env["DATABASE_URL"] = f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"
    else:
        env.pop("DATABASE_URL", None)
        env["VIVA_SQLITE_PATH"] = str(db["NAME"])
    env.update(extra)
    return env


def _wait_port(port: int, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            out = process.stdout.read().decode() if process.stdout else ""
            raise RuntimeError(f"server exited with {process.returncode}:\n{out}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listening on port {port} after {timeout}s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def asgi_server(**env: str) -> Iterator[str]:
    """Runs daphne on a free port; yields ``127.0.0.1:PORT``."""
    with asgi_server_process(**env) as (address, _):
        yield address


@contextmanager
def asgi_server_process(
    log_path: str | None = None, **env: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Runs daphne on a free port; yields ``127.0.0.1:PORT`` and the process (a test may kill
    it, as a crash would). With ``log_path`` its output goes to that file, which a test can
    read while it runs (an unread pipe fills up and then blocks the server's logging)."""
    port = free_port()
    log = open(log_path, "wb") if log_path else None  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [str(VENV_BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
        cwd=ROOT,
        env=child_environment(**env),
        stdout=log or subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_port(port, process, timeout=30)
        yield f"127.0.0.1:{port}", process
    finally:
        _stop(process)
        if log:
            log.close()


@contextmanager
def celery_worker(queues: str = "default,bots,marking", **env: str) -> Iterator[str]:
    """Runs a real Celery worker (solo pool) until it answers a ping; yields its hostname."""
    from config.celery import app

    name = f"test-{os.getpid()}-{free_port()}@localhost"
    process = subprocess.Popen(
        [
            str(VENV_BIN / "celery"),
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "-Q",
            queues,
            "-n",
            name,
            "--without-gossip",
            "--without-mingle",
            "--loglevel=WARNING",
        ],
        cwd=ROOT,
        env=child_environment(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                out = process.stdout.read().decode() if process.stdout else ""
                raise RuntimeError(f"celery worker exited with {process.returncode}:\n{out}")
            if app.control.inspect(destination=[name], timeout=0.5).ping():
                break
        else:
            raise TimeoutError("celery worker did not answer a ping within 60 s")
        yield name
    finally:
        _stop(process)
