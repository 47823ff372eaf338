"""Many exams per worker process: the bot host.

A :class:`BotHost` is one asyncio event loop, in a daemon thread of the worker process, on which
many sessions' supervised bots (``bot.runners.run_bot``, each a Pipecat pipeline) run as tasks.
``bot.tasks.run_session_bot`` hands its session to the process's host (:func:`bot_host`) and
returns at once, so a Celery worker (any pool) keeps taking tasks and answering its control
channel while it runs exams.

* **Capacity.** ``VIVA_BOT_CAPACITY`` bots per worker process (default 100). A host that is
  full, or draining, refuses (:meth:`BotHost.host` returns ``False``) and the task puts the start
  back on the ``bots`` queue for another worker: a worker never over-commits.
* **The lease as before.** Each bot takes its session's lease, renews it from the host's loop and
  releases it when it stops; a process that dies stops renewing and the supervisor relaunches its
  sessions elsewhere (``bot.lease``, ``bot.tasks.supervise_once``).
* **Draining** (:meth:`BotHost.drain`, on a warm shutdown: SIGTERM): the host refuses new bots;
  its bots stop taking turns (``bot.session_runner.SHUTDOWN``), release their leases as
  ``starting`` and expired, and each session's start is put back on the queue at once, so another
  worker resumes it from the log within seconds.

Horizontal scale needs nothing beyond the broker URL: every worker consuming ``bots`` hosts what
it takes and supervises everyone's leases.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future

from bot.conf import bot_settings
from bot.runners import run_bot
from bot.session_runner import SHUTDOWN, Outcome

logger = logging.getLogger(__name__)


def capacity_setting() -> int:
    """``VIVA_BOT_CAPACITY``: how many bots one worker process hosts (default 100)."""
    return bot_settings().capacity


class BotHost:
    """See the module docstring."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.draining = False
        self._lock = threading.Lock()
        self._bots: dict[uuid.UUID, Future[Outcome]] = {}
        self.on_place_freed: Callable[[], None] | None = None
        """Called (from the host's thread) when a bot ended: a waiting start may take its
        place (``bot.tasks.host_queued``)."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="bot-host", daemon=True)
        self._thread.start()

    @property
    def hosted(self) -> list[uuid.UUID]:
        with self._lock:
            return [key for key, bot in self._bots.items() if not bot.done()]

    def host(self, session_id: uuid.UUID | str, *, holder: str, runner: str = "celery") -> bool:
        """Run the session's bot here; ``False`` when full or draining (nothing started)."""
        key = uuid.UUID(str(session_id))
        with self._lock:
            running = self._bots.get(key)
            if running is not None and not running.done():
                return True  # already here: a re-delivered start
            live = sum(1 for bot in self._bots.values() if not bot.done())
            if self.draining or live >= self.capacity:
                return False
            bot = asyncio.run_coroutine_threadsafe(
                run_bot(key, runner=runner, holder=holder), self._loop
            )
            self._bots[key] = bot
        bot.add_done_callback(lambda done: self._finished(key, done))
        return True

    def _finished(self, key: uuid.UUID, bot: Future[Outcome]) -> None:
        with self._lock:
            if self._bots.get(key) is bot:
                del self._bots[key]
        if not bot.cancelled() and bot.exception() is not None:
            logger.error("bot %s: failed: %s", key, bot.exception())
        if self.on_place_freed is not None:
            self.on_place_freed()

    def drain(self, *, timeout: float, relaunch: Callable[[uuid.UUID], None] | None) -> list[str]:
        """Stop hosting (module docstring); returns the sessions handed back."""
        with self._lock:
            self.draining = True
            bots = dict(self._bots)
        SHUTDOWN.set()
        handed_back: list[str] = []
        deadline = time.monotonic() + timeout
        for key, bot in bots.items():
            try:
                outcome = bot.result(timeout=max(0.1, deadline - time.monotonic()))
            except Exception as exc:
                logger.warning("bot %s: did not stop cleanly: %s", key, exc)
                continue
            if outcome is Outcome.STOPPED and relaunch is not None:
                try:
                    relaunch(key)
                    handed_back.append(str(key))
                except Exception:
                    logger.exception("bot %s: could not be handed back", key)
        return handed_back


_host: BotHost | None = None
_host_lock = threading.Lock()


def bot_host() -> BotHost:
    """This process's host (created on first use)."""
    global _host
    with _host_lock:
        if _host is None:
            _host = BotHost(capacity_setting())
        return _host


def warm_up() -> None:
    """Import what a bot needs (Pipecat, the configured LLM provider's module) before the first
    exam arrives: a cold import inside the host's loop would stall every bot it hosts."""
    from bot.providers import build_llm, resolve

    config = bot_settings()
    try:
        build_llm(config, resolve(config))
    except Exception as exc:  # reported again, clearly, when a bot starts
        logger.warning("bot host warm-up: %s", exc)


def current_host() -> BotHost | None:
    """This process's host, if it ever hosted a bot."""
    return _host
