#!/usr/bin/env python
"""Red-team benchmark: how the examiner holds against a hostile or broken language model.

Prints, in one run:

1. **baseline**: a well-behaved model (``report_observation`` with a neutral follow-up on every
   turn) through the real bot, ``--turns`` candidate turns at the Dijkstra question: the time
   from a typed answer being sent to the examiner's reply being stored (p50/p95/max);
2. **the containment table** (``tests/support/redteam.py``, 33 misbehaviours: claims the
   candidate never made, protected text, a rubric level label as a verdict, stacked and
   leading questions, a 20,000-character reply, arguments that are not JSON (always, and once
   before a good retry), unknown tools, empty streams, a hanging model, 429, 500, dropped
   connections; every model fault must be stored as an event): per misbehaviour whether it
   was contained, what the candidate received, what was stored and which state changes
   happened; the containment rate; and the time to reply under misbehaviour (p50/p95/max)
   against the deadline;
3. **output filters**: the time the output pipeline takes per utterance (p50/p95), on the
   table's hostile texts and ordinary examiner questions.

Everything is local: the scripted OpenAI-compatible server on 127.0.0.1, the real Pipecat
pipeline and FlowManager, the runtime controller, the event store on a throw-away database
(``test_<name>_redteam`` on Postgres with ``DATABASE_URL``, else a SQLite file) and the channel
layer (Redis with ``REDIS_URL``, else in memory).

Usage: ``python bench/redteam.py [--deadline 10] [--turns 28]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.stats import percentile  # noqa: E402 (after the path set-up)


def setup_django(tmp: Path) -> str | None:
    """Django on a throw-away database; returns the Postgres test database to drop, if any."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("VIVA_PIPECAT_LOG_LEVEL", "CRITICAL")
    os.environ.setdefault("VIVA_LOG_LEVEL", "CRITICAL")
    if not os.environ.get("DATABASE_URL"):
        os.environ["VIVA_SQLITE_PATH"] = str(tmp / "redteam.sqlite3")
    import django

    django.setup()
    import logging

    logging.disable(logging.CRITICAL)
    from django.conf import settings
    from django.db import connection

    if connection.vendor == "sqlite":
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        return None
    db = settings.DATABASES["default"]
    db.setdefault("TEST", {})["NAME"] = f"test_{db['NAME']}_redteam"
    return str(connection.creation.create_test_db(verbosity=0, autoclobber=True))


def new_session() -> uuid.UUID:
    from accounts.models import User
    from authoring.models import DraftPackage
    from publishing.services import version_publish
    from sessions.models import ExamSession, Sitting
    from tests.support.redteam import redteam_document

    author = User.objects.create(username=f"rt-{uuid.uuid4().hex[:8]}", role="author")
    document = json.loads((ROOT / "examples" / "cs201-graph-algorithms.json").read_text())
    draft = DraftPackage.objects.create(
        owner=author, title="red team", document=redteam_document(document)
    )
    version = version_publish(draft=draft, user=author).version
    sitting = Sitting.objects.create(version=version, title="red team", created_by=author)
    candidate = User.objects.create(username=f"rt-c-{uuid.uuid4().hex[:8]}", role="candidate")
    return ExamSession.objects.create(sitting=sitting, candidate=candidate).pk


async def run_session(cases: Any, model: Any, deadline: float, turns: int) -> tuple[Any, Any]:
    """One bot, brought to the Dijkstra question; then the cases (or ``turns`` baseline
    turns when ``cases`` is None)."""
    from asgiref.sync import sync_to_async

    from bot.runners import run_bot
    from bot.session_runner import BotOptions
    from sessions.bot_channel import send_to_bot
    from tests.bot.conftest import Candidate, Watcher
    from tests.support.redteam import WARMUP_ANSWER, Case, TimedWatcher, run_table

    session_id = await sync_to_async(new_session)()
    watcher = Watcher()
    timed = TimedWatcher(watcher)
    watcher.bind()
    bot = asyncio.create_task(run_bot(session_id, options=BotOptions(on_stored=timed)))
    await watcher.until_count("bot_ready", 1)
    candidate = Candidate(session_id, watcher)
    await candidate.ready()
    await watcher.until_count("examiner_utterance_final", 1)
    await candidate.answer(WARMUP_ANSWER)
    await watcher.until(lambda w: "q-dijkstra" in w.nodes(), what="q-dijkstra")
    if cases is None:
        from tests.support.openai_server import Reply

        def behaved(n: int) -> Reply:
            raise AssertionError("unused")

        cases = [
            Case(
                f"baseline {i}",
                "baseline",
                f"Answer number {i} about shortest paths.",
                behaved,
                "-:-",
            )
            for i in range(turns)
        ]
        model.baseline_only = True
    rows = await run_table(candidate, timed, cases, model, deadline=deadline)
    await send_to_bot(session_id, "stop")
    await asyncio.wait_for(bot, 60)
    return rows, session_id


def filter_timings() -> tuple[list[float], int]:
    """Seconds per ``OutputPipeline.run`` on hostile and ordinary texts."""
    from ioa.runtime.ids import SeededRng
    from ioa.runtime.plan import ExamPlan
    from ioa.runtime.state import RuntimeState
    from ioa.runtime.step import Outbox, Step
    from ioa.schema import load_package
    from tests.support.redteam import BASELINE_LINES, CASES, ROLE_LEAK, RUBRIC_LEAK

    document = json.loads((ROOT / "examples" / "cs201-graph-algorithms.json").read_text())
    plan = ExamPlan(load_package(document))
    context = Step(plan, RuntimeState(session_id="b"), SeededRng("b"), Outbox(), 0).filter_context(
        "q-dijkstra"
    )
    texts = [*BASELINE_LINES, ROLE_LEAK, RUBRIC_LEAK, *(c.says for c in CASES)]
    texts.append("Tell me more about the edges you relax. " * 500)
    samples: list[float] = []
    for _ in range(20):
        for text in texts:
            started = time.perf_counter()
            plan.pipeline.run(text, context)
            samples.append(time.perf_counter() - started)
    return samples, len(texts)


def fmt(values: list[float], unit: float = 1.0, suffix: str = "s") -> str:
    if not values:
        return "-"
    p50, p95 = percentile(values, 0.5) * unit, percentile(values, 0.95) * unit
    return (
        f"p50 {p50:.3f} {suffix}, p95 {p95:.3f} {suffix}, max {max(values) * unit:.3f} "
        f"{suffix} (n={len(values)})"
    )


class BaselineAware:
    """The hostile model, or a well-behaved one for baseline rows."""

    def __init__(self) -> None:
        from tests.support.redteam import HostileModel

        self.model = HostileModel()
        self.baseline_only = False

    def turn(self, case: Any) -> None:
        self.model.turn(None if self.baseline_only else case)

    def __call__(self, request: Any) -> Any:
        return self.model(request)


async def both(args: argparse.Namespace) -> tuple[Any, Any, int]:
    """The baseline session, then the hostile one, in one event loop (as in a server)."""
    from django.conf import settings

    from bench.bot import close_connections
    from tests.support.openai_server import OpenAICompatibleServer
    from tests.support.redteam import CASES

    try:
        baseline_model, hostile_model = BaselineAware(), BaselineAware()
        with OpenAICompatibleServer(default_reply=baseline_model) as server:
            settings.VIVA_LLM_BASE_URL = server.base_url
            baseline, _ = await run_session(None, baseline_model, args.deadline, args.turns)
        with OpenAICompatibleServer(default_reply=hostile_model) as server:
            settings.VIVA_LLM_BASE_URL = server.base_url
            rows, _ = await run_session(CASES, hostile_model, args.deadline, 0)
            requests = len(server.requests)
        return baseline, rows, requests
    finally:
        await close_connections()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deadline", type=float, default=10.0, help="turn deadline, seconds")
    parser.add_argument("--turns", type=int, default=28, help="baseline turns")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        created = setup_django(Path(tmp))
        from django.conf import settings
        from django.db import connection

        from ioa.runtime.plan import ExamPlan
        from ioa.schema import load_package
        from tests.support.redteam import judge, table

        settings.VIVA_LLM_PROVIDER = "openai_compatible"
        settings.VIVA_BOT_TURN_DEADLINE_SECONDS = args.deadline
        settings.VIVA_BOT_FAULT_RETRY_SECONDS = 1.0
        settings.VIVA_BOT_HEARTBEAT_SECONDS = 1.0
        try:
            baseline, rows, requests = asyncio.run(both(args))
            document = json.loads((ROOT / "examples" / "cs201-graph-algorithms.json").read_text())
            node = ExamPlan(load_package(document)).node("q-dijkstra")
            judge(
                rows,
                protected=node.protected_texts,
                speakable=node.speakable_texts,
                deadline=args.deadline,
            )
            layer = "redis" if settings.REDIS_URL else "in-memory"
            print(
                f"Red team against the real bot, turn deadline {args.deadline:g} s "
                f"({connection.vendor}, channel layer {layer})\n"
            )
            print(table(rows))
            contained = sum(row.contained for row in rows)
            under = [r.reply_seconds for r in rows if r.reply_seconds is not None]
            normal = [r.reply_seconds for r in baseline if r.reply_seconds is not None]
            print(f"\ncontainment: {contained}/{len(rows)} = {100 * contained / len(rows):.0f} %")
            print(f"LLM requests for {len(rows)} hostile turns: {requests}")
            print(f"time to reply, baseline (well-behaved model): {fmt(normal)}")
            print(f"time to reply under misbehaviour:             {fmt(under)}")
            p95 = percentile(under, 0.95) if under else float("inf")
            verdict = "below" if p95 < args.deadline else "NOT below"
            print(f"p95 under misbehaviour is {verdict} the {args.deadline:g} s deadline")
            samples, distinct = filter_timings()
            print(
                f"output filters per utterance ({distinct} texts x 20): {fmt(samples, 1000, 'ms')}"
            )
            return 0 if contained == len(rows) and p95 < args.deadline else 1
        finally:
            if created:
                connection.close()
                connection.creation.destroy_test_db(created, verbosity=0)


if __name__ == "__main__":
    raise SystemExit(main())
