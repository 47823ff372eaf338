"""Celery tasks of the ``bots`` queue (``CELERY_TASK_ROUTES``: ``bot.tasks.*``).

* ``bot.tasks.run_session_bot(session_id)`` — hands one session's supervised bot
  (``bot.runners.run_bot``) to this worker process's bot host (``bot.hosting``: one event loop
  hosting many bots, ``VIVA_BOT_CAPACITY`` of them) and returns at once. A full or draining host
  leaves the start waiting in the database (``bot.lease.queue_start``: it keeps its place, the
  room shows it) instead of circulating it between full workers; a host with a free place takes
  the oldest waiting starts at each supervisor pass and as soon as one of its bots ends
  (:func:`host_queued`). A bot whose session another bot holds stops at once, so a redelivered
  task is harmless.
* ``bot.tasks.supervise_bots()`` — launches a new bot for every session whose bot died (lease
  expired, ``bot.lease.claim_expired``). Every worker that consumes the ``bots`` queue also runs
  it in a background thread every ``VIVA_BOT_SUPERVISOR_SECONDS`` (so surviving workers restart
  the bots of a dead one); with Celery beat, schedule it too (docs/bot.md). The same thread
  reports this process's capacity and load to the cluster (``bot.capacity``).

On a warm shutdown (SIGTERM) the host drains: its bots stop taking turns, release their leases
and their starts go back on the queue at once, so another worker resumes them from the log
(``bot.hosting.BotHost.drain``).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid

from celery import Task, shared_task
from celery.signals import (
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
    worker_shutting_down,
)

from bot import capacity
from bot.conf import bot_settings
from bot.lease import queue_start, take_queued
from bot.warmup import warm_on_start
from sessions import chain_anchor

logger = logging.getLogger(__name__)

BOTS_QUEUE = "bots"


MAX_HOPS = 3
"""How many times a full host passes a start on to the queue while other workers report room,
before it waits (their reports are up to a supervisor pass old)."""
DRAIN_SECONDS = 15.0
"""How long a draining host waits for its bots to stop."""


@shared_task(name="bot.tasks.run_session_bot", bind=True, acks_late=True, ignore_result=True)
def run_session_bot(self: Task, session_id: str, hops: int = 0) -> str:
    """Host the session's bot in this process (module docstring): ``hosted``; ``passed on``
    when this host is full but the cluster reports room elsewhere (at most :data:`MAX_HOPS`
    times); else ``queued`` (or ``not needed``: the exam is over or a bot holds it)."""
    from bot.hosting import bot_host

    holder = f"celery:{self.request.hostname or 'worker'}:{os.getpid()}:{self.request.id}"[:200]
    key = uuid.UUID(session_id)
    if bot_host().host(key, holder=holder):
        return "hosted"
    if hops < MAX_HOPS and _room_elsewhere():
        run_session_bot.apply_async((session_id, hops + 1), queue=BOTS_QUEUE)
        return "passed on"
    return "queued" if queue_start(key) else "not needed"


def _room_elsewhere() -> bool:
    """The workers' reports show a free place (``bot.capacity``); unknown counts as none."""
    try:
        return not capacity.cluster().full
    except Exception:  # the cache is Redis: an outage is logged by the layer watch
        return False


def host_queued() -> list[str]:
    """Host the oldest waiting starts this process has room for (none while draining); a start
    it then cannot host (filled meanwhile) waits again. Returns the sessions hosted."""
    from bot.hosting import bot_host

    host = bot_host()
    if host.draining:
        return []
    free = host.capacity - len(host.hosted)
    hosted: list[str] = []
    grace = bot_settings().start_grace_seconds
    for key in take_queued(limit=free, grace_seconds=grace):
        holder = (
            f"celery:{_worker_name or socket.gethostname()}:{os.getpid()}:queued-{uuid.uuid4()}"
        )
        holder = holder[:200]
        if host.host(key, holder=holder):
            hosted.append(str(key))
        else:
            queue_start(key)
    return hosted


@shared_task(name="bot.tasks.supervise_bots")
def supervise_bots() -> list[str]:
    """Launch a bot for every session whose bot died; returns their ids."""
    return supervise_once()


def supervise_once() -> list[str]:
    """One supervisor pass (synchronous)."""
    from bot.lease import claim_expired

    config = bot_settings()
    claimed = [str(s) for s in claim_expired(grace_seconds=config.start_grace_seconds)]
    for session_id in claimed:
        logger.warning("bot of session %s died; launching a new one", session_id)
        run_session_bot.delay(session_id)
    return claimed


_supervisor: threading.Thread | None = None
_stop_supervisor = threading.Event()
_worker_name = ""
"""This worker's node name (as in the holders of the starts Celery hands it)."""
_place_freed = threading.Event()
"""Wakes the supervisor: one of this process's bots ended (or the worker is stopping)."""


def _supervise_forever(interval: float) -> None:
    from django.db import close_old_connections, connections

    try:
        report_capacity()
        while True:
            _place_freed.wait(interval)  # a pass every interval, or at once when a bot ends
            _place_freed.clear()
            if _stop_supervisor.is_set():
                break
            close_old_connections()
            try:
                supervise_once()
                host_queued()
            except Exception:
                logger.exception("bot supervisor pass failed")
            report_capacity()
    finally:
        connections.close_all()


def report_capacity() -> None:
    """Tell the cluster how many exams this process may host and hosts (``bot.capacity``);
    a cache that cannot be reached is skipped (the report expires, and the next pass tries)."""
    from bot.hosting import bot_host

    host = bot_host()
    try:
        capacity.report(
            worker=f"celery:{socket.gethostname()}:{os.getpid()}",
            capacity=host.capacity,
            hosted=len(host.hosted),
            draining=host.draining,
        )
    except Exception as exc:  # the cache is Redis: an outage is logged by the layer watch
        logger.debug("capacity not reported: %s", exc)


def _consumes_bots(sender: object) -> bool:
    queues = getattr(getattr(sender, "task_consumer", None), "queues", None)
    if not queues:
        return True
    return any(getattr(queue, "name", None) == BOTS_QUEUE for queue in queues)


@worker_ready.connect
def _start_supervisor(sender: object = None, **kwargs: object) -> None:
    global _supervisor, _worker_name
    if not _consumes_bots(sender):
        return
    _worker_name = str(getattr(sender, "hostname", "") or "")
    from bot.hosting import bot_host, warm_up

    warm_up()
    interval = bot_settings().supervisor_seconds
    if interval <= 0 or _supervisor is not None:
        return
    bot_host().on_place_freed = _place_freed.set
    _supervisor = threading.Thread(
        target=_supervise_forever, args=(interval,), name="bot-supervisor", daemon=True
    )
    _supervisor.start()


@worker_ready.connect
def _warm_voice(sender: object = None, **kwargs: object) -> None:
    """A bots worker loads the voice dependencies at start (``bot.warmup``), not on its first
    voice session; a misconfigured speech provider stops it with the variable named."""
    if _consumes_bots(sender):
        warm_on_start()


@worker_shutting_down.connect
def _shutting_down(**kwargs: object) -> None:
    """SIGTERM: stop supervising and drain this process's bots in the background (their
    sessions go back on the queue for the other workers)."""
    _stop_supervisor.set()
    _place_freed.set()
    threading.Thread(target=drain_host, name="bot-drain", daemon=True).start()


@worker_shutdown.connect
@worker_process_shutdown.connect
def _shut_down(**kwargs: object) -> None:
    """The process exits: wait for the drain (bounded), then write the chain anchors still
    queued (a pool process exits without running ``atexit``)."""
    drain_host()
    chain_anchor.flush(5.0)


_drained = threading.Event()
_drain_lock = threading.Lock()


def drain_host() -> None:
    """Drain this process's bot host once (``bot.hosting.BotHost.drain``)."""
    from bot.hosting import current_host
    from bot.session_runner import SHUTDOWN

    with _drain_lock:
        if _drained.is_set():
            return
        host = current_host()
        SHUTDOWN.set()
        if host is not None:
            handed = host.drain(
                timeout=DRAIN_SECONDS,
                relaunch=lambda key: run_session_bot.apply_async((str(key),), queue=BOTS_QUEUE),
            )
            logger.warning("drained: %d session(s) handed back to the queue", len(handed))
        _drained.set()
