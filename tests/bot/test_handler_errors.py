"""Chapter 07 §11 in the bot: a failing handler logs, stores ``system_error`` and the
conversation continues with a neutral fallback; malformed tool arguments get the controller's
fallback; a provider outage takes the technical recovery path (``Fault`` → pause → resume)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.runners import run_bot
from bot.session_runner import BotOptions, Outcome
from ioa.runtime import Observation, RuntimeController
from tests.bot.conftest import (
    ANSWERS,
    Candidate,
    Watcher,
    check_log,
    drive,
    start_exam,
    stored,
)
from tests.support.openai_server import OpenAICompatibleServer, Reply

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = {
    "signals": [],
    "answerQuality": "substantive",
    "needsFollowUp": False,
    "evidenceSufficient": True,
    "anxietyDetected": False,
    "spokenText": "Thank you.",
}


def run_exam(session: Any, watcher: Watcher, answers: Any = ANSWERS) -> Outcome:
    async def main() -> Outcome:
        watcher.bind()
        bot = asyncio.create_task(run_bot(session.pk, options=BotOptions(on_stored=watcher)))
        await watcher.until_count("bot_ready", 1)
        await drive(Candidate(session.pk, watcher), watcher, answers)
        return await asyncio.wait_for(bot, 60)

    return asyncio.run(asyncio.wait_for(main(), 300))


def test_a_failing_handler_stores_system_error_and_the_exam_goes_on(
    exam_session: Any, bot_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = RuntimeController.handle
    failures: list[str] = []

    def flaky(self: RuntimeController, item: Any) -> Any:
        if isinstance(item, Observation) and not failures:
            failures.append(self.state.current_node_id or "")
            raise RuntimeError("evidence ledger unavailable")
        return original(self, item)

    monkeypatch.setattr(RuntimeController, "handle", flaky)
    watcher = Watcher()
    outcome = run_exam(exam_session, watcher)

    assert outcome is Outcome.FINISHED
    events = stored(exam_session.pk)
    check_log(events)
    errors = [e["payload"] for e in events if e["type"] == "system_error"]
    assert [(e["code"], e["component"], e["severity"]) for e in errors] == [
        ("observation_handler_failed", "bot", "error")
    ]
    assert errors[0]["details"]["nodeId"] == "warmup" and failures == ["warmup"]
    # The conversation went on: the LLM was given the fallback, reported again, and the exam
    # reached its normal end.
    nodes = [e["payload"]["nodeId"] for e in events if e["type"] == "node_entered"]
    assert nodes[:2] == ["warmup", "q-dijkstra"] and nodes[-1] == "end-normal"
    assert [e["payload"]["reason"] for e in events if e["type"] == "exam_completed"] == [
        "all_nodes_visited"
    ]


def test_malformed_tool_arguments_get_the_fallback_and_the_llm_reports_again(
    exam_session: Any, bot_settings: Any
) -> None:
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    watcher = Watcher()
    with OpenAICompatibleServer(
        default_reply=Reply.tool_call("report_observation", GOOD)
    ) as server:
        bot_settings.VIVA_LLM_BASE_URL = server.base_url
        server.script(
            Reply.tool_call("report_observation", {**GOOD, "answerQuality": "brilliant"}),
            Reply.tool_call("report_observation", GOOD),
        )

        async def main() -> None:
            bot, candidate = await start_exam(exam_session.pk, watcher)
            await candidate.answer("I enjoyed graph algorithms most.")
            await watcher.until(lambda w: "q-dijkstra" in w.nodes(), what="q-dijkstra")
            await candidate.says("stop")
            from sessions.bot_channel import send_to_bot

            await send_to_bot(exam_session.pk, "stop")
            assert await asyncio.wait_for(bot, 60) is Outcome.STOPPED

        asyncio.run(asyncio.wait_for(main(), 300))
        second = server.requests[1]

    events = stored(exam_session.pk)
    check_log(events)
    errors = [e["payload"] for e in events if e["type"] == "system_error"]
    assert [e["code"] for e in errors] == ["invalid_observation"]
    tool = [m for m in second.messages if m["role"] == "tool"][-1]
    assert '"status": "error"' in tool["content"]
    assert [e["payload"]["nodeId"] for e in events if e["type"] == "node_entered"] == [
        "warmup",
        "q-dijkstra",
    ]


def test_an_llm_outage_answers_each_turn_then_pauses_the_exam_and_resumes_it(
    exam_session: Any, bot_settings: Any
) -> None:
    """One failed turn gets the fallback (the question again, an ``llm_provider_error``);
    repeated provider failure (three turns) pauses the exam under a technical recovery, which
    resumes it where it was."""
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    watcher = Watcher()
    with OpenAICompatibleServer(
        default_reply=Reply.tool_call("report_observation", GOOD)
    ) as server:
        bot_settings.VIVA_LLM_BASE_URL = server.base_url
        # 500s: the OpenAI client retries twice, then the LLM service reports the error; three
        # turns in a row.
        server.script(*[Reply.error(500, "provider unavailable")] * 9)

        async def main() -> None:
            bot, candidate = await start_exam(exam_session.pk, watcher)
            opening = watcher.spoken()[-1]
            for attempt in (1, 2):
                await candidate.answer(f"I enjoyed graph algorithms most ({attempt}).")
                assert watcher.spoken()[-1] == opening  # the fallback: the question again
            await candidate.says("I enjoyed graph algorithms most (3).")
            await watcher.until(
                lambda w: any(
                    e["payload"]["reason"] == "technical_recovered"
                    for e in w.of("exam_state_changed")
                ),
                what="the technical pause and resume",
            )
            await candidate.answer("Graph algorithms, again.")
            await watcher.until(lambda w: "q-dijkstra" in w.nodes(), what="q-dijkstra")
            from sessions.bot_channel import send_to_bot

            await send_to_bot(exam_session.pk, "stop")
            await asyncio.wait_for(bot, 60)

        asyncio.run(asyncio.wait_for(main(), 300))

    events = stored(exam_session.pk)
    check_log(events)
    types = [e["type"] for e in events]
    errors = [e["payload"] for e in events if e["type"] == "system_error"]
    assert [e["code"] for e in errors][:3] == [
        "llm_provider_error",
        "llm_provider_error",
        "llm_fault",
    ]
    assert all(e["component"] == "bot" for e in errors)
    reasons = [e["payload"]["reason"] for e in events if e["type"] == "exam_state_changed"]
    assert "technical_fault" in reasons and "technical_recovered" in reasons
    assert "recovery_started" in types and "recovery_resolved" in types
    recoveries = [e["payload"] for e in events if e["type"] == "recovery_started"]
    assert recoveries[0]["recoveryType"] == "network_issue"
    # nothing was lost: all three answers are in the log
    said = [e["payload"]["text"] for e in events if e["type"] == "transcript_final"]
    assert sum("graph algorithms most" in t for t in said) == 3


def test_a_permanent_llm_failure_ends_at_the_technical_failure_node(
    exam_session: Any, bot_settings: Any
) -> None:
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    watcher = Watcher()
    with OpenAICompatibleServer(
        default_reply=Reply.tool_call("report_observation", GOOD)
    ) as server:
        bot_settings.VIVA_LLM_BASE_URL = server.base_url
        server.script(Reply.error(401, "invalid api key"))

        async def main() -> Outcome:
            bot, candidate = await start_exam(exam_session.pk, watcher)
            await candidate.says("I enjoyed graph algorithms most.")
            return await asyncio.wait_for(bot, 60)

        outcome = asyncio.run(asyncio.wait_for(main(), 300))

    assert outcome is Outcome.FINISHED
    events = stored(exam_session.pk)
    check_log(events)
    nodes = [e["payload"]["nodeId"] for e in events if e["type"] == "node_entered"]
    assert nodes == ["warmup", "end-technical"]
    completed = [e["payload"] for e in events if e["type"] == "exam_completed"]
    assert [c["reason"] for c in completed] == ["system_error"]
    # Nothing is lost: the candidate's answer is in the log, and the closing was spoken.
    assert any(e["type"] == "transcript_final" for e in events)
    assert [e["payload"]["text"] for e in events if e["type"] == "examiner_utterance_final"][
        -1
    ].startswith("We have run into a technical problem")
