"""One bot for one session: load, restore, run, persist, stop.

:func:`run_session` is one run of a session's bot (the caller holds the lease, see
``bot.runners``):

1. load the session, its published version and compiled flow; runtime validation
   (``ioa.validation.validate_for_session``) — a package that fails it is never run;
2. restore the runtime controller from the stored events (a new session has none);
3. build the pipeline (``bot.pipeline``) with the configured LLM (``bot.providers``) and the
   session's I/O (text mode by default, ``bot.text_transport``), start it, and bring the flow to
   the session's place (the boot node, or the node a resumed session is at);
4. listen on the session's bot group (``sessions.bot_channel``): candidate ready, typed answers,
   commands, proctor instructions and actions;
5. heartbeat: renew the lease and store the usage so far; a lost lease stops the bot at once;
6. end when the pipeline ends (the closing was spoken), a stop is asked, or the lease is lost;
   remaining usage is stored as ``usage_reported`` events.

Every decision's events are stored through the event store as they happen (``bot.examiner``),
so a run can end at any moment without losing anything: the next run resumes from the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from channels.layers import get_channel_layer
from pipecat.services.llm_service import LLMService
from pipecat.workers.runner import WorkerRunner

from bot import layer_watch
from bot.conf import BotSettings, bot_settings
from bot.examiner import ExaminerCore
from bot.journal import Journal, db_threads, load_session
from bot.journal_writer import LeaseLost
from bot.lease import Lease, record_ready, renew
from bot.pipeline import (
    BotIO,
    ExaminerPipeline,
    Summarisation,
    build_pipeline,
    configure_pipecat_logging,
    text_io,
)
from bot.providers import LlmChoice, build_llm, resolve
from bot.usage import UsageLedger, flush_usage
from bot.voice.exam_text import bias_recogniser
from bot.voice.turn_end import tune_turn_taking, turn_strategy
from ioa.runtime.grounding import has_grounded_nodes
from sessions import bot_channel

logger = logging.getLogger(__name__)

START_TIMEOUT_SECONDS = 30.0
SHUTDOWN = threading.Event()
"""Set when the hosting process shuts down (a Celery worker's warm shutdown): bots stop
gracefully and leave their session to be restarted elsewhere."""


class Outcome(enum.StrEnum):
    """How a bot run ended."""

    FINISHED = "finished"
    """The exam is over."""
    STOPPED = "stopped"
    """Asked to stop (or the process shuts down); the session can be resumed."""
    LEASE_LOST = "lease_lost"
    """Another bot took over."""
    REFUSED = "refused"
    """Another bot holds the session, or it needs none."""
    FAILED = "failed"
    """The session cannot be run (validation, configuration) or kept failing."""


@dataclass
class BotOptions:
    """How to run a session's bot (everything has a default from the settings)."""

    config: BotSettings | None = None
    io_factory: Callable[[], BotIO] = text_io
    # Any: Pipecat's LLMService is invariant in its adapter type (see bot.providers.build_llm).
    llm_factory: Callable[[BotSettings, LlmChoice], LLMService[Any]] = build_llm
    on_stored: Callable[[Sequence[Mapping[str, object]]], None] | None = None
    """Called (in a database thread) with the wire form of every batch of stored events."""
    on_core: Callable[[ExaminerCore], None] | None = None
    """Called with the core once the pipeline runs (tests and benchmarks look inside)."""
    stop: asyncio.Event | None = None
    handover: bool = False
    """The session's previous bot stopped on purpose and in order to hand this one a new
    transport (the candidate reconnected their audio): resuming is not a fault, so no
    ``system_error`` is recorded and nothing is said for it (``ExaminerCore.open``). Only the
    first run of a supervised bot is a handover: after a crash, the next run resumes as a fault."""


async def run_session(
    session_id: uuid.UUID, *, lease: Lease | None, options: BotOptions | None = None
) -> Outcome:
    """One run of the session's bot (module docstring). Raises on a crash (the caller resumes)."""
    options = options or BotOptions()
    config = options.config or bot_settings()
    configure_pipecat_logging(config.pipecat_log_level)
    db = db_threads(config.db_threads)
    key = session_id
    try:
        loaded = await db.run(key, load_session, session_id)
        if loaded.finished:
            return Outcome.FINISHED
        choice = resolve(config)
        io = options.io_factory()
        journal = Journal(loaded, on_stored=options.on_stored)
        reserve = [f.offline for f in io.fallbacks.values() if f.kind == "stt"]
        for recogniser in (io.stt, *reserve):  # the offline one in reserve too
            bias_recogniser(
                recogniser,
                loaded.artifacts.package,
                lambda: journal.controller.state.current_node_id,
            )
        tune_turn_taking(io.user_params, loaded.artifacts.package, loaded.extra_time_multiplier)
        ledger = UsageLedger(providers={"llm": (choice.provider, choice.model), **io.providers})
        core = ExaminerCore(journal=journal, db=db, config=config, usage=ledger, lease=lease)
        pipeline = build_pipeline(
            core=core.adapter,
            llm=options.llm_factory(config, choice),
            io=io,
            summarisation=Summarisation(
                enabled=not has_grounded_nodes(loaded.artifacts.package),
                max_context_tokens=config.context_max_tokens,
                max_unsummarized_messages=config.context_max_messages,
                target_context_tokens=config.context_target_tokens,
                min_messages_after_summary=config.context_keep_messages,
            ),
        )
        core.attach(pipeline, io)
        strategy = turn_strategy(io.user_params)
        if strategy is not None:
            core.settle_turns(strategy.settlement)
        return await _run(session_id, core, pipeline, lease, options, config)
    finally:
        await db.close(key)


async def _run(
    session_id: uuid.UUID,
    core: ExaminerCore,
    pipeline: ExaminerPipeline,
    lease: Lease | None,
    options: BotOptions,
    config: BotSettings,
) -> Outcome:
    db = core.db
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(pipeline.worker)
    run_task = asyncio.create_task(runner.run(), name=f"bot-pipeline-{session_id}")
    stop = options.stop or asyncio.Event()
    lost = asyncio.Event()
    helpers: list[asyncio.Task[None]] = []
    handing_over = False
    try:
        started = asyncio.create_task(pipeline.started.wait())
        await asyncio.wait(
            {started, run_task}, timeout=START_TIMEOUT_SECONDS, return_when=asyncio.FIRST_COMPLETED
        )
        if not pipeline.started.is_set():
            started.cancel()
            raise RuntimeError("the pipeline did not start")
        core.start()
        if options.on_core is not None:
            options.on_core(core)
        subscribed = asyncio.Event()
        helpers.append(asyncio.create_task(_listen(session_id, core, stop, subscribed)))
        if lease is not None:
            helpers.append(asyncio.create_task(_heartbeat(core, lease, config, lost)))
        helpers.append(asyncio.create_task(_watch_shutdown(stop)))
        # Listen before announcing readiness: inputs sent once bot_ready is seen are not lost.
        await asyncio.wait_for(subscribed.wait(), timeout=START_TIMEOUT_SECONDS)
        await core.open(handover=options.handover)
        if lease is not None:
            await db.run(session_id, record_ready, lease)
        waiters = {
            asyncio.create_task(pipeline.finished.wait()): "finished",
            asyncio.create_task(stop.wait()): "stop",
            asyncio.create_task(lost.wait()): "lost",
            asyncio.create_task(core.failed.wait()): "failed",
        }
        done, pending = await asyncio.wait(
            {*waiters, run_task}, return_when=asyncio.FIRST_COMPLETED
        )
        for task in pending:
            if task is not run_task:
                task.cancel()
        reasons = {reason for waiter, reason in waiters.items() if waiter in done}
        if "failed" in reasons and core.failure is not None:
            raise core.failure
        if "lost" in reasons:
            raise LeaseLost(f"session {session_id}: the lease was lost")
        if core.controller.completed:
            return Outcome.FINISHED
        ended = "finished" in reasons or run_task in done
        if ended and not (stop.is_set() or SHUTDOWN.is_set()):
            raise RuntimeError("the pipeline ended before the exam did")
        # Draining (SIGTERM): a planned move to another worker, recorded once the inbox is
        # done (``ExaminerCore.hand_over``), so the next bot resumes without a fault.
        handing_over = SHUTDOWN.is_set()
        return Outcome.STOPPED
    finally:
        for task in helpers:
            task.cancel()
        for task in helpers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await core.close()
        if handing_over:
            await core.hand_over()
        if not run_task.done():
            await runner.cancel("bot stopping")
        with contextlib.suppress(asyncio.CancelledError, Exception):
            # Draining (SIGTERM): the next bot waits for this one's lease; do not linger.
            await asyncio.wait_for(run_task, timeout=2 if SHUTDOWN.is_set() else 10)
        await _flush_usage(core, config)


async def _listen(
    session_id: uuid.UUID, core: ExaminerCore, stop: asyncio.Event, subscribed: asyncio.Event
) -> None:
    """Read the session's bot group and hand each input to the core."""
    layer = get_channel_layer()
    if layer is None:
        subscribed.set()
        return
    # The default prefix: channels_redis receives every process-local channel through one
    # shared Redis list, so a custom prefix would starve behind the consumers' receives.
    name = await layer.new_channel()
    group = bot_channel.bot_group(session_id)
    await layer.group_add(group, name)
    # A Redis restart loses the group's members: the watch re-adds this one (bot.layer_watch)
    # and the bot reads its durable inbox for what was sent meanwhile.
    watch = layer_watch.watch_for(layer)
    member = layer_watch.Member(group, name, rejoined=core.inbox.poll)
    if watch is not None:
        watch.add(member)
    subscribed.set()
    failures = 0
    try:
        while True:
            try:
                message = await layer.receive(name)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Redis unreachable: the watch logs the outage once; retry quietly.
                failures += 1
                logger.debug("bot %s: channel receive failed: %r", session_id, exc)
                await asyncio.sleep(min(1.0, 0.1 * failures))
                continue
            failures = 0
            parsed = bot_channel.parse(message)
            if parsed is None:
                continue
            kind, fields = parsed
            if kind == "stop":
                stop.set()
                continue
            try:
                await core.on_channel_input(kind, fields)
            except Exception:
                logger.exception("bot %s: bad channel input %s", session_id, kind)
    finally:
        if watch is not None:
            watch.discard(member)
        with contextlib.suppress(Exception):
            await layer.group_discard(group, name)


async def _heartbeat(
    core: ExaminerCore, lease: Lease, config: BotSettings, lost: asyncio.Event
) -> None:
    """Renew the lease and store usage every ``VIVA_BOT_HEARTBEAT_SECONDS``."""
    while True:
        await asyncio.sleep(config.heartbeat_seconds)
        try:
            held = await core.db.run(
                core.session_id, renew, lease, ttl_seconds=config.lease_seconds
            )
        except Exception:
            logger.exception("bot %s: heartbeat failed", core.session_id)
            continue
        if not held:
            logger.error("bot %s: lease lost; stopping", core.session_id)
            lost.set()
            return
        await _flush_usage(core, config)
        try:
            await core.inbox.poll()  # inputs whose live delivery was lost
        except Exception:
            logger.exception("bot %s: the inbox could not be read", core.session_id)


async def _flush_usage(core: ExaminerCore, config: BotSettings) -> None:
    unflushed = core.usage_ledger.take_unflushed()
    if not unflushed:
        return
    try:
        await core.db.run(core.session_id, flush_usage, core.session_id, unflushed, config.pricing)
    except Exception:
        logger.exception("bot %s: usage could not be stored", core.session_id)
        core.usage_ledger.give_back(unflushed)


async def _watch_shutdown(stop: asyncio.Event) -> None:
    while not SHUTDOWN.is_set():
        await asyncio.sleep(0.1)
    stop.set()
