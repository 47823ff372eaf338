"""Many exams per worker and the operator's SIGTERM, with real Celery worker processes, Postgres
and Redis (``bot.hosting``): a worker hosts several bots and keeps answering its control
channel; a full worker refuses more and a second worker (configured with the broker URL only)
takes them; a worker drained with SIGTERM hands its exams back and the other worker resumes
them within 5 s."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from bot.models import BotLease
from bot.services import StartResult, bot_start
from config.celery import app
from sessions.bot_channel import send_to_bot_sync
from tests.bot.conftest import ANSWERS, check_log, new_session, stored
from tests.bot.test_celery_resume import WORKER_ENV, bot_pid, count, examiner_turns, wait_for
from tests.bot.test_durable_inbox import ANSWERED
from tests.support.processes import asgi_server, celery_worker

pytestmark = [
    pytest.mark.services("postgres", "redis"),
    pytest.mark.celery,
    pytest.mark.django_db(transaction=True),
]

QUEUES = "bots,marking,default"
ENV = {**WORKER_ENV, "VIVA_BOT_LEASE_SECONDS": "8"}


def use_celery(settings: Any) -> None:
    settings.VIVA_BOT_RUNNER = "celery"
    settings.VIVA_LLM_PROVIDER = "offline"
    settings.VIVA_OFFLINE_EXAMINER_ALLOWED = True


def holder_of(session: Any) -> str:
    return str(BotLease.objects.get(pk=session.pk).holder)


def running_on(session: Any, worker: str) -> bool:
    lease = BotLease.objects.get(pk=session.pk)
    return lease.state == "running" and lease.holder.startswith(f"celery:{worker}:")


def starts_received(workers: list[str]) -> int:
    """How many ``run_session_bot`` tasks the workers have received (Celery's own stats)."""
    stats = app.control.inspect(destination=workers, timeout=5).stats() or {}
    return sum(s.get("total", {}).get("bot.tasks.run_session_bot", 0) for s in stats.values())


def test_a_full_worker_refuses_and_a_second_worker_takes_new_sessions(
    published: Any, settings: Any
) -> None:
    use_celery(settings)
    sessions = [new_session(published) for _ in range(3)]
    one_each = {**ENV, "VIVA_BOT_CAPACITY": "1"}
    with (
        celery_worker(queues=QUEUES, **one_each) as first,
        celery_worker(queues=QUEUES, **one_each) as second,
    ):
        for session in sessions[:2]:
            assert bot_start(session=session) is StartResult.STARTED
        for session in sessions[:2]:
            wait_for(session.pk, lambda ev: count(ev, "bot_ready") == 1, "bot_ready", 60)
        leases = [BotLease.objects.get(pk=s.pk) for s in sessions[:2]]
        hosts = {lease.holder.split(":")[1] for lease in leases}
        assert hosts == {first, second}, [  # one exam on each: neither over-committed
            (lease.holder, lease.state, lease.generation, lease.restarts) for lease in leases
        ]
        # Both workers still answer their control channel while hosting an exam.
        assert app.control.inspect(destination=[first, second], timeout=5).ping()
        # A third exam finds both full: it waits, no worker takes it.
        assert bot_start(session=sessions[2]) is StartResult.STARTED
        time.sleep(3)
        assert count(stored(sessions[2].pk), "bot_ready") == 0
        waiting = BotLease.objects.get(pk=sessions[2].pk)
        assert (waiting.state, waiting.holder) == ("starting", "queued")
        # It waits in the database, not circulating between the full workers (before: each
        # put it back on the queue every 0.5 s, for ever).
        received = starts_received([first, second])
        time.sleep(3)
        assert starts_received([first, second]) == received <= 3 + 3, received
        # A place frees: the worker whose exam ended takes the waiting start at once.
        ended = sessions[0]
        freed = holder_of(ended).split(":")[1]
        send_to_bot_sync(ended.pk, "stop")
        wait_for(sessions[2].pk, lambda ev: count(ev, "bot_ready") == 1, "bot_ready", 30)
        assert running_on(sessions[2], freed), holder_of(sessions[2])


def test_sigterm_drains_a_worker_and_the_other_resumes_its_exams_within_5_seconds(
    published: Any, settings: Any
) -> None:
    use_celery(settings)
    sessions = [new_session(published) for _ in range(2)]
    with celery_worker(queues=QUEUES, **ENV) as first:
        for session in sessions:
            assert bot_start(session=session) is StartResult.STARTED
        for session in sessions:
            wait_for(session.pk, lambda ev: count(ev, "bot_ready") == 1, "bot_ready", 60)
            send_to_bot_sync(session.pk, "candidate_ready")
            wait_for(session.pk, lambda ev: examiner_turns(ev) == 1, "the opening", 30)
        assert all(running_on(s, first) for s in sessions)  # two exams in one worker
        pid = bot_pid(sessions[0].pk, first)
        assert bot_pid(sessions[1].pk, first) == pid

        with celery_worker(queues=QUEUES, **ENV) as second:
            os.kill(pid, signal.SIGTERM)
            drained_at = time.monotonic()
            deadline = drained_at + 30
            while not all(running_on(s, second) for s in sessions):
                assert time.monotonic() < deadline, [holder_of(s) for s in sessions]
                time.sleep(0.05)
            resumed_in = time.monotonic() - drained_at
            assert resumed_in < 5.0, f"resumed after {resumed_in:.1f} s"
            for _ in range(100):
                if not os.path.exists(f"/proc/{pid}") or "Z" in _proc_state(pid):
                    break
                time.sleep(0.1)
            else:
                raise AssertionError("the drained worker did not exit")

            for session in sessions:
                before = examiner_turns(stored(session.pk))
                send_to_bot_sync(session.pk, "candidate_text", text=ANSWERS["warmup"][0])
                wait_for(session.pk, lambda ev, b=before: examiner_turns(ev) > b, "an answer", 30)

    for session in sessions:
        events = stored(session.pk)
        check_log(events)
        lease = BotLease.objects.get(pk=session.pk)
        # Handed over, not died: the drained bot released its lease.
        assert lease.generation == 2 and lease.restarts == 0
        assert [e["type"] for e in events].count("bot_ready") == 1


def _proc_state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[1].split()[0]
    except OSError:
        return "Z"


TECHNICAL = "technical problem"


def _spoken(events: list[dict[str, Any]]) -> list[str]:
    return [
        str(e["payload"].get("text", ""))
        for e in events
        if e["type"] in ("examiner_utterance_started", "examiner_utterance_final")
    ]


def short_silence_session() -> Any:
    """A session of the example whose text-mode silence window is 3 s (at every question)."""
    from publishing.services import version_publish
    from tests.factories import DraftPackageFactory, example_document

    document = example_document()
    for node in document["nodes"]:
        for handler in node.get("recoveryHandlers", []):
            if handler["scenario"] == "silence":
                handler["textAfterSec"] = 3
    draft = DraftPackageFactory(document=document)
    return new_session(version_publish(draft=draft, user=draft.owner).version)


def test_a_drain_hands_the_exam_over_silently_and_the_waiting_answer_is_read_first(
    settings: Any,
) -> None:
    """Issue #33: a planned drain (SIGTERM) is no fault the candidate pays for. The moved exam's
    log has ``bot_handover`` (released, then resumed) and no ``system_error``, recovery or
    "technical problem" line; the answer the candidate typed while no bot ran is read from the
    inbox before any timer, so no silence prompt precedes the examiner's answer to it."""
    from tests.bot.test_durable_inbox import room, start_exam, transcripts

    use_celery(settings)
    # A short silence window: a resumed bot that started its timers before reading its inbox
    # would prompt for silence before answering.
    exam_session = short_silence_session()
    session_id = exam_session.pk
    text = ANSWERS["q-dijkstra"][0]
    env = ENV
    with asgi_server(**env) as address:
        with celery_worker(queues=QUEUES, **env) as first:
            start_exam(address, exam_session, first)
            pid = bot_pid(session_id, first)
            os.kill(pid, signal.SIGTERM)
            wait_for(
                session_id,
                lambda ev: BotLease.objects.get(pk=session_id).state == "starting",
                "the lease handed back",
                30,
            )
        drained = stored(session_id)

        with room(address, exam_session) as candidate:
            candidate.answer(text)  # no bot runs: stored in the inbox, acknowledged
            time.sleep(4.0)  # longer than the silence window
            with celery_worker(queues=QUEUES, **env):
                events = wait_for(
                    session_id,
                    lambda ev: (
                        any(
                            e["type"] in ANSWERED and e["seq"] > transcripts(ev, text)[0]["seq"]
                            for e in ev
                        )
                        if transcripts(ev, text)
                        else False
                    ),
                    "the waiting answer answered by the resumed bot",
                    60,
                )
                time.sleep(1.0)
                events = stored(session_id)

    check_log(events)
    assert events[: len(drained)] == drained
    moved = events[len(drained) - 1 :]
    types = [e["type"] for e in moved]
    assert "system_error" not in types, types
    assert not [t for t in types if t.startswith("recovery_")], types
    assert not any(TECHNICAL in said.lower() for said in _spoken(events))
    # The waiting answer was the first thing the resumed bot acted on: no prompt before it.
    said = transcripts(events, text)[0]["seq"]
    prompts = [
        e
        for e in events[len(drained) :]
        if e["type"] == "examiner_utterance_final" and e["seq"] < said
    ]
    assert prompts == [], prompts
    assert len(transcripts(events, text)) == 1
    handovers = [e["payload"] for e in events if e["type"] == "bot_handover"]
    assert [h["phase"] for h in handovers] == ["released", "resumed"], handovers
    lease = BotLease.objects.get(pk=session_id)
    assert lease.restarts == 0
