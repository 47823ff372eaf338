"""The faults of a chaos run (issue #33) and the cluster they are injected into.

:func:`fault_schedule` draws a reproducible schedule from a seed: every kind at least once
(a Redis stop and restart, a worker killed with SIGKILL, a worker drained with SIGTERM, the web
process restarted), then more of any kind, at random times spread over the chaos window.
:class:`Cluster` runs the processes (tests/support/chaos_cluster.py) and applies a fault as an
operator's supervisor would see it: a dead or drained worker is replaced at once by a new one,
the web process and Redis come back on their ports."""

from __future__ import annotations

import random
import signal
import threading
import time
from dataclasses import dataclass, field

from tests.support.chaos_cluster import RedisServer, Relay, ServiceEnv, WebProcess, Worker

KINDS = ("redis_restart", "worker_sigkill", "worker_sigterm", "web_restart")


@dataclass(frozen=True)
class Fault:
    """One planned fault: ``at`` seconds after the run's start, on worker slot ``target``
    (worker faults) or for ``outage`` seconds (Redis down)."""

    at: float
    kind: str
    target: int = 0
    outage: float = 0.0

    def describe(self) -> str:
        if self.kind == "redis_restart":
            return f"redis down {self.outage:.1f} s"
        if self.kind.startswith("worker"):
            return f"{self.kind} worker slot {self.target}"
        return self.kind


def fault_schedule(seed: int, *, start: float, end: float, count: int, workers: int) -> list[Fault]:
    """``count`` (at least 4) faults between ``start`` and ``end`` seconds, one per equal slot
    of the window at a random point in its middle half, kinds shuffled (each at least once)."""
    rng = random.Random(seed)
    count = max(count, len(KINDS))
    kinds = list(KINDS) + [rng.choice(KINDS) for _ in range(count - len(KINDS))]
    rng.shuffle(kinds)
    slot = (end - start) / count
    faults = []
    for index, kind in enumerate(kinds):
        at = start + slot * index + slot * rng.uniform(0.25, 0.75)
        faults.append(
            Fault(
                at=round(at, 1),
                kind=kind,
                target=rng.randrange(workers),
                outage=round(rng.uniform(2.0, 5.0), 1) if kind == "redis_restart" else 0.0,
            )
        )
    return faults


@dataclass
class Injected:
    """A fault as it happened: seconds after the start, and how long until back."""

    fault: Fault
    began: float
    back: float
    detail: str = ""


@dataclass
class Cluster:
    """Redis, the web process, the workers (one per slot) and the relay of one run."""

    services: ServiceEnv
    redis: RedisServer
    workers: int
    web: WebProcess = field(init=False)
    slots: list[Worker] = field(init=False, default_factory=list)
    retired: list[Worker] = field(init=False, default_factory=list)
    relay: Relay | None = field(init=False, default=None)
    started: int = field(init=False, default=0)
    lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def start(self) -> None:
        """Start the web process, the workers and the relay (Redis runs already)."""
        self.web = WebProcess(self.services)
        self.slots = [self._new_worker() for _ in range(self.workers)]
        self.relay = Relay(self.services)
        self.web.start()

    def _new_worker(self) -> Worker:
        self.started += 1
        return Worker(self.services, self.started)

    def apply(self, fault: Fault) -> str:
        """Carry ``fault`` out (blocking until the faulty part is back or replaced)."""
        if fault.kind == "redis_restart":
            self.redis.stop()
            time.sleep(fault.outage)
            self.redis.start()
            return f"redis-server stopped, started again after {fault.outage:.1f} s"
        if fault.kind == "web_restart":
            self.web.stop()
            self.web.start()
            return "daphne stopped (SIGTERM) and started again on its port"
        number = signal.SIGKILL if fault.kind == "worker_sigkill" else signal.SIGTERM
        with self.lock:
            old = self.slots[fault.target]
            old.signal(number)
            self.retired.append(old)
            self.slots[fault.target] = self._new_worker()
        return f"{number.name} to {old.name} (pid {old.process.pid}); a new worker started"

    def close(self) -> None:
        """Stop everything this run started (the Redis server last)."""
        if self.relay is not None:
            self.relay.stop()
        for worker in self.slots + self.retired:
            worker.stop()
        self.web.stop()
        self.redis.stop()
