"""A Celery-run bot killed mid-exam (``kill -9`` of its worker process): its lease expires, a
new worker's supervisor launches a new bot, which resumes the session at the node it was in;
the stored log has no gap and no duplicate. Real Postgres, Redis and Celery workers."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

import pytest

from bot.models import BotLease
from bot.services import StartResult, bot_start
from sessions.bot_channel import send_to_bot_sync
from tests.bot.conftest import ANSWERS, check_log, stored
from tests.support.processes import celery_worker

pytestmark = [
    pytest.mark.services("postgres", "redis"),
    pytest.mark.celery,
    pytest.mark.django_db(transaction=True),
]

WORKER_ENV = {
    "VIVA_BOT_RUNNER": "celery",
    "VIVA_LLM_PROVIDER": "offline",
    "VIVA_OFFLINE_EXAMINER_ALLOWED": "true",
    "VIVA_BOT_LEASE_SECONDS": "3",
    "VIVA_BOT_HEARTBEAT_SECONDS": "0.5",
    "VIVA_BOT_SUPERVISOR_SECONDS": "1",
    "VIVA_PIPECAT_LOG_LEVEL": "WARNING",
}


def wait_for(
    session_id: Any, predicate: Callable[[list[dict[str, Any]]], bool], what: str, timeout: float
) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        events = stored(session_id)
        if predicate(events):
            return events
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: last {[e['type'] for e in events][-15:]}")
        time.sleep(0.1)


def count(events: list[dict[str, Any]], type_: str) -> int:
    return sum(1 for e in events if e["type"] == type_)


def examiner_turns(events: list[dict[str, Any]]) -> int:
    return sum(
        1
        for e in events
        if e["type"] == "examiner_utterance_final" and e["payload"]["purpose"] != "bridge"
    )


def answer(session_id: Any, text: str, timeout: float = 30) -> list[dict[str, Any]]:
    """Type ``text`` and wait for the examiner's next turn (or the end)."""
    before = examiner_turns(stored(session_id))
    send_to_bot_sync(session_id, "candidate_text", text=text)
    events = wait_for(
        session_id,
        lambda ev: examiner_turns(ev) > before or count(ev, "exam_completed") > 0,
        f"the examiner's answer to {text!r}",
        timeout,
    )
    time.sleep(0.1)
    return events


def bot_pid(session_id: Any, worker: str) -> int:
    """The pid of the process running the session's bot, from its lease holder
    (``celery:<worker>:<pid>:<task>``), checked against the worker's command line. (A solo
    worker running a task cannot answer ``inspect``.)"""
    holder = BotLease.objects.get(pk=session_id).holder
    _, hostname, pid, _ = holder.split(":", 3)
    assert hostname == worker
    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
        assert worker.encode() in cmdline.read()
    return int(pid)


def current_node(events: list[dict[str, Any]]) -> str:
    return [e["payload"]["nodeId"] for e in events if e["type"] == "node_entered"][-1]


def test_a_killed_celery_bot_is_resumed_by_a_new_one_without_gap_or_duplicate(
    exam_session: Any, settings: Any
) -> None:
    settings.VIVA_BOT_RUNNER = "celery"
    settings.VIVA_LLM_PROVIDER = "offline"
    settings.VIVA_OFFLINE_EXAMINER_ALLOWED = True
    session_id = exam_session.pk

    with celery_worker(queues="bots,marking,default", **WORKER_ENV) as first:
        assert bot_start(session=exam_session) is StartResult.STARTED
        wait_for(session_id, lambda ev: count(ev, "bot_ready") == 1, "bot_ready", 60)
        send_to_bot_sync(session_id, "candidate_ready")
        wait_for(session_id, lambda ev: examiner_turns(ev) == 1, "the opening", 30)
        answer(session_id, ANSWERS["warmup"][0])
        events = answer(session_id, ANSWERS["q-dijkstra"][0])  # a follow-up is asked
        assert current_node(events) == "q-dijkstra"
        lease = BotLease.objects.get(pk=session_id)
        assert lease.state == "running" and lease.generation == 1 and lease.runner == "celery"
        os.kill(bot_pid(session_id, first), signal.SIGKILL)
        killed_at = stored(session_id)

    with celery_worker(queues="bots,marking,default", **WORKER_ENV):
        events = wait_for(
            session_id,
            lambda ev: any(
                e["type"] == "exam_state_changed"
                and e["payload"]["reason"] == "technical_recovered"
                for e in ev
            ),
            "the new bot's resume",
            90,
        )
        assert current_node(events) == "q-dijkstra"
        used: dict[str, int] = {"q-dijkstra": 1}
        for _ in range(20):
            if count(events, "exam_completed"):
                break
            node = current_node(events)
            options = ANSWERS[node]
            events = answer(session_id, options[min(used.get(node, 0), len(options) - 1)])
            used[node] = used.get(node, 0) + 1
        wait_for(
            session_id,
            lambda ev: BotLease.objects.get(pk=session_id).state == "finished",
            "the lease released as finished",
            30,
        )

    events = stored(session_id)
    check_log(events)
    # Nothing stored before the kill changed.
    assert events[: len(killed_at)] == killed_at
    nodes = [e["payload"]["nodeId"] for e in events if e["type"] == "node_entered"]
    assert nodes[:2] == ["warmup", "q-dijkstra"] and nodes[-2:] == ["wrapup", "end-normal"]
    assert nodes.count("q-dijkstra") == 1  # resumed there, not re-entered
    types = [e["type"] for e in events]
    assert types.count("bot_ready") == 1 and types.count("exam_completed") == 1
    after = events[len(killed_at) :]
    errors = [e["payload"] for e in after if e["type"] == "system_error"]
    assert errors[0]["code"] == "bot_fault"
    recovered = [e["payload"] for e in after if e["type"].startswith("recovery_")]
    assert recovered[0]["recoveryType"] == "network_issue"
    assert any(e["type"] == "recovery_resolved" for e in after)
    evidence = {
        t for e in events if e["type"] == "evidence_signal" for t in e["payload"]["targetIds"]
    }
    assert {"tgt-greedy-choice", "tgt-complexity"} <= evidence
    lease = BotLease.objects.get(pk=session_id)
    assert lease.generation == 2 and lease.restarts == 1 and lease.state == "finished"
