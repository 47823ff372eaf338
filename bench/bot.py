#!/usr/bin/env python
"""Examiner bot benchmark: start-up time, memory per bot, and text-mode concurrency.

Prints:

1. time from ``bot_start`` (the service the exam room calls) to ``bot_ready`` stored, for the
   inline runner (an asyncio task in this process) and, with ``REDIS_URL`` and
   ``DATABASE_URL``, for the Celery runner (a real worker on the ``bots`` queue, solo pool:
   the first start is cold, the next ones warm);
2. memory: RSS of a Celery bot process before and while it runs a bot, and the RSS growth of
   this process per concurrent inline bot;
3. how many concurrent text-mode sessions this machine sustains with the offline examiner while
   every candidate turn is answered within ``--turn-limit`` (1 s): the load ramps up (1, 2, 4,
   8... sessions, each a whole exam of typed answers through the real pipeline, channel layer
   and event store) until a turn takes longer or ``--budget`` seconds are spent. The answer
   time is from the typed answer being sent to the examiner's next utterance being stored.
   Candidates answer back to back (the worst case) unless ``--think`` gives them time.
4. the Celery deployment shape (with ``DATABASE_URL`` and ``REDIS_URL``): real worker
   processes host ``--sessions`` exams whose candidates answer ``--celery-think`` seconds after
   each reply, twice: with starts staggered over one think time (answers arrive steadily, as in
   a sitting where everyone goes at their own pace) and all in step (everyone answers at the
   same instant every round: a burst of ``--sessions`` answers); memory per additional session.
   First on one worker process (the baseline: one process's interpreter, one core), then on
   ``--workers`` processes (default one per core, as Celery's own default concurrency; a start
   goes to whichever worker takes it, nothing configured beyond the broker URL); then the
   back-to-back maximum of one worker. Every candidate frame goes the exam room's way: stored
   in the durable inbox, then forwarded. ``--celery-only`` skips parts 1-3's ramp.
5. the largest number of voice sessions one worker process holds with end of speech -> first
   examiner audio p95 < 1.5 s: ``bench/voice.py --only capacity`` run as a process of its own
   (speech pipelines on one event loop, as ``bot.hosting`` hosts them, against speech peers
   speaking Deepgram's and OpenAI's protocols on 127.0.0.1), its figures printed here.
   ``--no-voice`` skips it.

Everything is local: the offline examiner on 127.0.0.1, the in-memory channel layer (or Redis
on ``REDIS_URL``), a throw-away database (SQLite file, or ``test_<name>_botbench`` on Postgres).

Usage: ``python bench/bot.py [--max-sessions 64] [--budget 120]``
(``DATABASE_URL=postgres://... REDIS_URL=redis://...`` for the Celery figures).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def rss_kib(pid: int | None = None) -> int:
    """Resident set size of a process (this one by default), in KiB."""
    with open(f"/proc/{pid or 'self'}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fmt_ms(values: Sequence[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"median {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
        f"max {ordered[-1] * 1000:.0f} ms (n={len(ordered)})"
    )


# --- setup ---------------------------------------------------------------------------------------


def setup_django(tmp: Path) -> str:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("VIVA_LLM_PROVIDER", "offline")
    os.environ.setdefault("VIVA_OFFLINE_EXAMINER_ALLOWED", "true")
    os.environ.setdefault("VIVA_PIPECAT_LOG_LEVEL", "ERROR")
    os.environ.setdefault("VIVA_LOG_LEVEL", "WARNING")
    if not os.environ.get("DATABASE_URL"):
        os.environ["VIVA_SQLITE_PATH"] = str(tmp / "botbench.sqlite3")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    if connection.vendor == "sqlite":
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        return str(settings.DATABASES["default"]["NAME"])
    db = settings.DATABASES["default"]
    db.setdefault("TEST", {})["NAME"] = f"test_{db['NAME']}_botbench"
    return str(connection.creation.create_test_db(verbosity=0, autoclobber=True))


def publish() -> Any:
    import json

    from accounts.models import User
    from authoring.models import DraftPackage
    from publishing.services import version_publish

    author = User.objects.create(username=f"bench-{uuid.uuid4().hex[:8]}", role="author")
    document = json.loads((ROOT / "examples" / "cs201-graph-algorithms.json").read_text())
    draft = DraftPackage.objects.create(owner=author, title="bench", document=document)
    return version_publish(draft=draft, user=author).version


def new_sessions(version: Any, count: int) -> list[uuid.UUID]:
    from accounts.models import User
    from sessions.models import ExamSession, Sitting

    sitting = Sitting.objects.create(
        version=version, title="bench", created_by=version.published_by
    )
    out = []
    for _ in range(count):
        candidate = User.objects.create(username=f"cand-{uuid.uuid4().hex[:10]}", role="candidate")
        out.append(ExamSession.objects.create(sitting=sitting, candidate=candidate).pk)
    return out


# --- 1. start-up ---------------------------------------------------------------------------------


async def wait_ready(session_id: uuid.UUID, timeout: float = 120) -> float:
    from asgiref.sync import sync_to_async

    from sessions.models import SessionEvent

    exists = sync_to_async(
        lambda: SessionEvent.objects.filter(session_id=session_id, type="bot_ready").exists()
    )
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if await exists():
            return time.perf_counter()
        await asyncio.sleep(0.005)
    raise TimeoutError(f"no bot_ready for {session_id}")


async def stop_bot(session_id: uuid.UUID) -> None:
    from asgiref.sync import sync_to_async

    from bot.models import BotLease
    from sessions.bot_channel import send_to_bot

    await send_to_bot(session_id, "stop")
    state = sync_to_async(
        lambda: BotLease.objects.filter(pk=session_id).values_list("state", flat=True).first()
    )
    for _ in range(2000):
        if await state() not in ("running", "starting"):
            return
        await asyncio.sleep(0.01)


async def startup_inline(version: Any, samples: int) -> list[float]:
    from asgiref.sync import sync_to_async

    from bot.runners import inline_task
    from bot.services import bot_start

    times = []
    for session_id in await sync_to_async(new_sessions)(version, samples):
        started = time.perf_counter()
        await sync_to_async(lambda s=session_id: bot_start(session=s))()
        times.append(await wait_ready(session_id) - started)
        await stop_bot(session_id)
        task = inline_task(session_id)
        if task is not None:
            await asyncio.wait_for(task, 30)
    return times


def startup_celery(version: Any, samples: int) -> tuple[list[float], int, int]:
    """Start-up times through a real Celery worker, and its RSS idle / running a bot (KiB)."""
    from asgiref.sync import async_to_sync
    from django.conf import settings

    from bot.services import bot_start
    from config.celery import app

    db = settings.DATABASES["default"]
    env = worker_environment(db)
    name = f"botbench-{os.getpid()}@localhost"
    worker = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "-Q",
            "bots,default,marking",
            "-n",
            name,
            "--without-gossip",
            "--without-mingle",
            "--loglevel=ERROR",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not app.control.inspect(destination=[name], timeout=0.5).ping():
            if time.monotonic() > deadline or worker.poll() is not None:
                raise RuntimeError("the Celery worker did not start")
        idle = rss_kib(worker.pid)
        times: list[float] = []
        running = 0
        for session_id in new_sessions(version, samples):
            started = time.perf_counter()
            bot_start(session=session_id)
            times.append(async_to_sync(wait_ready)(session_id) - started)
            time.sleep(0.5)
            running = max(running, rss_kib(worker.pid))
            async_to_sync(stop_bot)(session_id)
        return times, idle, running
    finally:
        from django.db import connections

        connections.close_all()  # this thread's (a sync_to_async worker thread)
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()


# --- 3. concurrency ------------------------------------------------------------------------------


class Exams:
    """The stored events of many sessions, routed by session (``BotOptions.on_stored``)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.events: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        self.changed: dict[str, asyncio.Event] = defaultdict(asyncio.Event)

    def __call__(self, batch: Sequence[Mapping[str, Any]]) -> None:
        self.loop.call_soon_threadsafe(self._add, list(batch))

    def _add(self, batch: list[Mapping[str, Any]]) -> None:
        for event in batch:
            key = str(event["sessionId"])
            self.events[key].append(event)
            self.changed[key].set()

    async def until(self, key: str, predicate: Any, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(self.events[key]):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"session {key} stalled:\n{await stall_report(key, self.events[key])}"
                )
            self.changed[key].clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed[key].wait(), remaining)


async def stall_report(key: str, events: Sequence[Mapping[str, Any]]) -> str:
    """What a stalled session's log ends with and what waits in its inbox (a diagnosis)."""
    from asgiref.sync import sync_to_async

    from sessions.models import CandidateInput

    def inbox() -> list[tuple[str, str, bool]]:
        rows = CandidateInput.objects.filter(session_id=key).order_by("id")
        return [(r.input_id[:8], r.kind, r.processed_at is not None) for r in rows]

    tail = "\n".join(f"  {e['type']} {str(e.get('payload'))[:140]}" for e in events[-12:])
    return f"{tail}\n  inbox (id, kind, processed): {await sync_to_async(inbox)()}"


def examiner_turns(events: Sequence[Mapping[str, Any]]) -> int:
    return sum(
        1
        for e in events
        if e["type"] == "examiner_utterance_final" and e["payload"]["purpose"] != "bridge"
    )


def node_of(events: Sequence[Mapping[str, Any]]) -> str:
    return [e["payload"]["nodeId"] for e in events if e["type"] == "node_entered"][-1]


async def candidate(
    session_id: uuid.UUID,
    exams: Exams,
    latencies: list[float],
    think: float = 0.0,
    offset: float = 0.0,
) -> None:
    """One candidate taking the whole exam: ready after ``offset`` seconds, then each answer
    ``think`` seconds after the examiner's turn; appends each reply time to ``latencies``.
    Every frame goes the exam room's way: stored in the durable inbox with its id, then
    forwarded to the bot (``sessions.inbox.receive_frame``)."""
    from sessions.inbox import receive_frame
    from tests.support.candidate_answers import ANSWERS

    key = str(session_id)
    await exams.until(key, lambda ev: any(e["type"] == "bot_ready" for e in ev))
    await asyncio.sleep(offset)
    await receive_frame(session_id, {"kind": "candidate_ready", "id": uuid.uuid4().hex})
    await exams.until(key, lambda ev: examiner_turns(ev) >= 1)
    used: dict[str, int] = {}
    for _ in range(30):
        events = exams.events[key]
        if any(e["type"] == "exam_completed" for e in events):
            return
        node = node_of(events)
        options = ANSWERS[node]
        text = options[min(used.get(node, 0), len(options) - 1)]
        used[node] = used.get(node, 0) + 1
        before = examiner_turns(events)
        if think:
            await asyncio.sleep(think)
        sent = time.perf_counter()
        await receive_frame(session_id, {"kind": "answer", "text": text, "id": uuid.uuid4().hex})
        await exams.until(
            key,
            lambda ev, b=before: (
                examiner_turns(ev) > b or any(e["type"] == "exam_completed" for e in ev)
            ),
        )
        latencies.append(time.perf_counter() - sent)


async def level(version: Any, count: int, think: float = 0.0) -> tuple[list[float], float, int]:
    """Run ``count`` concurrent whole exams; returns the turn latencies, the wall time, and
    this process's RSS growth (KiB)."""
    from asgiref.sync import sync_to_async

    from bot.runners import run_bot
    from bot.session_runner import BotOptions

    sessions = await sync_to_async(new_sessions)(version, count)
    exams = Exams(asyncio.get_running_loop())
    latencies: list[float] = []
    before = rss_kib()
    started = time.perf_counter()
    bots = [
        asyncio.create_task(run_bot(s, runner="inline", options=BotOptions(on_stored=exams)))
        for s in sessions
    ]
    peak = before
    drivers = asyncio.gather(*(candidate(s, exams, latencies, think) for s in sessions))
    while not drivers.done():
        peak = max(peak, rss_kib())
        await asyncio.wait({drivers}, timeout=0.25)
    drivers.result()
    await asyncio.wait_for(asyncio.gather(*bots), 120)
    return latencies, time.perf_counter() - started, peak - before


async def ramp(
    version: Any, limit: float, max_sessions: int, budget: float, think: float = 0.0
) -> None:
    deadline = time.monotonic() + budget
    sustained = 0
    count = 1
    while count <= max_sessions and time.monotonic() < deadline:
        try:
            latencies, wall, grown = await asyncio.wait_for(
                level(version, count, think), max(10.0, deadline - time.monotonic() + 60)
            )
        except (TimeoutError, Exception) as exc:
            print(f"  {count:>4} sessions: failed ({type(exc).__name__}: {exc})")
            break
        worst = max(latencies)
        ok = worst <= limit
        print(
            f"  {count:>4} sessions: {len(latencies)} turns in {wall:.1f} s; answer time "
            f"{fmt_ms(latencies)}; +{grown / 1024:.0f} MiB RSS ({grown / 1024 / count:.1f} MiB "
            f"per bot) {'ok' if ok else 'TOO SLOW'}"
        )
        if not ok:
            break
        sustained = count
        count *= 2
    print(
        f"sustained: {sustained} concurrent text-mode sessions with every turn answered within "
        f"{limit:.1f} s, {think:g} s thinking before each answer (offline examiner, this "
        f"machine, {os.cpu_count()} CPUs)"
    )


# --- 4. the Celery deployment shape ----------------------------------------------------------


def worker_environment(db: Mapping[str, Any]) -> dict[str, str]:
    """A bench worker's environment: this database, no supervisor, and as deployed (``DEBUG``
    off: Django then keeps no log of every query the worker runs)."""
    env = dict(os.environ)
    env["DATABASE_URL"] = (
        f"postgres://{db.get('USER') or 'postgres'}"
        f"{':' + db['PASSWORD'] if db.get('PASSWORD') else ''}@"
        f"{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"
    )
    env["VIVA_BOT_SUPERVISOR_SECONDS"] = "0"
    env["DJANGO_DEBUG"] = "false"
    env.setdefault("DJANGO_SECRET_KEY", uuid.uuid4().hex * 2)
    return env


def start_worker(
    name: str, queues: str = "bots,default,marking", **extra: str
) -> subprocess.Popen[bytes]:
    """A real Celery worker on the bench database (threads pool; bots hosted by ``bot.hosting``)
    consuming ``queues``."""
    from django.conf import settings

    from config.celery import app

    db = settings.DATABASES["default"]
    env = worker_environment(db)
    env.update(extra)
    path = os.environ.get("BENCH_WORKER_LOG")  # the worker's output, when asked for
    log = open(path, "ab") if path else subprocess.DEVNULL  # noqa: SIM115 - the worker's
    worker = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "config",
            "worker",
            "--pool=threads",
            "--concurrency=2",
            "-Q",
            queues,
            "-n",
            name,
            "--without-gossip",
            "--without-mingle",
            "--loglevel=WARNING",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 90
    while not app.control.inspect(destination=[name], timeout=0.5).ping():
        if time.monotonic() > deadline or worker.poll() is not None:
            raise RuntimeError("the Celery worker did not start")
    return worker


async def poll_store(exams: Exams, sessions: Sequence[uuid.UUID], stop: asyncio.Event) -> None:
    """Feed ``exams`` from the store (every 20 ms: one query for the heads, one for what is new),
    as the bots run in another process."""
    from asgiref.sync import sync_to_async

    from sessions.models import ExamSession, SessionEvent

    seen = {s: 0 for s in sessions}

    def fetch() -> list[Mapping[str, Any]]:
        heads = dict(ExamSession.objects.filter(pk__in=sessions).values_list("pk", "last_seq"))
        moved = [s for s, head in heads.items() if head > seen[s]]
        if not moved:
            return []
        rows = list(
            SessionEvent.objects.filter(session_id__in=moved)
            .exclude(seq__lte=0)
            .filter(seq__gt=0)
            .values("session_id", "seq", "type", "payload")
            .order_by("session_id", "seq")
        )
        out = []
        for row in rows:
            if row["seq"] > seen[row["session_id"]]:
                seen[row["session_id"]] = row["seq"]
                out.append({"sessionId": str(row["session_id"]), **row})
        return out

    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-poll")
    try:
        while not stop.is_set():
            batch = await sync_to_async(fetch, thread_sensitive=False, executor=executor)()
            if batch:
                exams._add(batch)
            await asyncio.sleep(0.02)
    finally:
        await sync_to_async(connections.close_all, thread_sensitive=False, executor=executor)()
        executor.shutdown()


def resident_kib(pids: Sequence[int]) -> int:
    """The processes' resident set sizes, summed (KiB)."""
    return sum(rss_kib(pid) for pid in pids)


async def celery_level(
    version: Any, count: int, think: float, worker_pids: Sequence[int], *, stagger: bool = False
) -> tuple[list[float], float, int]:
    """``count`` concurrent whole exams on the Celery workers; the turn latencies, the wall
    time and the workers' peak RSS (KiB, summed). ``stagger``: the candidates start spread
    evenly over one think time (as candidates of a sitting do: each at their own pace), so
    answers arrive steadily; otherwise all start at once and, thinking alike, answer in step: a
    burst of ``count`` answers every round."""
    from asgiref.sync import sync_to_async

    from bot.services import bot_start

    sessions = await sync_to_async(new_sessions)(version, count)
    exams = Exams(asyncio.get_running_loop())
    stop = asyncio.Event()
    poller = asyncio.create_task(poll_store(exams, sessions, stop))
    latencies: list[float] = []
    started = time.perf_counter()
    for session_id in sessions:
        await sync_to_async(bot_start)(session=session_id)
    peak = resident_kib(worker_pids)
    spread = think / count if stagger else 0.0
    drivers = asyncio.gather(
        *(candidate(s, exams, latencies, think, i * spread) for i, s in enumerate(sessions))
    )
    try:
        while not drivers.done():
            peak = max(peak, resident_kib(worker_pids))
            await asyncio.wait({drivers}, timeout=0.5)
        drivers.result()
    finally:
        stop.set()
        await poller
    return latencies, time.perf_counter() - started, peak


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0


async def celery_shape(version: Any, args: argparse.Namespace) -> None:
    """Text sessions through real workers: ``--sessions`` at ``--celery-think`` seconds on one
    worker process (the baseline) and on ``--workers`` (one per core), memory per additional
    session, and the back-to-back maximum of one worker with p95 within the turn limit."""
    for count in sorted({1, args.workers}):
        print(f"   {count} worker process{'es' if count > 1 else ''} on {os.cpu_count()} cores:")
        await celery_workers(version, args, count, back_to_back=count == 1)


async def celery_workers(
    version: Any, args: argparse.Namespace, count: int, *, back_to_back: bool
) -> None:
    """Section 4's figures on ``count`` worker processes (each ``--pool=threads``, its bots
    hosted on one event loop; a start goes to whichever worker takes it)."""
    from asgiref.sync import sync_to_async

    capacity = str(max(args.sessions, args.max_sessions) + 10)
    launch = sync_to_async(start_worker, thread_sensitive=False)
    workers = [
        await launch(
            f"botbench-host-{os.getpid()}-{index}@localhost",
            "bots,default",
            VIVA_BOT_CAPACITY=capacity,
        )
        for index in range(count)
    ]
    pids = [w.pid for w in workers]
    # Marking (each finished exam is marked at once) runs on a worker of its own, as deployed:
    # it shares the machine's cores, not the bot workers' interpreters.
    workers.append(await launch(f"botbench-marking-{os.getpid()}-{count}@localhost", "marking"))
    try:
        idle = resident_kib(pids)
        one, _, one_rss = await celery_level(version, 1, args.celery_think, pids)
        print(f"     workers idle {idle / 1024:.0f} MiB; 1 session: {fmt_ms(one)}")
        for stagger, how in ((True, "staggered starts"), (False, "all in step (bursts)")):
            many, wall, many_rss = await celery_level(
                version, args.sessions, args.celery_think, pids, stagger=stagger
            )
            per = (many_rss - one_rss) / 1024 / max(1, args.sessions - 1)
            verdict = "ok" if p95(many) < args.turn_limit and per < 20 else "MISSED"
            print(
                f"     {args.sessions} sessions, {args.celery_think:g} s thinking, {how}: "
                f"{len(many)} turns in {wall:.1f} s; {fmt_ms(many)}; workers "
                f"{many_rss / 1024:.0f} MiB ({per:.1f} MiB per additional session) {verdict} "
                f"(load {os.getloadavg()[0]:.2f})"
            )
        if back_to_back:
            await back_to_back_maximum(version, args, pids)
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()


async def back_to_back_maximum(version: Any, args: argparse.Namespace, pids: Sequence[int]) -> None:
    """Double the back-to-back sessions until the reply p95 leaves the turn limit."""
    sustained = 0
    count = 1
    while count <= args.max_sessions:
        latencies, _, _ = await celery_level(version, count, 0.0, pids)
        ok = p95(latencies) <= args.turn_limit
        print(
            f"     back to back, {count:>3} sessions: {fmt_ms(latencies)} "
            f"{'ok' if ok else 'TOO SLOW'} (load {os.getloadavg()[0]:.2f})"
        )
        if not ok:
            break
        sustained = count
        count *= 2
    print(f"     back-to-back maximum on one worker: {sustained} sessions (p95 within limit)")


async def close_connections() -> None:
    """Close the connections of the bots' database threads and of ``sync_to_async``'s."""
    from asgiref.sync import sync_to_async
    from django.db import connections

    from bot.journal import db_threads

    await db_threads().close_all()
    await sync_to_async(lambda: connections.close_all())()


async def run_all(args: argparse.Namespace, database: str) -> None:
    """Every part in one event loop, as in a server process (one channel layer, one loop)."""
    from asgiref.sync import sync_to_async
    from django.conf import settings
    from django.db import connection

    try:
        version = await sync_to_async(publish)()
        layer = "redis" if settings.REDIS_URL else "in-memory"
        print(f"bot benchmark on {database} ({connection.vendor}, {layer} channel layer)")

        settings.VIVA_BOT_RUNNER = "inline"
        print("1. bot_start -> bot_ready, inline runner:")
        times = await startup_inline(version, args.samples)
        print(f"   first {times[0] * 1000:.0f} ms; {fmt_ms(times[1:] or times)}")

        if settings.REDIS_URL and connection.vendor == "postgresql" and not args.celery_only:
            settings.VIVA_BOT_RUNNER = "celery"
            celery_times, idle, running = await sync_to_async(
                startup_celery, thread_sensitive=False
            )(version, args.samples)
            print("   Celery runner (solo worker, bots queue):")
            print(
                f"   first (cold worker) {celery_times[0] * 1000:.0f} ms; warm "
                f"{fmt_ms(celery_times[1:] or celery_times)}"
            )
            print(
                "2. memory: Celery worker process idle "
                f"{idle / 1024:.0f} MiB, running a bot {running / 1024:.0f} MiB"
            )
            settings.VIVA_BOT_RUNNER = "inline"
        else:
            print("   Celery runner: skipped (needs DATABASE_URL=postgres://... and REDIS_URL)")
            print("2. memory (this process):")
        print(f"   this process after the start-up runs: {rss_kib() / 1024:.0f} MiB RSS")

        if not args.celery_only:
            print(
                f"3. baseline: concurrent text-mode sessions in this process (inline, offline "
                f"examiner, turns <= {args.turn_limit:.1f} s):"
            )
            await ramp(version, args.turn_limit, args.max_sessions, args.budget, args.think)
        if settings.REDIS_URL and connection.vendor == "postgresql":
            settings.VIVA_BOT_RUNNER = "celery"
            print(
                f"4. the Celery deployment shape (bots hosted on one loop per worker process; "
                f"reply p95 target < {args.turn_limit:.1f} s):"
            )
            await celery_shape(version, args)
            settings.VIVA_BOT_RUNNER = "inline"
    finally:
        await close_connections()


def drop_database(name: str) -> None:
    """Drop the throw-away database even if a killed worker's connections linger."""
    from django.db import connection

    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=5, help="start-up samples per runner")
    parser.add_argument("--max-sessions", type=int, default=64)
    parser.add_argument("--budget", type=float, default=120.0, help="seconds for the ramp")
    parser.add_argument("--turn-limit", type=float, default=1.0)
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds each candidate waits before answering (0: back to back, the worst case)",
    )
    parser.add_argument("--sessions", type=int, default=100, help="Celery-shape sessions")
    parser.add_argument("--celery-think", type=float, default=5.0)
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes for the second Celery-shape run (default: one per core)",
    )
    parser.add_argument(
        "--celery-only", action="store_true", help="skip the in-process baseline ramp"
    )
    parser.add_argument("--no-voice", action="store_true", help="skip part 5 (voice capacity)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        database = setup_django(Path(tmp))
        from django.db import connection

        try:
            asyncio.run(run_all(args, database))
        finally:
            if connection.vendor == "postgresql":
                from django.db import connections

                connections.close_all()
                drop_database(database)
    if not args.no_voice:
        voice_capacity()
    return 0


def voice_capacity() -> None:
    """Part 5: ``bench/voice.py --only capacity`` in a process of its own (one worker process's
    loop), its report indented here."""
    print(
        "5. voice sessions one worker process holds (bench/voice.py --only capacity, a process "
        "of its own):",
        flush=True,
    )
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "voice.py"), "--only", "capacity"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    for line in run.stdout.splitlines():
        print(f"   {line}")
    if run.returncode != 0:
        print(f"   voice capacity failed (exit {run.returncode}): {run.stderr[-1000:]}")


if __name__ == "__main__":
    sys.exit(main())
