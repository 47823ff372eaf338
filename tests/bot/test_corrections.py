"""A candidate's correction of a misheard answer, through the real pipeline (issue #30).

The exam room's socket (the real consumer) stores a ``correction`` frame, the channel layer
carries it to the bot (Pipecat pipeline + FlowManager), the controller records it and hands the
words to the examiner model (the scripted OpenAI-compatible server, which records every
request) as the candidate's message; the model's evidence from them is cited on the correction
turn. The misheard answer is sent as the recogniser would report it: a final transcript below
the confidence threshold.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from bot.channel_inputs import CORRECTION_REFUSED_MESSAGE
from bot.runners import run_bot
from bot.session_runner import BotOptions
from ioa.runtime.texts import CORRECTION_INSTRUCTION, ENGLISH
from sessions.bot_channel import send_to_bot
from tests.bot.conftest import Watcher, stored
from tests.bot.test_text_exam import (
    candidate_socket,
    close_connection,
    frames,
    observation,
    signal,
)
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply

pytestmark = pytest.mark.django_db(transaction=True)

HEARD = "it keeps sell thing the unvisited vortex with this mall is tentative this stance"
SAID = "It keeps settling the unvisited vertex with the smallest tentative distance."


def _model(request: RecordedRequest) -> Reply:
    if not request.stream:
        return Reply.text("The candidate talked about graph algorithms.")
    users = request.messages_with_role("user")
    last = users[-1] if users else ""
    if "enjoyed graph algorithms" in last:
        return Reply.tool_call(
            "report_observation", observation("Thank you.", evidenceSufficient=True)
        )
    if "smallest tentative distance" in last:
        return Reply.tool_call(
            "report_observation",
            observation(
                "Which data structure would you use to find that vertex quickly?",
                signals=[signal("tgt-greedy-choice", last[:200])],
                needsFollowUp=True,
                followUpType="probe",
            ),
        )
    # The misheard words: the model would judge them unclear and go on.
    return Reply.tool_call(
        "report_observation",
        observation("Could you explain that a little more?", answerQuality="unclear"),
    )


def test_a_typed_correction_reaches_the_examiner_as_the_answer(
    exam_session: Any, bot_settings: Any
) -> None:
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    watcher = Watcher()
    with OpenAICompatibleServer(default_reply=_model) as server:
        bot_settings.VIVA_LLM_BASE_URL = server.base_url

        async def main() -> list[dict[str, Any]]:
            watcher.bind()
            bot = asyncio.create_task(
                run_bot(exam_session.pk, options=BotOptions(on_stored=watcher))
            )
            await watcher.until_count("bot_ready", 1)
            socket = await candidate_socket(exam_session)
            try:
                await socket.send_json_to({"kind": "candidate_ready", "id": "ready-1"})
                await watcher.until_count("examiner_utterance_final", 1)
                await socket.send_json_to(
                    {"kind": "answer", "id": "a-1", "text": "I enjoyed graph algorithms most."}
                )
                # The candidate answers once the question was asked (not as soon as the node
                # is entered: on a busy machine the question came after the answer).
                await watcher.until(
                    lambda w: any(
                        e["payload"]["nodeId"] == "q-dijkstra"
                        and e["payload"]["purpose"] == "question"
                        for e in w.of("examiner_utterance_final")
                    ),
                    what="the first question",
                )
                spoken = watcher.count("examiner_utterance_final")
                # The recogniser's report of the answer: words it was unsure of.
                await send_to_bot(exam_session.pk, "candidate_text", text=HEARD, confidence=0.4)
                await watcher.until(
                    lambda w: bool(
                        {ENGLISH.stt_reprompt, ENGLISH.stt_check}
                        & {e["payload"]["text"] for e in w.of("examiner_utterance_final")[spoken:]}
                    ),
                    what="the re-prompt",
                )
                misheard = next(
                    e["payload"]["turnId"]
                    for e in watcher.of("transcript_final")
                    if e["payload"]["text"] == HEARD
                )
                await socket.send_json_to(
                    {"kind": "correction", "id": "fix-1", "turnIds": [misheard], "text": SAID}
                )
                await watcher.until(
                    lambda w: (
                        "Which data structure would you use to find that vertex quickly?"
                        in [e["payload"]["text"] for e in w.of("examiner_utterance_final")]
                    ),
                    what="the examiner's answer to the correction",
                )
                # The same correction again from a second tab (a page from before sends one
                # turnId): received, then refused by the controller. The page hears why.
                await socket.send_json_to(
                    {"kind": "correction", "id": "fix-2", "turnId": misheard, "text": SAID}
                )
                await watcher.until(
                    lambda w: any(
                        e["payload"]["code"] == "correction_refused" for e in w.of("system_error")
                    ),
                    what="the refusal of the second correction",
                )
                received = []
                while not await socket.receive_nothing(timeout=0.3):
                    received.append(await socket.receive_json_from(timeout=5))
                # What a page (re)opened now is sent: the refusal, projected for the candidate.
                reopened = await candidate_socket(exam_session)
                try:
                    received += [f for f in await frames(reopened) if f.get("kind") == "event"]
                finally:
                    await reopened.disconnect()
                return received
            finally:
                bot.cancel()
                await asyncio.gather(bot, return_exceptions=True)
                await socket.disconnect()
                await sync_to_async(close_connection, thread_sensitive=True)()

        received = asyncio.run(asyncio.wait_for(main(), 120))
        requests = [r for r in server.requests if r.stream]

    assert {"kind": "ack", "id": "fix-1", "duplicate": False} in received
    assert {"kind": "ack", "id": "fix-2", "duplicate": False} in received
    refusals = [
        f["event"]["payload"]
        for f in received
        if f.get("kind") == "event" and f["event"]["type"] == "system_error"
    ]
    # The candidate gets the reason in words, nothing of the controller's internals.
    assert refusals == [
        {
            "type": "system_error",
            "code": "correction_refused",
            "severity": "warning",
            "userMessage": CORRECTION_REFUSED_MESSAGE,
        }
    ]
    events = stored(exam_session.pk)
    payloads = {
        t: [e["payload"] for e in events if e["type"] == t] for t in {e["type"] for e in events}
    }
    (refused,) = payloads["system_error"]
    assert refused["details"] == {
        "inputId": "fix-2",
        "turnIds": [misheard_id(events)],
        "text": SAID,
    }
    assert "already corrected" in refused["message"]
    (corrected,) = payloads["transcript_corrected"]
    assert corrected["how"] == "typed" and corrected["originalText"] == HEARD
    correction = next(
        p for p in payloads["transcript_final"] if p["turnId"] == corrected["correctionTurnId"]
    )
    assert (correction["text"], correction["confidence"]) == (SAID, 1.0)
    # The model was asked about the candidate's words, as their message, and told why.
    asked = next(r for r in requests if SAID in r.messages_with_role("user"))
    assert CORRECTION_INSTRUCTION in asked.messages_with_role("developer")
    # Its evidence is the candidate's corrected words, cited on the correction turn.
    (evidence,) = [p for p in payloads["evidence_signal"] if p["nodeId"] == "q-dijkstra"]
    assert evidence["turnIds"] == [corrected["correctionTurnId"]]


def misheard_id(events: list[dict[str, Any]]) -> str:
    return next(
        e["payload"]["turnId"]
        for e in events
        if e["type"] == "transcript_final" and e["payload"]["text"] == HEARD
    )
