"""Every fault of the examiner's model is on the record (issue #31), through the real bot: the
scripted OpenAI-compatible server on 127.0.0.1, the Pipecat pipeline, the ``FlowManager``, the
runtime controller and the event store.

The model misbehaves once, on the first request for the candidate's answer, then behaves: the
candidate still gets exactly one reply, and the fault is stored as a ``system_error`` (component
``bot``, no text for the candidate) that the proctor's timeline shows and the candidate's
projection carries no message of."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ioa.events import Audience
from sessions.bot_channel import send_to_bot
from sessions.selectors import events_after
from tests.bot.conftest import Watcher, check_log, start_exam, stored
from tests.support.openai_server import OpenAICompatibleServer, Reply, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = {
    "signals": [],
    "answerQuality": "substantive",
    "needsFollowUp": False,
    "evidenceSufficient": False,
    "anxietyDetected": False,
    "spokenText": "Thank you. Which part did you enjoy most?",
}
ANSWER = "I enjoyed graph algorithms most."
DEADLINE = 3.0

FAULTS = {
    "unparsable tool call": (
        Reply.raw_tool_call("report_observation", '{"signals": [,,, "spokenText": '),
        "model_unparsable_tool_call",
    ),
    "unknown function": (
        Reply.tool_call("delete_all_records", {"confirm": True}),
        "model_unknown_tool",
    ),
    "empty completion": (Reply.empty(), "model_empty_reply"),
    "text without a tool call": (
        Reply.text("The candidate seems unsure; the rubric wants relaxation."),
        "model_text_without_tool",
    ),
    "two reports in one response": (
        Reply.tool_calls_of(
            ToolCall("report_observation", GOOD),
            ToolCall("report_observation", {**GOOD, "spokenText": "A second answer?"}),
        ),
        "model_extra_report",
    ),
    "model timeout": (Reply.hang(30), "llm_timeout"),
}


def run_one_turn(session: Any, settings: Any, bad: Reply) -> list[str]:
    """Answer the warm-up once while the model's first reply is ``bad``; returns what the
    examiner said after the answer."""
    settings.VIVA_LLM_PROVIDER = "openai_compatible"
    settings.VIVA_BOT_TURN_DEADLINE_SECONDS = DEADLINE
    watcher = Watcher()
    with OpenAICompatibleServer(
        default_reply=Reply.tool_call("report_observation", GOOD)
    ) as server:
        settings.VIVA_LLM_BASE_URL = server.base_url
        server.script(bad)

        async def main() -> list[str]:
            bot, candidate = await start_exam(session.pk, watcher)
            before = len(watcher.spoken())
            await candidate.answer(ANSWER, timeout=DEADLINE * 3)
            await asyncio.sleep(1.0)  # a second answer or a late event would arrive now
            said = watcher.spoken()[before:]
            await send_to_bot(session.pk, "stop")
            await asyncio.wait_for(bot, 60)
            return said

        return asyncio.run(asyncio.wait_for(main(), 120))


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_model_fault_is_stored_and_the_candidate_is_answered(
    fault: str, exam_session: Any, bot_settings: Any
) -> None:
    bad, code = FAULTS[fault]
    said = run_one_turn(exam_session, bot_settings, bad)

    assert len(said) == 1, said  # exactly one reply, never the model's free text
    assert "rubric" not in said[0] and "A second answer" not in said[0]
    events = stored(exam_session.pk)
    check_log(events)
    errors = [e["payload"] for e in events if e["type"] == "system_error"]
    matching = [e for e in errors if e["code"] == code]
    assert len(matching) == 1, errors
    error = matching[0]
    assert (error["component"], error["severity"]) == ("bot", "warning")
    assert error.get("userMessage") is None  # nothing for the candidate to read
    assert error["details"]["nodeId"] == "warmup"
    # The proctor's timeline shows it; the candidate's projection carries no message.
    proctor = events_after(session_id=exam_session.pk, audience=Audience.PROCTOR)
    shown = [e["payload"] for e in proctor if e["type"] == "system_error"]
    assert any(p["code"] == code and p["message"] for p in shown)
    candidate = events_after(session_id=exam_session.pk, audience=Audience.CANDIDATE)
    for event in (e for e in candidate if e["type"] == "system_error"):
        assert set(event["payload"]) <= {"type", "code", "severity", "userMessage"}
        assert not event["payload"].get("userMessage")


def test_a_reply_that_is_fine_stores_no_fault(exam_session: Any, bot_settings: Any) -> None:
    said = run_one_turn(exam_session, bot_settings, Reply.tool_call("report_observation", GOOD))

    assert said == [GOOD["spokenText"]]
    assert not [e for e in stored(exam_session.pk) if e["type"] == "system_error"]
