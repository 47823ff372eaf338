"""The processes of a chaos run (issue #33), each one that can be stopped and started again: a
``redis-server`` of the run's own on a fixed free port (never the machine's Redis), the web
process (daphne, on one port across restarts), Celery workers (``--pool=threads``, queues
``bots,marking,default`` as ``make services-run`` runs them) and the outbox relay
(``manage.py relay_outbox --loop``). Every child writes to ``test-artifacts/processes/``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.processes import (
    ROOT,
    VENV_BIN,
    child_environment,
    free_port,
    output_log,
    stop_process,
    wait_port,
)


class RedisServer:
    """A ``redis-server`` without persistence on a free port: a restart loses every key, as a
    crashed Redis without AOF does. ``stop`` and ``start`` again keep the port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until it answers PING (10 s at most)."""
        argv = ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not self._answers():
            if time.monotonic() > deadline:
                raise TimeoutError(f"redis-server on port {self.port} did not start")
            time.sleep(0.05)

    def _answers(self) -> bool:
        ping = ["redis-cli", "-p", str(self.port), "ping"]
        return subprocess.run(ping, capture_output=True, text=True).stdout.strip() == "PONG"

    def stop(self) -> None:
        """Shut it down without saving (every key is lost)."""
        if self.process is not None and self.process.poll() is None:
            subprocess.run(
                ["redis-cli", "-p", str(self.port), "shutdown", "nosave"],
                capture_output=True,
                check=False,
            )
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


@dataclass
class ServiceEnv:
    """What every child of the run shares: the run's Redis and the settings of the exam."""

    redis_url: str
    extra: dict[str, str] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        env = child_environment(REDIS_URL=self.redis_url, **self.extra)
        for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
            env.pop(name, None)  # the broker and results are the run's own Redis
        return env


class WebProcess:
    """daphne on one port; ``restart`` stops it (SIGTERM) and starts it on the same port."""

    def __init__(self, services: ServiceEnv) -> None:
        self.services = services
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.log = output_log("chaos-daphne", self.port)

    def start(self) -> None:
        argv = [
            str(VENV_BIN / "daphne"),
            "-b",
            "127.0.0.1",
            "-p",
            str(self.port),
            "config.asgi:application",
        ]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                argv, cwd=ROOT, env=self.services.environment(), stdout=out, stderr=out
            )
        wait_port(self.port, self.process, timeout=90, log=self.log)

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
        self.process = None


class Worker:
    """One Celery worker process (threads pool), killable with SIGKILL or drained with SIGTERM."""

    def __init__(self, services: ServiceEnv, index: int) -> None:
        port = free_port()  # only to name the worker and its log uniquely
        self.name = f"chaos-{os.getpid()}-{index}-{port}@localhost"
        self.log = output_log("chaos-celery", port)
        argv = [
            str(VENV_BIN / "celery"),
            "-A",
            "config",
            "worker",
            "--pool=threads",
            "--concurrency=4",
            "-Q",
            "bots,marking,default",
            "-n",
            self.name,
            "--without-gossip",
            "--without-mingle",
            "--loglevel=WARNING",
        ]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                argv, cwd=ROOT, env=services.environment(), stdout=out, stderr=out
            )

    def signal(self, number: signal.Signals) -> None:
        if self.process.poll() is None:
            self.process.send_signal(number)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        stop_process(self.process)


class Relay:
    """``manage.py relay_outbox --loop SECONDS`` as a process of its own."""

    def __init__(self, services: ServiceEnv, every: float = 1.0) -> None:
        self.log = output_log("chaos-relay", free_port())
        argv = [sys.executable, "manage.py", "relay_outbox", "--loop", str(every)]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                argv, cwd=ROOT, env=services.environment(), stdout=out, stderr=out
            )

    def stop(self) -> None:
        stop_process(self.process)


def logs_of(paths: list[Path]) -> str:
    """The named logs' paths, for a failure message."""
    return ", ".join(str(p.relative_to(ROOT)) for p in paths)
