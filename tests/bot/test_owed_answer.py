"""An answer the examiner still owed when the candidate dropped is answered when they return
(issue #33), through the real pipeline: the exam room's socket (the real consumer) → the bot
(Pipecat pipeline + FlowManager) → the scripted OpenAI-compatible model → the controller.

The candidate types their answer to the core question and closes the room while the model is
still thinking; the exam pauses itself after the grace period, the late reply is not spoken into
the empty room; back, the candidate is welcomed and the examiner responds to the stored answer
(the model is asked to, and its follow-up is what they hear), instead of asking the question
again as if they had said nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from bot.runners import run_bot
from bot.session_runner import BotOptions
from ioa.runtime import texts
from tests.bot.conftest import Watcher, check_log, stored
from tests.bot.test_text_exam import (
    candidate_socket,
    close_connection,
    observation,
    signal,
)
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = (
    "It keeps settling the unvisited vertex with the smallest tentative distance and relaxes its "
    "edges, so once a vertex is settled its distance is final."
)
FOLLOW_UP = "Which data structure would you use to find that vertex quickly?"
SLOW_REPLY_SECS = 4.0


def model(request: RecordedRequest) -> Reply:
    """A model that is slow on the core answer the first time; asked again (the owed reply),
    it answers at once with the same follow-up."""
    if not request.stream:
        return Reply.text("The candidate described Dijkstra's algorithm.")
    recent = " ".join(str(m.get("content") or "") for m in request.messages[-3:])
    if "enjoyed graph algorithms" in recent:
        return Reply.tool_call(
            "report_observation", observation("Thank you for that.", evidenceSufficient=True)
        )
    if "smallest tentative distance" in recent or texts.OWED_ANSWER_INSTRUCTION[:40] in recent:
        owed = texts.OWED_ANSWER_INSTRUCTION[:40] in recent
        return Reply.tool_call(
            "report_observation",
            observation(
                FOLLOW_UP,
                signals=[signal("tgt-greedy-choice", ANSWER[:120])],
                needsFollowUp=True,
                followUpType="probe",
            ),
            thinking_secs=0.0 if owed else SLOW_REPLY_SECS,
        )
    return Reply.tool_call("report_observation", observation("Please go on."))


async def _answer_then_leave(socket: WebsocketCommunicator, watcher: Watcher) -> None:
    await socket.send_json_to({"kind": "answer", "text": ANSWER})
    await watcher.until(
        lambda w: any(e["payload"].get("text") == ANSWER for e in w.of("transcript_final")),
        what="the stored answer",
    )
    await socket.disconnect()  # the tab closes while the model is still thinking


def _paused(w: Watcher, reason: str) -> bool:
    return any(e["payload"].get("reason") == reason for e in w.of("exam_state_changed"))


def test_an_answer_owed_when_the_candidate_dropped_is_answered_when_they_return(
    exam_session: Any, bot_settings: Any
) -> None:
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    bot_settings.VIVA_LLM_MODEL = "scripted-test-model"
    bot_settings.VIVA_CONNECTION_GRACE_SECONDS = 1.0
    watcher = Watcher()

    with OpenAICompatibleServer() as server:
        server.script(*([model] * 12))
        bot_settings.VIVA_LLM_BASE_URL = server.base_url

        async def main() -> list[str]:
            watcher.bind()
            bot = asyncio.create_task(
                run_bot(exam_session.pk, options=BotOptions(on_stored=watcher))
            )
            await watcher.until_count("bot_ready", 1)
            socket = await candidate_socket(exam_session)
            await socket.send_json_to({"kind": "candidate_ready"})
            await watcher.until_count("examiner_utterance_final", 1)
            await socket.send_json_to({"kind": "answer", "text": "I enjoyed graph algorithms."})
            await watcher.until(lambda w: "q-dijkstra" in w.nodes(), what="the core question")
            await watcher.until_count("examiner_utterance_final", 3)
            await _answer_then_leave(socket, watcher)
            await watcher.until(lambda w: _paused(w, "candidate_disconnected"), what="the pause")
            await asyncio.sleep(SLOW_REPLY_SECS + 1)  # the late reply arrives while paused
            heard_before_return = watcher.spoken()
            socket = await candidate_socket(exam_session)  # back
            await watcher.until(lambda w: _paused(w, "candidate_returned"), what="the return")
            await watcher.until(lambda w: FOLLOW_UP in w.spoken(), what="the owed reply")
            await socket.disconnect()
            bot.cancel()
            await asyncio.gather(bot, return_exceptions=True)
            await sync_to_async(close_connection, thread_sensitive=True)()
            return heard_before_return

        heard_before_return = asyncio.run(asyncio.wait_for(main(), 120))
        owed_requests = [
            r
            for r in server.requests
            if any(texts.OWED_ANSWER_INSTRUCTION[:40] in str(m.get("content")) for m in r.messages)
        ]

    events = stored(exam_session.pk)
    check_log(events)
    assert FOLLOW_UP not in heard_before_return  # nothing said into the empty room
    resumed_at = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "exam_state_changed" and e["payload"].get("reason") == "candidate_returned"
    )
    after = [
        e["payload"]["text"] for e in events[resumed_at:] if e["type"] == "examiner_utterance_final"
    ]
    question = next(
        e["payload"]["text"]
        for e in events
        if e["type"] == "examiner_utterance_final"
        and e["payload"].get("purpose") == "question"
        and e["payload"].get("nodeId") == "q-dijkstra"
    )
    assert after[:2] == [texts.ENGLISH.resumed, FOLLOW_UP], after
    assert question not in after  # not asked again as if they had said nothing
    # The model was asked for the owed reply once, with the candidate's answer in its context.
    assert len(owed_requests) == 1
    assert ANSWER in owed_requests[0].messages_with_role("user")
    # The evidence of the answer is recorded once, from the reply given after the return.
    signals = [e for e in events if e["type"] == "evidence_signal"]
    assert [e["payload"]["targetIds"] for e in signals] == [["tgt-greedy-choice"]]
    assert events.index(signals[0]) > resumed_at
