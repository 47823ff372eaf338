"""``bot.journal_writer``: the bot's writes to the session log, against the real event store.

A writer whose controller is behind the log gets :class:`LogChanged` (not the store's own
exception); it folds the other writer's events in and writes again, unless another bot holds
the session's lease, when it must stop (:class:`LeaseLost`)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from bot.examiner_stats import CoreStats
from bot.journal import DbThreads, Journal, load_session
from bot.journal_writer import JournalWriter, LeaseLost, LogChanged
from bot.lease import acquire
from bot.models import BotLease
from ioa.runtime import BotReady, CandidateReady
from tests.bot.conftest import check_log, stored

pytestmark = pytest.mark.django_db(transaction=True)


def _writer(session_id: Any, db: DbThreads, lease: Any = None) -> JournalWriter:
    journal = Journal(load_session(session_id))
    return JournalWriter(journal=journal, db=db, lease=lease, stats=CoreStats())


def test_a_writer_behind_the_log_folds_the_other_writes_in_and_writes_again(
    exam_session: Any,
) -> None:
    other = Journal(load_session(exam_session.pk))
    db = DbThreads(1)
    writer = _writer(exam_session.pk, db)

    async def scenario() -> int:
        try:
            await db.run("other", other.record, other.controller.handle(BotReady()))
            with pytest.raises(LogChanged):
                await writer.record([writer.journal.controller.handle(BotReady())])
            await writer.fold_in_other_writer()
            folded = writer.journal.last_seq
            assert folded == other.last_seq > 0
            decision = writer.journal.controller.handle(CandidateReady(await_authorisation=False))
            assert decision.events
            await writer.record([decision])
            assert writer.journal.last_seq > folded
            return writer.journal.last_seq
        finally:
            await db.close_all()

    last = asyncio.run(scenario())
    log = stored(exam_session.pk)
    assert log[-1]["seq"] == last
    check_log(log)


def test_a_writer_whose_lease_another_bot_took_stops(exam_session: Any) -> None:
    mine = acquire(session_id=exam_session.pk, holder="a", runner="inline", ttl_seconds=30)
    BotLease.objects.filter(pk=exam_session.pk).update(expires_at=timezone.now() - timedelta(1))
    acquire(session_id=exam_session.pk, holder="b", runner="inline", ttl_seconds=30)

    db = DbThreads(1)
    writer = _writer(exam_session.pk, db, lease=mine)

    async def scenario() -> None:
        try:
            with pytest.raises(LeaseLost):
                await writer.fold_in_other_writer()
        finally:
            await db.close_all()

    asyncio.run(scenario())
