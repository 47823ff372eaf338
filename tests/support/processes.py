"""Real server processes for tests: the ASGI server (daphne) and a Celery worker.

Both inherit the test process's settings, with the database name switched to the test database so
they see what the test wrote (use ``django_db(transaction=True)`` so writes are committed).

Every child's output goes to a file, ``test-artifacts/processes/<kind>-<port>.log``
(:func:`output_log`), never to a pipe: a pipe nobody reads holds 64 KiB, and a server that logs
more than that blocks on its next log line. The file is also where to look when a test fails.
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
LOGS = ROOT / "test-artifacts" / "processes"


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


def output_log(kind: str, port: int) -> Path:
    """A fresh file for a child process's output (stdout and stderr)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    path = LOGS / f"{kind}-{port}.log"
    path.write_bytes(b"")
    return path


def log_tail(path: Path, limit: int = 8000) -> str:
    """The end of a child's output, for an error message."""
    return path.read_bytes()[-limit:].decode(errors="replace") if path.exists() else ""


def wait_port(port: int, process: subprocess.Popen[bytes], timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{log_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listening on port {port} after {timeout}s:\n{log_tail(log)}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process``, killing it after 10 s."""
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
def listening_process(
    argv: list[str], *, port: int, env: dict[str, str], log: Path, timeout: float = 60
) -> Iterator[subprocess.Popen[bytes]]:
    """Runs ``argv`` with its output in ``log`` until it listens on ``port`` (a server takes a few
    seconds to start on a quiet machine, many more while the suite runs in parallel); stops it
    after."""
    with log.open("wb") as output:
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
        try:
            wait_port(port, process, timeout=timeout, log=log)
            yield process
        finally:
            stop_process(process)


@contextmanager
def asgi_server_process(
    log_path: str | None = None, **env: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Runs daphne on a free port; yields ``127.0.0.1:PORT`` and the process (a test may kill
    it, as a crash would). Its output goes to ``log_path`` if given (a test may read it while
    the server runs), else to :func:`output_log`."""
    port = free_port()
    argv = [str(VENV_BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"]
    log = Path(log_path) if log_path else output_log("daphne", port)
    with listening_process(argv, port=port, env=child_environment(**env), log=log) as process:
        yield f"127.0.0.1:{port}", process


@contextmanager
def celery_worker(
    queues: str = "default,bots,marking", broker_url: str | None = None, **env: str
) -> Iterator[str]:
    """Runs a real Celery worker (solo pool) until it answers a ping; yields its hostname.
    ``broker_url``: a broker other than the test process's (the worker's env names it too)."""
    from celery import Celery

    from config.celery import app

    if broker_url is not None:
        app = Celery(broker=broker_url, set_as_current=False)  # only to ping this worker

    port = free_port()
    name = f"test-{os.getpid()}-{port}@localhost"
    path = output_log("celery", port)
    log = path.open("wb")
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
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                tail = log_tail(path)
                raise RuntimeError(f"celery worker exited with {process.returncode}:\n{tail}")
            if app.control.inspect(destination=[name], timeout=0.5).ping():
                break
        else:
            raise TimeoutError("celery worker did not answer a ping within 60 s")
        yield name
    finally:
        stop_process(process)
        log.close()
