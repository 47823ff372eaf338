"""A candidate who goes on speaking while the examiner's model is still thinking is not a fault
of the model (issue #30).

Seen in the recogniser-outage test on a loaded machine: the candidate spoke again while the
model's reply to their answer was still on its way; their speech interrupted it (Pipecat
cancels the request and ends the response empty), and the bot stored the cut response as the
model's fault (``model_empty_reply``), told the model its reply "could not be used" and asked
it again at once, while the candidate was still talking.

The whole bot core on its voice path: eSpeak NG speech through Silero VAD to Deepgram's live
recogniser on the local protocol peer, the examiner's words by the OpenAI speech peer, and the
model on the OpenAI-compatible server, which thinks for a few seconds over the first answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.audio import read_wav
from bot.turn_deadline import UNUSABLE_RETRY_NOTE
from tests.bot.conftest import Watcher
from tests.bot.test_model_faults import GOOD
from tests.bot.voice.support import ANSWER, spoken_wav
from tests.bot.voice.test_speech_peers import configure
from tests.bot.voice.test_voice_exam import Loudspeaker, Microphone, voice_exam_under_way
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply
from tests.support.speech_server import SpeechServer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services("postgres", "redis")]

FIRST = "I think it is greedy, because it always settles the closest vertex first."
SECOND = "Oh, and it only works when the edge weights are not negative."
THINKING_SECS = 6.0
"""How long the model thinks over the first answer: longer than the candidate's pause before
going on plus their second sentence."""


@contextmanager
def _peers(
    bot_settings: Any, model: Callable[[RecordedRequest], Reply]
) -> Iterator[OpenAICompatibleServer]:
    """The speech peer (Deepgram's live protocol hears FIRST, then SECOND; OpenAI's speech
    endpoint speaks) and ``model`` on the OpenAI-compatible server, configured for the bot."""
    with SpeechServer() as peer, OpenAICompatibleServer(default_reply=model) as server:
        configure(bot_settings, peer, stt="deepgram", tts="openai")
        peer.script(FIRST, SECOND)
        bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
        bot_settings.VIVA_LLM_BASE_URL = server.base_url
        yield server


def _finals(watcher: Watcher) -> list[dict[str, Any]]:
    return [e for e in watcher.of("transcript_final") if e["payload"]["speaker"] == "candidate"]


@pytest.mark.timeout(240)
def test_speech_over_the_models_thinking_is_no_model_fault(
    exam_session: Any, bot_settings: Any, tmp_path: Path
) -> None:
    slow: list[RecordedRequest] = []

    def model(request: RecordedRequest) -> Reply:
        said = " ".join(request.messages_with_role("user"))
        if FIRST in said and SECOND not in said and not slow:
            slow.append(request)
            return Reply.tool_call("report_observation", GOOD, thinking_secs=THINKING_SECS)
        return Reply.tool_call("report_observation", GOOD)

    watcher, microphone, loudspeaker = Watcher(), Microphone(), Loudspeaker()
    with _peers(bot_settings, model) as server:

        async def main() -> None:
            watcher.bind()
            pcm, rate = read_wav(await spoken_wav(tmp_path / "answer.wav", ANSWER))
            async with voice_exam_under_way(exam_session.pk, watcher, microphone, loudspeaker):
                await microphone.speak(pcm, rate)
                for _ in range(300):  # the model is thinking over the first answer
                    if slow:
                        break
                    await asyncio.sleep(0.05)
                assert slow, "the first answer never reached the model"
                await asyncio.sleep(0.5)
                spoken = len(watcher.of("examiner_utterance_final"))
                await microphone.speak(pcm, rate)  # ... and the candidate goes on
                await watcher.until(
                    lambda w: len(_finals(w)) >= 2, timeout=30, what="the second sentence"
                )
                await watcher.until_count("examiner_utterance_final", spoken + 1, timeout=30)
                await asyncio.sleep(1.5)  # a late fault or a second reply would be stored now

        asyncio.run(asyncio.wait_for(main(), 180))

    assert [e["payload"]["text"] for e in _finals(watcher)] == [FIRST, SECOND]
    # The cut response is nobody's fault: no model fault, and the model was never told that
    # its reply could not be used.
    faults = [e["payload"]["code"] for e in watcher.of("system_error")]
    assert not [code for code in faults if code.startswith("model_")], faults
    told = [
        r
        for r in server.requests
        if UNUSABLE_RETRY_NOTE
        in " ".join(r.messages_with_role("developer") + r.messages_with_role("system"))
    ]
    assert told == [], "the model was told its cut reply could not be used"
    # The examiner answered once the candidate had finished, with both sentences before it.
    second = _finals(watcher)[1]["seq"]
    answered = [e for e in watcher.of("examiner_utterance_final") if e["seq"] > second]
    assert answered, "the examiner never answered the candidate's whole answer"
    last = server.requests[-1]
    assert SECOND in " ".join(last.messages_with_role("user"))


DEADLINE_SECS = 4.0
"""A short turn deadline (the watch gives up at 80 %: 3.2 s), so that the candidate's going on
outlasts it, as a long second thought outlasts the default 10 s."""


@pytest.mark.timeout(240)
def test_a_long_going_on_after_a_cut_reply_is_not_talked_over_by_the_fallback(
    exam_session: Any, bot_settings: Any, tmp_path: Path
) -> None:
    # Seen in Chromium: the candidate went on after their turn had ended, their speech cut
    # the model's reply, and the turn's deadline, still counting from the first request, ran
    # out while they spoke: llm_timeout, and the fallback said the question again over them.
    def model(request: RecordedRequest) -> Reply:
        said = " ".join(request.messages_with_role("user"))
        if FIRST in said and SECOND not in said:
            return Reply.tool_call("report_observation", GOOD, thinking_secs=THINKING_SECS)
        return Reply.tool_call("report_observation", GOOD)

    watcher, microphone, loudspeaker = Watcher(), Microphone(), Loudspeaker()
    bot_settings.VIVA_BOT_TURN_DEADLINE_SECONDS = DEADLINE_SECS
    with _peers(bot_settings, model) as server:

        async def main() -> None:
            watcher.bind()
            pcm, rate = read_wav(await spoken_wav(tmp_path / "answer.wav", ANSWER))
            breath = bytes(int(0.15 * rate) * 2)  # inside one VAD segment
            going_on = breath.join([pcm] * 3)  # about 6 s of speech without a pause
            async with voice_exam_under_way(exam_session.pk, watcher, microphone, loudspeaker):
                asked = len(server.requests)
                await microphone.speak(pcm, rate)
                for _ in range(300):  # the first answer reached the model
                    if len(server.requests) > asked:
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.5)
                await microphone.speak(going_on, rate)  # ... and the candidate goes on
                await watcher.until(
                    lambda w: len(_finals(w)) >= 2, timeout=30, what="the second part"
                )
                await watcher.until(
                    lambda w: any(
                        e["seq"] > _finals(w)[1]["seq"] for e in w.of("examiner_utterance_final")
                    ),
                    timeout=30,
                    what="the examiner's reply to the whole answer",
                )
                await asyncio.sleep(1.0)

        asyncio.run(asyncio.wait_for(main(), 180))

    assert [e["payload"]["text"] for e in _finals(watcher)] == [FIRST, SECOND]
    faults = [e["payload"]["code"] for e in watcher.of("system_error")]
    assert "llm_timeout" not in faults, faults
    # No examiner utterance began while the candidate was speaking the second part.
    speaking = [
        e["payload"]
        for e in watcher.of("candidate_activity")
        if e["payload"].get("activity") == "speaking"
    ]
    starts = [a["atMs"] for a in speaking if a["state"] == "started"]
    stops = [a["atMs"] for a in speaking if a["state"] == "stopped"]
    assert len(starts) >= 2 and len(stops) >= 2, speaking
    going_on = (starts[1], stops[1])
    over = [
        e["payload"]
        for e in watcher.of("examiner_utterance_started")
        # an utterance without atMs was never said (cut before its first audio: payloads)
        if e["payload"].get("atMs") is not None
        and going_on[0] <= e["payload"]["atMs"] <= going_on[1]
    ]
    assert over == [], f"the examiner spoke over the candidate: {over}"
    assert SECOND in " ".join(server.requests[-1].messages_with_role("user"))
