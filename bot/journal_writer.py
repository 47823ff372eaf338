"""The bot's writes to the session log, with their retries (no Pipecat here).

:class:`JournalWriter` stores through the :class:`~bot.journal.Journal` on the bot's database
threads (:class:`~bot.journal.DbThreads`):

* :meth:`~JournalWriter.record` stores decisions' events (and marks the candidate inputs they
  consumed), fenced by the controller's version. A database error is retried after each of
  :data:`PERSIST_RETRIES`, then becomes :class:`BotFailure`. A version conflict (someone else
  wrote) raises :class:`LogChanged`; events the store refuses (an EVT rule) raise
  :class:`DecisionRefused`. Neither is retried here: the inbox decides again.
* :meth:`~JournalWriter.append` stores events the bot emits itself, folding in what others wrote.
* :meth:`~JournalWriter.fold_in_other_writer`: after a conflict, stop (:class:`LeaseLost`) if
  another bot holds the session's lease, else rebuild the controller from the store.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from typing import Final

from django.db import DatabaseError

from bot.examiner_stats import CoreStats
from bot.journal import DbThreads, Journal
from bot.lease import Lease, holds
from ioa.events import payloads as p
from ioa.runtime import Decision
from sessions.event_store import EventsRefused, VersionConflict

logger = logging.getLogger(__name__)

PERSIST_RETRIES: Final = (0.2, 0.5, 1.0, 2.0)
"""Back-off (seconds) before retrying a failed write of a decision's events."""
FOREIGN_ATTEMPTS: Final = 3
"""Attempts at storing the bot's own events before they are given up (logged)."""


class LeaseLost(Exception):
    """Another bot took the session over: this one must stop writing at once."""


class BotFailure(Exception):
    """The bot cannot go on (its decisions cannot be stored); the runner restarts it."""


class DecisionRefused(Exception):
    """The event store refused a decision's events (an EVT rule); it was not stored."""


class LogChanged(Exception):
    """Someone else wrote to the session log since the controller last saw it."""


class JournalWriter:
    """See the module docstring."""

    def __init__(
        self, *, journal: Journal, db: DbThreads, lease: Lease | None, stats: CoreStats
    ) -> None:
        self.journal = journal
        self.db = db
        self.session_id: uuid.UUID = journal.session_id
        self._lease = lease
        self._stats = stats

    async def record(self, decisions: Sequence[Decision], inputs: tuple[str, ...] = ()) -> None:
        """Store the decisions' events and mark ``inputs`` processed, in one write."""
        if not any(d.events for d in decisions) and not inputs:
            return
        for delay in (*PERSIST_RETRIES, None):
            try:
                await self.db.run(
                    self.session_id, self.journal.record_many, decisions, inputs=inputs
                )
                return
            except VersionConflict as exc:
                raise LogChanged(str(exc)) from exc
            except EventsRefused as exc:
                raise DecisionRefused(str(exc)) from exc
            except DatabaseError as exc:
                if delay is None:
                    raise BotFailure(f"cannot store the session's events: {exc}") from exc
                self._stats.persist_retries += 1
                logger.warning("bot %s: storing events failed (%s); retrying", self.session_id, exc)
                await asyncio.sleep(delay)

    async def append(self, payloads: Sequence[p.Payload]) -> None:
        """Store events the bot emits itself (given up, logged, after a few attempts)."""
        for _ in range(FOREIGN_ATTEMPTS):
            try:
                await self.db.run(self.session_id, self.journal.append_foreign, payloads)
                return
            except VersionConflict:
                await self.fold_in_other_writer()
            except DatabaseError as exc:
                logger.warning("bot %s: storing bot events failed (%s)", self.session_id, exc)
                await asyncio.sleep(0.5)
        logger.error("bot %s: bot events could not be stored: %s", self.session_id, payloads)

    async def publish(self, payloads: Sequence[p.Payload]) -> None:
        """Hand events to the store once, without retries (the live caption, which the store
        broadcasts without keeping it)."""
        await self.db.run(self.session_id, self.journal.append_foreign, payloads)

    async def fold_in_other_writer(self) -> None:
        """Someone else wrote to the log: stop if it was another bot (:class:`LeaseLost`),
        else rebuild the controller from the store."""
        if self._lease is not None and not await self.db.run(self.session_id, holds, self._lease):
            raise LeaseLost(f"session {self.session_id}: another bot took over") from None
        await self.rebuild()

    async def rebuild(self) -> None:
        """Rebuild the controller from the store (drops an unstored decision)."""
        await self.db.run(self.session_id, self.journal.rebuild)

    async def resync(self) -> None:
        """Fold in events others stored since the controller last saw the log."""
        await self.db.run(self.session_id, self.journal.resync)
