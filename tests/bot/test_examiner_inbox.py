"""``bot.examiner_inbox``: the examiner's input actor, against the real event store.

The inbox's :class:`~bot.examiner_inbox.Follower` here records what it is handed (the seam
``ExaminerCore`` implements), so the test sees the order: stored first, then applied, then told.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from bot.examiner_inbox import DecisionInbox
from bot.examiner_stats import CoreStats
from bot.journal import DbThreads, Journal, load_session
from bot.journal_writer import JournalWriter
from bot.usage import UsageLedger
from ioa.runtime import BotReady, CandidateReady, Decision, Effect, RuntimeInput
from tests.bot.conftest import check_log, stored

pytestmark = pytest.mark.django_db(transaction=True)


class RecordingFollower:
    def __init__(self, writes: list[int]) -> None:
        self.calls: list[tuple[str, Any]] = []
        self._writes = writes

    async def apply(self, effects: Sequence[Effect]) -> None:
        self.calls.append(("apply", len(self._writes)))

    def decided(self, item: RuntimeInput, decision: Decision) -> None:
        self.calls.append(("decided", type(item).__name__))


def test_inputs_that_queue_up_are_stored_in_one_write_then_applied_in_order(
    exam_session: Any,
) -> None:
    writes: list[int] = []

    def on_stored(batch: Sequence[Mapping[str, Any]]) -> None:
        writes.append(len(batch))

    journal = Journal(load_session(exam_session.pk), on_stored=on_stored)
    db = DbThreads(1)
    stats = CoreStats()
    writer = JournalWriter(journal=journal, db=db, lease=None, stats=stats)
    follower = RecordingFollower(writes)
    inbox = DecisionInbox(
        writer=writer, stats=stats, usage=UsageLedger(providers={}), follower=follower
    )

    async def scenario() -> None:
        try:
            inbox.post(BotReady("text"))
            inbox.post(CandidateReady(await_authorisation=False))
            inbox.start()
            await inbox.close()  # takes no more inputs, finishes those handed in
        finally:
            await db.close_all()

    asyncio.run(scenario())
    assert len(writes) == 1 and writes[0] == len(stored(exam_session.pk))
    # Both were stored (one write) before the first was applied; each applied, then told.
    assert follower.calls == [
        ("apply", 1),
        ("decided", "BotReady"),
        ("apply", 1),
        ("decided", "CandidateReady"),
    ]
    assert stats.inputs == 2
    check_log(stored(exam_session.pk))
    assert inbox.closed and not inbox.failed.is_set()
