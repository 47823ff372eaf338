#!/usr/bin/env python
"""Proctor dashboard benchmark: how many concurrently active sessions one overview socket can
follow with event-to-screen p99 under 250 ms (issue #16: 500 live sessions).

Needs Postgres (``DATABASE_URL``) and Redis (``REDIS_URL``). Runs on a throw-away database
(``test_<name>_dashbench``, created with migrations and dropped at the end), a real daphne
server (``tests/support/processes.py``) and real WebSocket clients in a separate, Django-free
process, like bench/events.py.

Workload: one sitting, N sessions, all in progress. Every session is active: every
``--interval`` seconds (staggered) it appends one batch through the event store as a running
exam does after a candidate turn — ``transcript_final``, ``evidence_signal``,
``examiner_utterance_final`` and every third turn a ``follow_up_used`` — so each step changes
the session's overview row. ``--writers`` threads append, paced on a schedule.

Measured: from just before the append call (so the append and commit count) to the arrival, on
the proctor's single overview socket (``ws/proctor/sittings/<id>/``), of the first ``rows``
frame whose row for that session has ``lastSeq`` at or beyond the batch's last seq: what the
dashboard needs to put the change on screen (the page renders a frame in well under a
millisecond). Sizes ``--sizes`` (50,100,200,300,400,500) are run in turn, ``--seconds`` (15) each.

Baseline, same script, same machine: the same batches of the first ten sessions followed on
their own event sockets (``ws/sessions/<id>/events/``, the proctor view) while the overview
follows all N — the cost of the existing per-session path, against which the overview's
projection and coalescing (25 ms) are measured. Printed per size, and for 500 sessions at the
end.

Prints median and p99 per size, the largest size whose p99 stays under the target ("sessions
sustained"), and the baseline. Exit status 0 when the target (500 sessions) holds, else 1.

Measured (2-core development machine shared with other jobs; load average from ``uptime``):

* before the batched fan-out (a ``group_send`` per session, unbounded), load 2.9 -> 10.2:
  200/300/400/500 sessions p99 5184/5125/11357/12478 ms (median 2626/3638/5419/7515 ms);
  427 of 2800 batches never reached the overview at 400, 878 of 3500 at 500 (unbounded sends
  can exceed the sender's Redis pool of 100); sustained 0; baseline at 500 p99 11816 ms.
* after (``sessions.broadcast``: one batch message per member channel, at most 16 sends in
  flight), load 1.2 -> 2.7: 50/100/200/300/400/500 sessions p99 62/50/95/235/225/239 ms
  (median 38/37/32/129/134/133 ms), nothing lost; sustained 500 (target met); baseline at 500
  median 114 ms, p99 199 ms. Again at load 0.8 -> 2.8 (``--sizes 300,400,500``): p99
  303/187/180 ms, baseline at 500 p99 147 ms (the first step missed, its baseline too).
  An earlier run at load 5.2 -> 8.5 kept every update but p99 was 130-850 ms, tracking the
  baseline (sustained 100): the machine, not the overview, limits.
* with the web process no longer loading voice it never serves (``bot.warmup``), a quiet run:
  50/100/200/300/400/500 sessions p99 49/40/41/41/110/94 ms (median 35/34/25/25/27/27 ms),
  sustained 500, every update delivered; baseline at 500 median 18 ms, p99 73 ms.

Usage: ``DATABASE_URL=postgres://... REDIS_URL=redis://... python bench/dashboard.py``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.scratch import bench_sitting, scratch_database  # noqa: E402
from bench.stats import percentile  # noqa: E402 (after the path set-up)

TARGET_P99_MS = 250.0
TARGET_SESSIONS = 500
BASELINE_SESSIONS = 10
"""Sessions also followed on their own event socket (the baseline)."""


# --- WebSocket clients (a separate, Django-free process) -----------------------------------------


async def _overview(
    url: str, origin: str, cookie: str, out: list[Any], ready: Any, stop: Any
) -> None:
    import websockets

    async with websockets.connect(
        url, origin=origin, additional_headers={"Cookie": cookie}, max_queue=None, open_timeout=60
    ) as socket:
        while json.loads(await socket.recv())["kind"] != "snapshot":
            pass
        ready.set()
        while not stop.is_set():
            try:
                raw = await asyncio.wait_for(socket.recv(), timeout=0.2)
            except TimeoutError:
                continue
            arrived = time.time()
            frame = json.loads(raw)
            if frame.get("kind") == "rows":
                out.extend((r["sessionId"], r["lastSeq"], arrived) for r in frame["rows"])


async def _session(
    url: str, origin: str, cookie: str, out: list[Any], ready: Any, stop: Any
) -> None:
    import websockets

    async with websockets.connect(
        url, origin=origin, additional_headers={"Cookie": cookie}, max_queue=None
    ) as socket:
        while json.loads(await socket.recv())["kind"] != "caught_up":
            pass
        ready.set()
        while not stop.is_set():
            try:
                raw = await asyncio.wait_for(socket.recv(), timeout=0.2)
            except TimeoutError:
                continue
            arrived = time.time()
            frame = json.loads(raw)
            if frame.get("kind") == "event" and frame["event"].get("seq"):
                out.append((frame["event"]["sessionId"], frame["event"]["seq"], arrived))


def run_clients(
    overview_url: str, session_urls: list[str], origin: str, cookie: str, conn: Any
) -> None:
    """Child process: the overview socket and the baseline sessions' own sockets; arrivals
    until told."""

    async def main() -> None:
        stop = asyncio.Event()
        ready = [asyncio.Event() for _ in range(len(session_urls) + 1)]
        rows: list[Any] = []
        events: list[Any] = []
        tasks = [
            asyncio.create_task(_overview(overview_url, origin, cookie, rows, ready[0], stop)),
            *(
                asyncio.create_task(_session(url, origin, cookie, events, flag, stop))
                for url, flag in zip(session_urls, ready[1:], strict=True)
            ),
        ]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in ready)), 120)
        conn.send("ready")
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # "stop"
        await asyncio.sleep(1.0)  # let in-flight frames land
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        conn.send((rows, events))

    asyncio.run(main())


# --- helpers -------------------------------------------------------------------------------------


def _batch(make: Any, session_id: str, turn: int) -> list[Any]:
    from ioa.events import payloads as p

    turn_id = f"turn-{turn}"
    events = [
        make(
            p.TranscriptFinal(
                turnId=turn_id,
                speaker="candidate",
                text="Dijkstra settles the nearest unvisited vertex and relaxes its edges.",
                startTimeMs=turn * 10_000,
                endTimeMs=turn * 10_000 + 4_000,
                nodeId="q1",
                confidence=0.91,
                language="en",
            ),
            correlation_id=turn_id,
        ),
        make(
            p.EvidenceSignal(
                signalId=f"sig-{turn}",
                nodeId="q1",
                turnIds=[turn_id],
                targetIds=["tgt-1"],
                evidenceDimension="knowledge_understanding",
                signalKind="positive",
                description="greedy choice",
                confidence=0.9,
                sttConfidenceSummary={"min": 0.91, "max": 0.91, "mean": 0.91, "turnCount": 1},
                llmProposal=False,
            ),
            correlation_id=turn_id,
        ),
        make(
            p.ExaminerUtteranceFinal(
                utteranceId=f"utt-{turn}",
                nodeId="q1",
                text="Which data structure would you use for that?",
                purpose="follow_up",
                durationMs=2500,
            ),
            correlation_id=turn_id,
        ),
    ]
    if turn % 3 == 0:
        events.append(
            make(
                p.FollowUpUsed(
                    nodeId="q1",
                    followUpIndex=1 + (turn // 3) % 3,
                    maxFollowUps=3,
                    reason="depth_probe",
                    triggerTurnId=turn_id,
                ),
                correlation_id=turn_id,
            )
        )
    return events


# --- the run -------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sizes", default="50,100,200,300,400,500", help="active sessions per step"
    )
    parser.add_argument("--seconds", type=float, default=15.0, help="duration of each step")
    parser.add_argument(
        "--interval", type=float, default=2.0, help="seconds between a session's batches"
    )
    parser.add_argument("--writers", type=int, default=8, help="appending threads")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # As deployed (and so the daphne and writer processes it starts inherit it): no
    # DEBUG query log or autoreload checks in the measured path.
    os.environ.setdefault("DJANGO_DEBUG", "false")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    if connection.vendor != "postgresql" or not settings.REDIS_URL:
        print("bench/dashboard.py needs Postgres and Redis: set DATABASE_URL and REDIS_URL")
        return 2
    with scratch_database("dashbench") as test_name:
        return _run(args, test_name)


def _setup(count: int) -> tuple[Any, Any, list[Any]]:
    """A sitting with ``count`` sessions in progress at node ``q1``, and its proctor."""
    from accounts.models import User
    from ioa.events import EventFactory
    from ioa.events import payloads as p
    from sessions.event_store import append_events
    from sessions.models import ExamSession

    author = User.objects.create(username="bench-author", role="author")
    proctor = User.objects.create(username="bench-proctor", role="proctor")
    sitting = bench_sitting(author)
    sitting.proctors.add(proctor)
    candidates = User.objects.bulk_create(
        [User(username=f"c{i}@bench.test", role="candidate") for i in range(count)]
    )
    sessions = ExamSession.objects.bulk_create(
        [ExamSession(sitting=sitting, candidate=c) for c in candidates]
    )
    for session in sessions:
        make = EventFactory(session_id=str(session.pk))
        append_events(
            session=session.pk,
            events=[
                make(
                    p.BotReady(examId="b", examVersion="1", nodeCount=3, estimatedDurationSec=1800)
                ),
                make(p.ExamStateChanged(fromState="scheduled", toState="scaffolding")),
                make(p.ExamStateChanged(fromState="scaffolding", toState="ready")),
                make(p.ExamStateChanged(fromState="ready", toState="in_progress")),
                make(
                    p.NodeEntered(
                        nodeId="q1",
                        nodeKind="question",
                        rubricItemIds=["tgt-1"],
                        maxFollowUps=3,
                        timeBudgetSec=600,
                        timeBudgetMs=600_000,
                    ),
                    correlation_id="trans-001",
                ),
            ],
        )
    return sitting, proctor, sessions


def _step(
    address: str,
    cookie: str,
    sitting: Any,
    sessions: list[Any],
    args: argparse.Namespace,
    turn0: int,
) -> tuple[list[float], list[float], int]:
    """One step: all ``sessions`` active for ``args.seconds``; returns the overview
    latencies, the baseline latencies (the first sessions' own sockets) and the batches sent."""
    from django.db import connection

    from ioa.events import EventFactory
    from sessions import broadcast
    from sessions.event_store import append_events

    origin = f"http://{address}"
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(
        target=run_clients,
        args=(
            f"ws://{address}/ws/proctor/sittings/{sitting.pk}/",
            [
                f"ws://{address}/ws/sessions/{s.pk}/events/?after_seq={s.last_seq}"
                for s in sessions[:BASELINE_SESSIONS]
            ],
            origin,
            cookie,
            child,
        ),
    )
    process.start()
    if not parent.poll(120) or parent.recv() != "ready":
        raise RuntimeError("the WebSocket clients did not connect")
    sent: dict[tuple[str, int], float] = {}
    sent_lock = threading.Lock()
    makers = {str(s.pk): EventFactory(session_id=str(s.pk)) for s in sessions}
    rounds = max(1, int(args.seconds / args.interval))
    begin = time.perf_counter() + 0.5
    shares = [sessions[i :: args.writers] for i in range(args.writers)]

    def writer(index: int, share: list[Any]) -> None:
        try:
            # Each session's batches are evenly staggered over the interval.
            plan = []
            for round_ in range(rounds):
                for position, session in enumerate(share):
                    offset = (index + position * args.writers) / len(sessions) * args.interval
                    plan.append((round_ * args.interval + offset, round_, session))
            plan.sort(key=lambda item: item[0])
            for due, round_, session in plan:
                delay = begin + due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                key = str(session.pk)
                batch = _batch(makers[key], key, turn0 + round_)
                started = time.time()
                result = append_events(session=session.pk, events=batch)
                with sent_lock:
                    sent[(key, result.last_seq)] = started
        finally:
            connection.close()

    threads = [
        threading.Thread(target=writer, args=(i, share)) for i, share in enumerate(shares) if share
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    broadcast.flush(10)
    parent.send("stop")
    rows, events = parent.recv()
    process.join(30)

    first_seen: dict[str, list[tuple[int, float]]] = {}
    for session_id, last_seq, arrived in rows:
        first_seen.setdefault(session_id, []).append((last_seq, arrived))
    overview: list[float] = []
    for (session_id, seq), started in sent.items():
        arrivals = [at for last, at in first_seen.get(session_id, []) if last >= seq]
        if arrivals:
            overview.append((min(arrivals) - started) * 1000)
    baseline: list[float] = []
    own = {(sid, seq): at for sid, seq, at in events}
    for (session_id, seq), started in sent.items():
        if (session_id, seq) in own:
            baseline.append((own[(session_id, seq)] - started) * 1000)
    missing = len(sent) - len(overview)
    if missing:
        print(f"    ({missing} of {len(sent)} batches never reached the overview socket)")
    for session in sessions:
        session.refresh_from_db(fields=["last_seq"])
    return overview, baseline, len(sent)


def _run(args: argparse.Namespace, test_name: str) -> int:
    from django.test import Client

    from tests.support.processes import asgi_server

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    sitting, proctor, all_sessions = _setup(max(sizes))
    client = Client()
    client.force_login(proctor)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    print(
        f"dashboard benchmark on {test_name} ({os.cpu_count()} CPUs): one overview socket, "
        f"every session active (a batch of 3-4 events every {args.interval:g} s), "
        f"{args.seconds:g} s per step"
    )
    sustained = 0
    baselines: dict[int, list[float]] = {}
    from sessions.models import ExamSession

    with asgi_server() as address:
        turn = 1
        for size in sizes:
            # The sitting holds exactly the sessions of this step (the rest move out of it).
            active = all_sessions[:size]
            ExamSession.objects.filter(pk__in=[s.pk for s in all_sessions[size:]]).update(
                sitting=_parking(sitting)
            )
            ExamSession.objects.filter(pk__in=[s.pk for s in active]).update(sitting=sitting)
            overview, baseline, batches = _step(address, cookie, sitting, active, args, turn)
            turn += int(args.seconds / args.interval) + 1
            if not overview:
                print(f"  {size:4d} sessions: no measurement")
                continue
            p50, p99 = statistics.median(overview), percentile(overview, 0.99)
            baselines[size] = baseline
            events_per_s = batches * 3.33 / args.seconds
            own = (
                f"; baseline median {statistics.median(baseline):5.1f} ms, "
                f"p99 {percentile(baseline, 0.99):6.1f} ms"
                if baseline
                else ""
            )
            print(
                f"  {size:4d} sessions (~{events_per_s:4.0f} events/s): event-to-screen "
                f"median {p50:5.1f} ms, p99 {p99:6.1f} ms over {len(overview)} updates{own}"
            )
            if p99 < TARGET_P99_MS:
                sustained = max(sustained, size)
    reference = baselines.get(TARGET_SESSIONS) or next(iter(baselines.values()), [])
    if reference:
        size = TARGET_SESSIONS if TARGET_SESSIONS in baselines else next(iter(baselines))
        print(
            f"  baseline at {size} sessions (the same batches on {BASELINE_SESSIONS} sessions' "
            f"own event sockets): median {statistics.median(reference):.1f} ms, "
            f"p99 {percentile(reference, 0.99):.1f} ms over {len(reference)} batches"
        )
    ok = sustained >= TARGET_SESSIONS
    print(
        f"sessions sustained with p99 < {TARGET_P99_MS:.0f} ms: {sustained} "
        f"(target {TARGET_SESSIONS}): {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


_PARKED: dict[str, Any] = {}


def _parking(sitting: Any) -> Any:
    """A second sitting (no proctor) that holds the sessions a step does not use."""
    from sessions.models import Sitting

    if "sitting" not in _PARKED:
        _PARKED["sitting"] = Sitting.objects.create(
            version=sitting.version, title="parked", created_by=sitting.created_by
        )
    return _PARKED["sitting"]


if __name__ == "__main__":
    raise SystemExit(main())
