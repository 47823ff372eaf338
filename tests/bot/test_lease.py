"""One live bot per session: the lease, its fencing, ``bot_start``'s idempotence, and two
runners for one session (the second refuses)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from bot.journal import Journal, load_session
from bot.lease import (
    LeaseRefused,
    acquire,
    claim_expired,
    holds,
    queue_start,
    release,
    renew,
    renewed_within,
    request_start,
    take_queued,
)
from bot.models import BotLease
from bot.runners import run_bot
from bot.services import StartResult, bot_start
from bot.session_runner import BotOptions, Outcome
from ioa.runtime import BotReady
from sessions.event_store import VersionConflict
from tests.bot.conftest import Watcher, check_log, stored
from tests.bot.test_capacity import waiting

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_live_lease_refuses_a_second_holder_and_an_expired_one_is_taken_over(
    exam_session: Any,
) -> None:
    first = acquire(session_id=exam_session.pk, holder="a", runner="inline", ttl_seconds=30)
    with pytest.raises(LeaseRefused, match="a live bot holds the session"):
        acquire(session_id=exam_session.pk, holder="b", runner="inline", ttl_seconds=30)
    assert renew(first, ttl_seconds=30) and holds(first)

    BotLease.objects.filter(pk=exam_session.pk).update(expires_at=timezone.now() - timedelta(1))
    second = acquire(session_id=exam_session.pk, holder="b", runner="celery", ttl_seconds=30)
    assert second.generation == first.generation + 1 and second.restarts == 1
    # The old holder is fenced off: no renewal, no release.
    assert not renew(first, ttl_seconds=30) and not holds(first)
    assert not release(first, state=BotLease.State.RELEASED)
    assert release(second, state=BotLease.State.RELEASED)


def test_a_second_renewer_sees_a_renewal_held_lease_only(exam_session: Any) -> None:
    """The runner's keeper skips its renewal when the heartbeat renewed: only a successful
    renewal counts, and a released or superseded lease never does."""
    first = acquire(session_id=exam_session.pk, holder="a", runner="inline", ttl_seconds=30)
    assert not renewed_within(first, 60)
    assert renew(first, ttl_seconds=30) and renewed_within(first, 60)
    assert not renewed_within(first, 0)
    BotLease.objects.filter(pk=exam_session.pk).update(expires_at=timezone.now() - timedelta(1))
    second = acquire(session_id=exam_session.pk, holder="b", runner="inline", ttl_seconds=30)
    assert not renew(first, ttl_seconds=30)  # superseded: a failed renewal is not recorded
    assert not renewed_within(second, 60)  # and the old generation's never counts for the new
    assert release(first, state=BotLease.State.RELEASED) is False
    assert not renewed_within(first, 60)
    assert renew(second, ttl_seconds=30) and renewed_within(second, 60)
    release(second, state=BotLease.State.RELEASED)
    assert not renewed_within(second, 60)


def test_the_session_log_fences_a_bot_that_lost_its_lease(exam_session: Any) -> None:
    stale = Journal(load_session(exam_session.pk))
    fresh = Journal(load_session(exam_session.pk))
    fresh.record(fresh.controller.handle(BotReady()))
    with pytest.raises(VersionConflict):
        stale.record(stale.controller.handle(BotReady()))
    check_log(stored(exam_session.pk))


def test_bot_start_is_idempotent(
    exam_session: Any, bot_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    launched: list[uuid.UUID] = []
    monkeypatch.setattr("bot.runners.start_inline", lambda sid, **kw: launched.append(sid))
    bot_settings.VIVA_BOT_RUNNER = "inline"
    assert bot_start(session=exam_session) is StartResult.STARTED
    assert bot_start(session=exam_session) is StartResult.ALREADY_RUNNING
    assert launched == [exam_session.pk]
    # A start that no bot took up in time can be asked again.
    BotLease.objects.filter(pk=exam_session.pk).update(expires_at=timezone.now() - timedelta(1))
    assert bot_start(session=exam_session.pk) is StartResult.STARTED
    assert launched == [exam_session.pk, exam_session.pk]


def test_the_supervisor_claims_each_dead_bot_once(exam_session: Any) -> None:
    lease = acquire(session_id=exam_session.pk, holder="a", runner="celery", ttl_seconds=30)
    assert claim_expired(grace_seconds=60) == []
    BotLease.objects.filter(pk=exam_session.pk).update(expires_at=timezone.now() - timedelta(1))
    assert claim_expired(grace_seconds=60) == [exam_session.pk]
    assert claim_expired(grace_seconds=60) == []
    row = BotLease.objects.get(pk=exam_session.pk)
    assert row.state == BotLease.State.STARTING and row.holder == "dead:a"
    assert not renew(lease, ttl_seconds=30)
    taken = acquire(session_id=exam_session.pk, holder="b", runner="celery", ttl_seconds=30)
    assert taken.restarts == 1
    assert request_start(session_id=exam_session.pk, runner="celery", grace_seconds=60) is False


def test_a_lease_a_draining_host_handed_back_is_not_counted_as_a_death(exam_session: Any) -> None:
    """The supervisor may see the handed-back lease (``starting``, expired) before the relaunched
    start takes it: relaunching it is right, calling it a crash is not."""
    lease = acquire(session_id=exam_session.pk, holder="a", runner="celery", ttl_seconds=30)
    assert release(lease, state=str(BotLease.State.STARTING), error="host shut down")
    assert claim_expired(grace_seconds=60) == [exam_session.pk]
    assert BotLease.objects.get(pk=exam_session.pk).holder == "a"
    taken = acquire(session_id=exam_session.pk, holder="b", runner="celery", ttl_seconds=30)
    assert (taken.generation, taken.restarts) == (2, 0)


def test_two_runners_for_one_session_the_second_refuses(
    exam_session: Any, bot_settings: Any
) -> None:
    watcher = Watcher()

    async def main() -> tuple[Outcome, Outcome]:
        watcher.bind()
        first = asyncio.create_task(
            run_bot(exam_session.pk, runner="inline", options=BotOptions(on_stored=watcher))
        )
        await watcher.until_count("bot_ready", 1)
        second = await asyncio.wait_for(
            run_bot(exam_session.pk, runner="celery", options=BotOptions(on_stored=watcher)), 10
        )
        from sessions.bot_channel import send_to_bot

        await send_to_bot(exam_session.pk, "stop")
        return second, await asyncio.wait_for(first, 20)

    second, first = asyncio.run(asyncio.wait_for(main(), 300))

    assert second is Outcome.REFUSED
    assert first is Outcome.STOPPED
    events = stored(exam_session.pk)
    check_log(events)
    assert [e["type"] for e in events].count("bot_ready") == 1
    row = BotLease.objects.get(pk=exam_session.pk)
    assert row.state == BotLease.State.RELEASED and row.generation == 1
    assert row.runner == "inline" and row.bot_ready_ms is not None


def test_a_stopped_bot_resumes_where_the_session_was(exam_session: Any, bot_settings: Any) -> None:
    """Stopped in the middle of the exam and started again: the new run restores the
    controller from the log and resumes at the same node (through a bot fault)."""
    from tests.bot.conftest import ANSWERS, start_exam

    watcher = Watcher()

    async def main() -> None:
        from sessions.bot_channel import send_to_bot

        bot, candidate = await start_exam(exam_session.pk, watcher)
        await candidate.answer(ANSWERS["warmup"][0])
        await candidate.answer(ANSWERS["q-dijkstra"][0])
        await send_to_bot(exam_session.pk, "stop")
        assert await asyncio.wait_for(bot, 60) is Outcome.STOPPED

        bot = asyncio.create_task(run_bot(exam_session.pk, options=BotOptions(on_stored=watcher)))
        await watcher.until(
            lambda w: any(
                e["payload"]["reason"] == "technical_recovered" for e in w.of("exam_state_changed")
            ),
            what="the resume",
        )
        await candidate.answer(ANSWERS["q-dijkstra"][1])
        await send_to_bot(exam_session.pk, "stop")
        assert await asyncio.wait_for(bot, 60) is Outcome.STOPPED

    asyncio.run(asyncio.wait_for(main(), 300))

    events = stored(exam_session.pk)
    check_log(events)
    nodes = [e["payload"]["nodeId"] for e in events if e["type"] == "node_entered"]
    assert nodes == ["warmup", "q-dijkstra"]
    types = [e["type"] for e in events]
    assert types.count("bot_ready") == 1
    assert "recovery_started" in types and "recovery_resolved" in types
    evidence = [
        t for e in events if e["type"] == "evidence_signal" for t in e["payload"]["targetIds"]
    ]
    assert evidence == ["tgt-greedy-choice", "tgt-complexity"]
    row = BotLease.objects.get(pk=exam_session.pk)
    assert row.generation == 2 and row.restarts == 0


def _waiting_start(seconds_ago: float) -> Any:
    """A session whose start was requested ``seconds_ago`` and found every worker full."""
    session = waiting(seconds_ago)
    assert queue_start(session.pk)
    return session


def test_waiting_starts_are_taken_oldest_first_and_each_once() -> None:
    newest, oldest, middle = _waiting_start(5), _waiting_start(90), _waiting_start(30)
    assert claim_expired(grace_seconds=30) == []  # waiting is not lost
    assert take_queued(limit=2, grace_seconds=30) == [oldest.pk, middle.pk]
    assert take_queued(limit=5, grace_seconds=30) == [newest.pk]
    assert take_queued(limit=5, grace_seconds=30) == []
    assert BotLease.objects.get(pk=oldest.pk).holder == ""


def test_a_lost_start_keeps_its_place_in_the_queue() -> None:
    # A start no bot took within the grace is relaunched by the supervisor; before, it went
    # to the back of the queue the room shows (its request time was reset).
    first, second = _waiting_start(60), _waiting_start(10)
    taken = take_queued(limit=1, grace_seconds=0)
    assert taken == [first.pk]
    assert claim_expired(grace_seconds=30) == [first.pk]
    requested = BotLease.objects.get(pk=first.pk).requested_at
    assert requested < BotLease.objects.get(pk=second.pk).requested_at


def test_a_start_that_needs_no_bot_is_not_queued(exam_session: Any) -> None:
    lease = acquire(session_id=exam_session.pk, holder="a", runner="celery", ttl_seconds=30)
    assert not queue_start(lease.session_id)  # a bot holds it
