"""Proctor actions end to end: ``proctoring.actions.action_perform`` → the channel layer → a real
running bot (Pipecat pipeline, the offline examiner) → the runtime controller → stored events,
and the bot's answer back to the service. Also: what happens without a bot, idempotency keys,
input checks and the proctor's authorisation of the start."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.utils import timezone

from bot.models import BotLease
from bot.runners import run_bot
from bot.session_runner import BotOptions
from proctoring.actions import (
    ActionInvalid,
    IdempotencyConflict,
    action_perform,
    proctor_id,
    session_for_proctor,
)
from sessions.models import ExamSession, ProctorActionRequest, SessionEvent
from tests.bot.conftest import Candidate, Watcher, new_session, publish_example
from tests.factories import CandidateFactory, ProctorFactory

pytestmark = pytest.mark.django_db(transaction=True)

INSTRUCTION = "Please sit a little closer to your microphone."
TIMEOUT = 60.0


@pytest.fixture
def bot_settings(settings: Any) -> Any:
    """Fast, deterministic bot settings (as tests/bot use) with the offline examiner."""
    settings.VIVA_BOT_HEARTBEAT_SECONDS = 0.5
    settings.VIVA_BOT_LEASE_SECONDS = 5
    settings.VIVA_BOT_FAULT_RETRY_SECONDS = 0.5
    settings.VIVA_PIPECAT_LOG_LEVEL = "WARNING"
    settings.VIVA_OFFLINE_EXAMINER_ALLOWED = True
    settings.VIVA_LLM_PROVIDER = "offline"
    return settings


@pytest.fixture
def exam(db: Any) -> ExamSession:
    session = new_session(publish_example())
    return session


@pytest.fixture
def proctor(exam: ExamSession) -> Any:
    user = ProctorFactory()
    exam.sitting.proctors.add(user)
    return user


def perform(**kwargs: Any) -> Awaitable[Any]:
    """``action_perform`` from async test code (in a thread, as a view would run it); the
    thread's database connection is closed afterwards (the test database is dropped later)."""

    def call() -> Any:
        try:
            return action_perform(**kwargs)
        finally:
            connection.close()

    return sync_to_async(call)()


def stored(session: ExamSession, type_: str) -> list[SessionEvent]:
    return list(SessionEvent.objects.filter(session=session, type=type_).order_by("seq"))


async def with_bot(
    session: ExamSession, body: Callable[[Watcher], Awaitable[None]], timeout: float = 240
) -> None:
    """Run the session's bot while ``body`` drives it; stop the bot afterwards."""
    watcher = Watcher()

    async def main() -> None:
        watcher.bind()
        stop = asyncio.Event()
        bot = asyncio.create_task(
            run_bot(session.pk, options=BotOptions(on_stored=watcher, stop=stop))
        )
        try:
            await watcher.until_count("bot_ready", 1)
            await body(watcher)
        finally:
            stop.set()
            await asyncio.wait_for(bot, 60)

    await asyncio.wait_for(main(), timeout)


def test_each_action_reaches_the_controller_and_is_recorded_with_the_proctor_and_reason(
    exam: ExamSession, proctor: Any, bot_settings: Any
) -> None:
    outcomes: dict[str, Any] = {}

    async def body(watcher: Watcher) -> None:
        candidate = Candidate(exam.pk, watcher)
        await candidate.ready()
        await watcher.until_count("examiner_utterance_final", 1)

        # An immediate instruction is spoken now, then the examiner is back at its node.
        outcomes["instruct"] = await perform(
            session=exam,
            user=proctor,
            action="instruct",
            mode="immediate",
            text=INSTRUCTION,
            reason="The candidate's audio is very faint.",
        )
        await watcher.until(lambda w: INSTRUCTION in w.spoken(), TIMEOUT, "the instruction")
        await watcher.until(
            lambda w: any(
                e["payload"]["status"] == "delivered" for e in w.of("proctor_instruction")
            ),
            TIMEOUT,
            "the instruction delivered",
        )
        for action, extra in (
            ("extend_time", {"seconds": 120, "scope": "node"}),
            ("pause", {}),
            ("resume", {}),
            ("flag_irregularity", {"category": "staff"}),
            ("skip_node", {}),
        ):
            outcomes[action] = await perform(
                session=exam, user=proctor, action=action, reason=f"Reason for {action}.", **extra
            )
        outcomes["again-resume"] = await perform(
            session=exam, user=proctor, action="resume", reason="Not paused."
        )
        outcomes["terminate"] = await perform(
            session=exam, user=proctor, action="terminate", reason="The building is evacuated."
        )
        await watcher.until_count("exam_completed", 1)
        # Over, but the bot may still be speaking the closing: a late report is still recorded.
        outcomes["late"] = await perform(
            session=exam,
            user=proctor,
            action="flag_irregularity",
            category="candidate",
            reason="Notes were found on the desk afterwards.",
        )

    asyncio.run(with_bot(exam, body))

    late = outcomes.pop("late").request
    assert late.status == "recorded"
    (late_event,) = SessionEvent.objects.filter(session=exam, correlation_id=str(late.pk))
    assert late_event.source == "system" and late_event.payload["category"] == "candidate"
    for name, outcome in outcomes.items():
        if name == "again-resume":
            continue
        assert outcome.done, (name, outcome.request.status, outcome.request.message)
        assert outcome.request.event_ids, name
    ignored = outcomes["again-resume"].request
    assert (ignored.status, ignored.code) == ("ignored", "not_applicable")
    assert "in_progress" in ignored.message

    # The log: each action once, naming the proctor, with the reason, correlated with its request.
    actions = [e for e in stored(exam, "proctor_action") if e.source == "runtime_controller"]
    assert [e.payload["action"] for e in actions] == [
        "extend_time",
        "pause",
        "resume",
        "flag_irregularity",
        "skip_node",
        "terminate",
    ]
    for event in actions:
        name = event.payload["action"]
        assert event.payload["actor"] == proctor_id(proctor)
        assert event.payload["reason"] == (
            "The building is evacuated." if name == "terminate" else f"Reason for {name}."
        )
        assert event.correlation_id == str(outcomes[name].request.pk)
        assert str(event.event_id) in outcomes[name].request.event_ids
        assert event.source == "runtime_controller"
    assert actions[0].payload["scope"] == "node" and actions[0].payload["seconds"] == 120
    assert actions[3].payload["category"] == "staff"
    instruction = stored(exam, "proctor_instruction")
    assert [e.payload["status"] for e in instruction] == ["issued", "delivered"]
    assert {e.correlation_id for e in instruction} == {str(outcomes["instruct"].request.pk)}
    assert instruction[0].payload["proctorId"] == proctor_id(proctor)
    assert instruction[0].payload["reason"] == "The candidate's audio is very faint."
    spoken = [e.payload["text"] for e in stored(exam, "examiner_utterance_final")]
    assert INSTRUCTION in spoken
    states = [e.payload["toState"] for e in stored(exam, "exam_state_changed")]
    assert "paused" in states and states[-1] == "aborted"
    exam.refresh_from_db()
    assert exam.state == "aborted"


def test_without_a_bot_an_action_is_refused_and_an_irregularity_is_recorded(
    exam: ExamSession, proctor: Any
) -> None:
    outcome = action_perform(session=exam, user=proctor, action="pause", reason="Toilet break.")
    request = outcome.request
    assert (request.status, request.code) == ("refused", "bot_unavailable")
    assert "No examiner bot is running" in request.message
    assert not SessionEvent.objects.filter(session=exam).exists()

    report = action_perform(
        session=exam,
        user=proctor,
        action="flag_irregularity",
        category="environment",
        reason="A phone rang in the room.",
    ).request
    assert report.status == "recorded"
    (event,) = stored(exam, "proctor_action")
    assert event.source == "system"
    assert event.correlation_id == str(report.pk)
    assert event.payload == {
        "type": "proctor_action",
        "actor": proctor_id(proctor),
        "action": "flag_irregularity",
        "reason": "A phone rang in the room.",
        "category": "environment",
    }
    assert report.event_ids == [str(event.event_id)]


def test_an_unanswered_action_is_unconfirmed(exam: ExamSession, proctor: Any) -> None:
    # A lease that looks alive but no bot listens (it hangs): the service does not wait forever.
    BotLease.objects.create(
        session=exam,
        state=BotLease.State.RUNNING,
        holder="test:hung",
        expires_at=timezone.now() + timedelta(minutes=5),
    )
    request = action_perform(
        session=exam, user=proctor, action="pause", reason="Check.", timeout=0.3
    ).request
    assert (request.status, request.code) == ("unconfirmed", "bot_timeout")
    assert "did not confirm" in request.message


def test_an_idempotency_key_returns_the_first_request(exam: ExamSession, proctor: Any) -> None:
    first = action_perform(
        session=exam, user=proctor, action="pause", reason="Break.", idempotency_key="k-1"
    )
    again = action_perform(
        session=exam, user=proctor, action="pause", reason="Break.", idempotency_key="k-1"
    )
    assert not first.replayed and again.replayed
    assert again.request.pk == first.request.pk
    assert ProctorActionRequest.objects.filter(session=exam).count() == 1
    with pytest.raises(IdempotencyConflict):
        action_perform(
            session=exam, user=proctor, action="resume", reason="Break.", idempotency_key="k-1"
        )
    # Keys are per proctor: another proctor's same key is a new request.
    other = ProctorFactory()
    exam.sitting.proctors.add(other)
    theirs = action_perform(
        session=exam, user=other, action="pause", reason="Break.", idempotency_key="k-1"
    )
    assert not theirs.replayed and theirs.request.pk != first.request.pk


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"action": "pause", "reason": "   "}, "reason"),
        ({"action": "dance", "reason": "x"}, "action"),
        ({"action": "extend_time", "reason": "x", "seconds": 0, "scope": "node"}, "seconds"),
        ({"action": "extend_time", "reason": "x", "seconds": 5000, "scope": "node"}, "seconds"),
        ({"action": "extend_time", "reason": "x", "seconds": 60, "scope": "day"}, "scope"),
        ({"action": "instruct", "reason": "x", "mode": "whisper", "text": "Hi"}, "mode"),
        ({"action": "instruct", "reason": "x", "mode": "queued", "text": " "}, "text"),
        ({"action": "flag_irregularity", "reason": "x", "category": "weather"}, "category"),
    ],
)
def test_bad_input_is_refused_before_anything_is_recorded(
    exam: ExamSession, proctor: Any, kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(ActionInvalid) as refused:
        action_perform(session=exam, user=proctor, **kwargs)
    assert refused.value.field == field
    assert not ProctorActionRequest.objects.exists()


def test_a_proctor_of_another_sitting_and_a_candidate_find_no_session(
    exam: ExamSession, proctor: Any
) -> None:
    assert session_for_proctor(user=proctor, session_id=exam.pk) == exam
    assert session_for_proctor(user=ProctorFactory(), session_id=exam.pk) is None
    assert session_for_proctor(user=exam.candidate, session_id=exam.pk) is None
    assert session_for_proctor(user=CandidateFactory(), session_id=uuid.uuid4()) is None


def test_the_proctor_authorises_the_start_when_the_sitting_asks_for_it(
    exam: ExamSession, proctor: Any, bot_settings: Any
) -> None:
    exam.sitting.proctor_authorises_start = True
    exam.sitting.save(update_fields=["proctor_authorises_start"])
    results: dict[str, Any] = {}

    async def body(watcher: Watcher) -> None:
        await Candidate(exam.pk, watcher).ready()
        await watcher.until(
            lambda w: any(e["payload"]["toState"] == "ready" for e in w.of("exam_state_changed")),
            TIMEOUT,
            "ready",
        )
        await asyncio.sleep(0.5)
        results["before"] = [e["payload"]["toState"] for e in watcher.of("exam_state_changed")]
        results["authorise"] = await perform(
            session=exam, user=proctor, action="authorise_start", reason="Identity checked."
        )
        await watcher.until_count("examiner_utterance_final", 1)

    asyncio.run(with_bot(exam, body))
    assert results["before"][-1] == "ready"  # waited for the proctor
    assert results["authorise"].done
    (action,) = stored(exam, "proctor_action")
    assert action.payload["action"] == "authorise_start"
    assert action.payload["reason"] == "Identity checked."
    states = [e.payload["toState"] for e in stored(exam, "exam_state_changed")]
    assert states[-2:] == ["ready", "in_progress"]
