"""The chaos run of issue #33, shared by ``tests/bot/test_chaos.py`` and ``bench/chaos.py``.

``run(options)`` publishes the example exam, places it in a course of a real LTI platform (a
process of its own) and lets ``options.exams`` candidates launch it from there; registers a
webhook endpoint on a real receiver; starts a Redis of its own, the web process (daphne), two
Celery workers and the outbox relay (tests/support/chaos_faults.py). The candidates take their
text exams over HTTP and the room's WebSocket (offline examiner) while the seeded fault schedule
stops and restarts Redis, kills workers with SIGKILL and SIGTERM and restarts the web process;
the author locks each exam's marks through the API as soon as they exist. Once everything has
settled, :mod:`tests.support.chaos_report` reads the store, the platform's gradebook and the
receiver's log and checks the invariants. Call it from a thread with database access to a
database the child processes can see (committed writes: ``django_db(transaction=True)``)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

import httpx

from tests.support.chaos_candidates import EventFeed, Exam, take_exam
from tests.support.chaos_cluster import RedisServer, ServiceEnv
from tests.support.chaos_faults import Cluster, Fault, Injected, fault_schedule
from tests.support.chaos_report import Report, report
from tests.support.chaos_setup import Setup, prepare
from tests.support.webhook_receiver import webhook_receiver

CHILD_SETTINGS = {
    "VIVA_BOT_RUNNER": "celery",
    "VIVA_LLM_PROVIDER": "offline",
    "VIVA_OFFLINE_EXAMINER_ALLOWED": "true",
    "VIVA_BOT_LEASE_SECONDS": "5",
    "VIVA_BOT_HEARTBEAT_SECONDS": "1",
    "VIVA_BOT_SUPERVISOR_SECONDS": "1",
    "VIVA_BOT_START_GRACE_SECONDS": "15",
    "VIVA_BOT_CAPACITY": "100",
    "VIVA_PIPECAT_LOG_LEVEL": "WARNING",
    "VIVA_OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8",
    "VIVA_WEBHOOK_RETRY_BASE_SECONDS": "1",
    "VIVA_WEBHOOK_RETRY_MAX_SECONDS": "5",
    "VIVA_WEBHOOK_RESEND_GRACE_SECONDS": "15",
}
"""The settings of the web process, the workers and the relay. Shorter than the defaults where
the defaults are minutes (a start lost with Redis' keys waits ``VIVA_BOT_START_GRACE_SECONDS``,
120 s by default; a webhook delivery whose task was lost ``VIVA_WEBHOOK_RESEND_GRACE_SECONDS``,
120 s; a refused webhook 30 s) so that a run takes minutes, not hours."""


@dataclass(frozen=True)
class ChaosOptions:
    """What to run: exams, worker processes, the seed of the schedule and the pace."""

    exams: int = 50
    workers: int = 2
    seed: int = 33
    faults: int = 6
    think: float = 1.5
    """Seconds a candidate thinks before each answer (±50 %)."""
    stagger: float = 15.0
    """Candidates enter over this many seconds from the start."""
    chaos_start: float = 20.0
    chaos_end: float = 75.0
    exam_limit: float = 150.0
    """Seconds one exam may take before it counts as lost."""
    settle_limit: float = 60.0
    """Seconds the side effects may take after the last exam ended."""


@dataclass
class Timeline:
    """Monotonic time of the run's start, faults as they happened, when locks were done."""

    began: float = field(default_factory=time.monotonic)
    injected: list[Injected] = field(default_factory=list)
    locked: dict[str, float] = field(default_factory=dict)
    exams_done: float | None = None

    def now(self) -> float:
        return time.monotonic() - self.began


def run(options: ChaosOptions) -> Report:
    """The whole run; returns its figures and the invariants that failed."""
    schedule = fault_schedule(
        options.seed,
        start=options.chaos_start,
        end=options.chaos_end,
        count=options.faults,
        workers=options.workers,
    )
    with ExitStack() as stack:
        receiver = stack.enter_context(webhook_receiver())
        setup = prepare(options.exams, receiver.url, stack)
        redis = RedisServer()
        redis.start()
        cluster = Cluster(ServiceEnv(redis.url, dict(CHILD_SETTINGS)), redis, options.workers)
        stack.callback(redis.stop)
        with running(cluster):
            began = time.monotonic()
            timeline = asyncio.run(drive(options, setup, cluster, schedule))
            wall = time.monotonic() - began
        return report(setup, receiver, schedule, timeline, wall)


@contextmanager
def running(cluster: Cluster) -> Iterator[Cluster]:
    """The cluster's processes, stopped whatever happens."""
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


async def drive(
    options: ChaosOptions, setup: Setup, cluster: Cluster, schedule: list[Fault]
) -> Timeline:
    """Candidates, faults and locks at once; then wait until the side effects have settled."""
    timeline = Timeline()
    feed = EventFeed([e.session_id for e in setup.exams])
    polling = asyncio.create_task(feed.run())
    rng = random.Random(options.seed)
    candidates = [
        asyncio.create_task(entering(exam, options, cluster, feed, rng, index))
        for index, exam in enumerate(setup.exams)
    ]
    faults = asyncio.create_task(inject(schedule, cluster, timeline))
    locking = asyncio.create_task(lock_marks(setup, cluster, timeline, feed))
    try:
        await asyncio.gather(*candidates)
        timeline.exams_done = timeline.now()
        await faults
        with contextlib.suppress(TimeoutError):  # what was not locked is in the report
            await asyncio.wait_for(locking, options.settle_limit)
        await settle(feed, options.settle_limit)
    finally:
        for task in (faults, locking):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        feed.stop.set()
        await polling
    return timeline


async def entering(
    exam: Exam,
    options: ChaosOptions,
    cluster: Cluster,
    feed: EventFeed,
    rng: random.Random,
    index: int,
) -> None:
    """Candidate ``index`` enters at their point of the stagger and takes the exam."""
    await asyncio.sleep(options.stagger * index / max(1, options.exams))
    own = random.Random(rng.random())
    await take_exam(exam, cluster.web.address, feed, own, options.think, options.exam_limit)


async def inject(schedule: list[Fault], cluster: Cluster, timeline: Timeline) -> None:
    """Apply each fault at its time, each in a thread of its own (candidates go on, and a slow
    web restart does not delay the next fault); faults of one kind never overlap."""
    kinds = {kind: asyncio.Lock() for kind in {f.kind for f in schedule}}

    async def one(fault: Fault) -> None:
        await asyncio.sleep(max(0.0, fault.at - timeline.now()))
        async with kinds[fault.kind]:
            began = timeline.now()
            detail = await asyncio.to_thread(cluster.apply, fault)
            timeline.injected.append(Injected(fault, began, timeline.now(), detail))

    await asyncio.gather(*(one(fault) for fault in schedule))
    timeline.injected.sort(key=lambda done: done.began)


async def lock_marks(setup: Setup, cluster: Cluster, timeline: Timeline, feed: EventFeed) -> None:
    """As the author: lock each exam's marks through the API once they exist, until every
    completed exam's marks are locked (a refused or dropped request is tried again)."""
    from marking.models import SessionMark
    from sessions.models import SessionEvent

    keys = {e.key for e in setup.exams}

    def marked() -> set[str]:
        rows = SessionMark.objects.filter(session_id__in=keys).values_list("session_id", flat=True)
        return {str(k) for k in rows}

    def ended() -> set[str]:
        rows = SessionEvent.objects.filter(session_id__in=keys, type="exam_completed")
        return {str(k) for k in rows.values_list("session_id", flat=True)}

    headers = {"Authorization": f"Token {setup.token}"}
    async with httpx.AsyncClient(headers=headers, timeout=10) as client:
        while True:
            for key in sorted(await feed.query(marked) - set(timeline.locked)):
                if await lock_one(client, cluster.web.address, key):
                    timeline.locked[key] = timeline.now()
            if timeline.exams_done is not None and await feed.query(ended) <= set(timeline.locked):
                return
            await asyncio.sleep(1.0)


async def lock_one(client: httpx.AsyncClient, address: str, key: str) -> bool:
    """One lock request; True once locked (now, or already by an earlier request whose answer
    was lost)."""
    url = f"http://{address}/api/v1/marking/sessions/{key}/lock/"
    try:
        response = await client.post(url, json={"note": "chaos run"})
    except httpx.HTTPError:
        return False
    if response.status_code == 200:
        return True
    return response.status_code == 409 and "already" in response.text


async def settle(feed: EventFeed, limit: float) -> None:
    """Wait until no outbox message and no webhook delivery is pending (or ``limit`` passes),
    then 3 s more for anything sent twice to arrive."""
    from sessions.models import OutboxMessage
    from webhooks.models import WebhookDelivery

    def pending() -> int:
        return (
            OutboxMessage.objects.filter(status="pending").count()
            + WebhookDelivery.objects.filter(status="pending").count()
        )

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and await feed.query(pending):
        await asyncio.sleep(0.5)
    await asyncio.sleep(3.0)
