"""Where bots run, and how a session's bot is supervised.

:func:`run_bot` is the supervised bot of one session, whatever hosts it:

1. take the session's lease (``bot.lease``) — refused while another bot's lease is live, so a
   session is never run by two bots;
2. run the session (``bot.session_runner.run_session``); if the run crashes, run it again
   (up to ``VIVA_BOT_MAX_RESTARTS`` times, with a short back-off): the new run restores the
   controller from the stored events and resumes at the node the session was in, through a bot
   fault and its clearing (``system_error``, ``recovery_started`` … ``recovery_resolved`` when the
   candidate answers again);
3. if it keeps crashing, end the exam at the technical-failure end node (a fatal fault: the
   controller records ``exam_completed``); everything said so far is already stored;
4. release the lease: ``finished`` when the exam is over, ``released`` when stopped.

A bot whose process dies (``kill -9``, a lost machine) stops renewing its lease; the lease
expires after ``VIVA_BOT_LEASE_SECONDS`` and the supervisor (``bot.tasks``, or the next
``bot_start``) launches a new bot, which resumes the same way.

Runners:

* **inline** (the embedded default): the bot is an asyncio task in the ASGI server's event loop
  (:func:`start_inline`); outside an ASGI server, a background event-loop thread hosts it.
* **celery**: ``bot.tasks.run_session_bot`` on the ``bots`` queue hands :func:`run_bot` to the
  worker process's bot host (``bot.hosting``: many bots on one event loop).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import SyncToAsync, sync_to_async
from django.db import close_old_connections

from bot.conf import BotSettings, bot_settings
from bot.journal import DbThreads, Journal, SessionUnavailable, db_threads, load_session
from bot.journal_writer import LeaseLost
from bot.lease import Lease, LeaseRefused, acquire, new_holder, release, renew, renewed_within
from bot.models import BotLease
from bot.providers import ProviderError, resolve
from bot.session_runner import SHUTDOWN, BotOptions, Outcome, run_session
from ioa.runtime import Fault
from sessions.exam_room import page_language, voice_transport
from sessions.models import ExamSession

logger = logging.getLogger(__name__)


async def run_bot(
    session_id: uuid.UUID | str,
    *,
    runner: str = "inline",
    holder: str | None = None,
    options: BotOptions | None = None,
) -> Outcome:
    """The supervised bot of one session (module docstring)."""
    key = uuid.UUID(str(session_id))
    config = options.config if options is not None and options.config else bot_settings()
    db = db_threads(config.db_threads)
    if options is None:
        options = await db.run(key, default_options, key)
    holder = holder or new_holder(runner)
    try:
        label = resolve(config).label
    except ProviderError as exc:
        logger.error("bot %s: %s", key, exc)
        return Outcome.FAILED
    try:
        lease = await db.run(
            key,
            acquire,
            session_id=key,
            holder=holder,
            runner=runner,
            ttl_seconds=config.lease_seconds,
            provider=label,
        )
    except LeaseRefused as exc:
        logger.info("bot %s: not started: %s", key, exc.reason)
        await db.close(key)
        return Outcome.REFUSED
    crashes = 0
    keeper = asyncio.create_task(_keep_lease(lease, config), name=f"bot-lease-{key}")
    try:
        while True:
            try:
                outcome = await run_session(key, lease=lease, options=options)
            except LeaseLost:
                logger.warning("bot %s: lease lost; another bot runs the session", key)
                return Outcome.LEASE_LOST
            except (SessionUnavailable, ProviderError) as exc:
                logger.error("bot %s: cannot run: %s", key, exc)
                await db.run(key, release, lease, state=str(BotLease.State.FAILED), error=str(exc))
                return Outcome.FAILED
            except Exception as exc:
                crashes += 1
                logger.exception("bot %s: crashed (%d)", key, crashes)
                if crashes > config.max_restarts:
                    await _technical_failure(db, key, f"{type(exc).__name__}: {exc}")
                    await db.run(
                        key,
                        release,
                        lease,
                        state=str(BotLease.State.FINISHED),
                        error=f"gave up after {crashes} crashes: {exc}",
                    )
                    return Outcome.FAILED
                await asyncio.sleep(min(5.0, 0.5 * crashes))
                options = dataclasses.replace(options, handover=False)  # a crash is a fault
                continue
            if outcome is Outcome.FINISHED:
                await db.run(key, release, lease, state=str(BotLease.State.FINISHED))
            elif SHUTDOWN.is_set():
                # The host is going away: leave the session to be restarted at once elsewhere.
                await db.run(
                    key, release, lease, state=str(BotLease.State.STARTING), error="host shut down"
                )
            else:
                await db.run(key, release, lease, state=str(BotLease.State.RELEASED))
            return outcome
    finally:
        keeper.cancel()
        await db.close(key)


_lease_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bot-lease")
"""Lease renewals have a thread of their own: never queued behind a session's loading."""


def _renew(lease: Lease, ttl_seconds: float) -> bool:
    try:
        return renew(lease, ttl_seconds=ttl_seconds)
    finally:
        close_old_connections()


async def _keep_lease(lease: Lease, config: BotSettings) -> None:
    """Renew the lease for the bot's whole life, from the moment it is taken: loading and
    building a session (or restarting after a crash) may take longer than the lease on a busy
    host. While the running session's heartbeat renews it (and stops the bot when it is lost),
    this keeper skips its turn: one renewal per heartbeat, not two."""
    renewal = sync_to_async(_renew, thread_sensitive=False, executor=_lease_thread)
    while True:
        await asyncio.sleep(config.heartbeat_seconds)
        if renewed_within(lease, 1.5 * config.heartbeat_seconds):
            continue
        try:
            if not await renewal(lease, config.lease_seconds):
                return
        except Exception:
            logger.warning("bot %s: lease renewal failed", lease.session_id)


def default_options(session_id: uuid.UUID) -> BotOptions:
    """How a session's bot runs when its starter says nothing: LiveKit voice for a voice session
    when ``VIVA_VOICE_TRANSPORT=livekit`` (``bot.livekit``, slower speech as accommodated), else
    text mode. (Voice over SmallWebRTC is started by the browser's offer, with its own I/O.)"""
    row = ExamSession.objects.filter(pk=session_id).values("exam_mode", "slower_speech").first()
    if row is not None and row.get("exam_mode") == "voice" and voice_transport() == "livekit":
        from bot.livekit import livekit_bot_options

        session = ExamSession.objects.select_related("sitting__version").get(pk=session_id)
        options: BotOptions = livekit_bot_options(
            session_id, slower=bool(row.get("slower_speech")), language=page_language(session)
        )
        return options
    return BotOptions()


def _end_with_technical_failure(session_id: uuid.UUID, detail: str) -> None:
    """A fatal bot fault: the controller ends the exam at the technical-failure node."""
    loaded = load_session(session_id)
    if loaded.finished:
        return
    journal = Journal(loaded)
    decision = journal.controller.handle(Fault(component="bot", severity="fatal", detail=detail))
    journal.record(decision)


async def _technical_failure(db: DbThreads, session_id: uuid.UUID, detail: str) -> None:
    try:
        await db.run(session_id, _end_with_technical_failure, session_id, detail[:1000])
    except Exception:
        logger.exception("bot %s: could not end the exam at the technical-failure node", session_id)


# --- the inline runner ----------------------------------------------------------------------------

_inline_tasks: dict[uuid.UUID, asyncio.Task[Outcome]] = {}
_host_loop: asyncio.AbstractEventLoop | None = None
_host_lock = threading.Lock()


def _fallback_loop() -> asyncio.AbstractEventLoop:
    """A background event loop for inline bots started outside an ASGI server."""
    global _host_loop
    with _host_lock:
        if _host_loop is None or _host_loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="inline-bots", daemon=True)
            thread.start()
            _host_loop = loop
        return _host_loop


def _target_loop() -> asyncio.AbstractEventLoop:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    main = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    if isinstance(main, asyncio.AbstractEventLoop) and main.is_running():
        return main  # a sync view under the ASGI server: the server's loop
    return _fallback_loop()


def start_inline(session_id: uuid.UUID | str, *, options: BotOptions | None = None) -> None:
    """Run the session's bot as an asyncio task in this process (idempotent per process)."""
    key = uuid.UUID(str(session_id))
    loop = _target_loop()

    def spawn() -> None:
        running = _inline_tasks.get(key)
        if running is not None and not running.done():
            return
        coroutine = run_bot(key, runner="inline", options=options)
        task = loop.create_task(coroutine, name=f"inline-bot-{key}")
        _inline_tasks[key] = task
        task.add_done_callback(lambda t: _inline_tasks.pop(key, None) if t is task else None)

    try:
        running_loop = asyncio.get_running_loop()
    except RuntimeError:
        running_loop = None
    if running_loop is loop:
        spawn()
    else:
        loop.call_soon_threadsafe(spawn)


def inline_task(session_id: uuid.UUID | str) -> asyncio.Task[Outcome] | None:
    """The running inline bot task of a session in this process, if any."""
    return _inline_tasks.get(uuid.UUID(str(session_id)))


__all__ = ["Lease", "Outcome", "inline_task", "run_bot", "start_inline"]
