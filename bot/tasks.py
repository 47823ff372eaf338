"""Celery tasks of the ``bots`` queue (``CELERY_TASK_ROUTES``: ``bot.tasks.*``).

* ``bot.tasks.run_session_bot(session_id)`` — runs one session's supervised bot in this worker
  process (``bot.runners.run_bot``) until the exam ends, the bot is stopped or another bot holds
  the session (then it returns at once: a redelivered task is harmless).
* ``bot.tasks.supervise_bots()`` — launches a new bot for every session whose bot died (lease
  expired, ``bot.lease.claim_expired``). Every worker that consumes the ``bots`` queue also runs
  it in a background thread every ``VIVA_BOT_SUPERVISOR_SECONDS`` (so surviving workers restart
  the bots of a dead one); with Celery beat, schedule it too (docs/bot.md).

On a warm shutdown the worker's bots stop and mark their sessions for an immediate restart
elsewhere (``bot.session_runner.SHUTDOWN``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid
from typing import Any

from celery import shared_task
from celery.signals import worker_ready, worker_shutting_down

from bot.conf import bot_settings

logger = logging.getLogger(__name__)

BOTS_QUEUE = "bots"


@shared_task(name="bot.tasks.run_session_bot", bind=True, acks_late=True)
def run_session_bot(self: Any, session_id: str) -> str:
    """Run the session's bot here (see the module docstring); returns the outcome."""
    from bot.runners import run_bot

    holder = f"celery:{self.request.hostname or 'worker'}:{os.getpid()}:{self.request.id}"[:200]
    outcome = asyncio.run(run_bot(uuid.UUID(session_id), runner="celery", holder=holder))
    return outcome.value


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


def _supervise_forever(interval: float) -> None:
    from django.db import close_old_connections, connections

    try:
        while not _stop_supervisor.wait(interval):
            close_old_connections()
            try:
                supervise_once()
            except Exception:
                logger.exception("bot supervisor pass failed")
    finally:
        connections.close_all()


def _consumes_bots(sender: Any) -> bool:
    queues = getattr(getattr(sender, "task_consumer", None), "queues", None)
    if not queues:
        return True
    return any(getattr(queue, "name", None) == BOTS_QUEUE for queue in queues)


@worker_ready.connect
def _start_supervisor(sender: Any = None, **kwargs: Any) -> None:
    global _supervisor
    interval = bot_settings().supervisor_seconds
    if interval <= 0 or _supervisor is not None or not _consumes_bots(sender):
        return
    _supervisor = threading.Thread(
        target=_supervise_forever, args=(interval,), name="bot-supervisor", daemon=True
    )
    _supervisor.start()


@worker_shutting_down.connect
def _shutting_down(**kwargs: Any) -> None:
    from bot.session_runner import SHUTDOWN

    _stop_supervisor.set()
    SHUTDOWN.set()
