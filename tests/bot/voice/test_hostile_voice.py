"""Issue #14 in voice: a candidate who says "No, I want to continue" is never finished by the LLM.

The whole bot core (``bot.runners.run_bot``) on its voice path: the candidate's spoken answer
(eSpeak NG, made at test time) goes through Silero VAD to Deepgram's live recogniser, served by
the local protocol peer (``tests/support/speech_server.py``), which transcribes it as "No, I want
to continue."; the examiner's words are spoken by the OpenAI speech peer. The LLM is the red-team
model (``tests/support/redteam.py``) on the OpenAI-compatible server, claiming ``finish`` on
every request. The transcribed "no" is the candidate's act; the LLM's claim is refused and stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.audio import read_wav
from sessions.models import SessionEvent
from tests.bot.conftest import Watcher
from tests.bot.voice.support import ANSWER, spoken_wav
from tests.bot.voice.test_speech_peers import configure
from tests.bot.voice.test_voice_exam import Loudspeaker, Microphone, voice_exam_under_way
from tests.support.openai_server import OpenAICompatibleServer
from tests.support.redteam import CASES, HostileModel
from tests.support.speech_server import SpeechServer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services("postgres", "redis")]

NO = "No, I want to continue."
TURNS = 2


@pytest.fixture
def peer() -> Iterator[SpeechServer]:
    with SpeechServer() as server:
        yield server


def candidate_finals(watcher: Watcher) -> list[str]:
    return [
        e["payload"]["text"]
        for e in watcher.of("transcript_final")
        if e["payload"]["speaker"] == "candidate"
    ]


@pytest.mark.timeout(240)
def test_a_spoken_no_is_never_finished_by_the_llm(
    exam_session: Any, bot_settings: Any, peer: SpeechServer, tmp_path: Path
) -> None:
    configure(bot_settings, peer, stt="deepgram", tts="openai")
    peer.script(*[NO] * TURNS)
    model = HostileModel()
    model.turn(next(case for case in CASES if case.name == "finish claimed against 'continue'"))
    watcher = Watcher()
    microphone, loudspeaker = Microphone(), Loudspeaker()

    with OpenAICompatibleServer(default_reply=model) as server:
        bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
        bot_settings.VIVA_LLM_BASE_URL = server.base_url
        bot_settings.VIVA_LLM_API_KEY = "hostile-key"

        async def main() -> None:
            watcher.bind()
            pcm, rate = read_wav(await spoken_wav(tmp_path / "answer.wav", ANSWER))
            async with voice_exam_under_way(exam_session.pk, watcher, microphone, loudspeaker):
                for turn in range(1, TURNS + 1):
                    spoken = len(watcher.of("examiner_utterance_final"))
                    await microphone.speak(pcm, rate)
                    await watcher.until(
                        lambda w, n=turn: len(candidate_finals(w)) >= n,
                        timeout=30,
                        what=f"the candidate's spoken answer {turn}",
                    )
                    await watcher.until_count("examiner_utterance_final", spoken + 1, timeout=30)
                await asyncio.sleep(1.0)

        asyncio.run(asyncio.wait_for(main(), 180))

    # The spoken answers were transcribed and stored as the candidate's words.
    assert candidate_finals(watcher) == [NO] * TURNS
    events = [
        {"type": row.type, "payload": row.payload}
        for row in SessionEvent.objects.filter(session=exam_session).order_by("seq")
    ]
    types = [e["type"] for e in events]
    # The LLM claimed finish every time; the exam was never finished.
    assert "exam_completed" not in types
    first_no = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "transcript_final" and e["payload"]["speaker"] == "candidate"
    )
    refused = [
        e["payload"]
        for e in events[first_no:]
        if e["type"] == "guardrail_triggered"
        and str(e["payload"].get("guardrailId", "")).startswith("llm-claim-refused:finish")
    ]
    # One refused claim at least for each spoken "no" (the opening's own claim not counted).
    assert len(refused) >= TURNS, [e for e in events if e["type"] == "guardrail_triggered"]
    states = [e["payload"].get("toState") for e in events if e["type"] == "exam_state_changed"]
    assert not {"completed", "aborted"} & set(states), states
    # The examiner's claim never reached the candidate's ears as an ending.
    said = [e["payload"]["text"] for e in events if e["type"] == "examiner_utterance_final"]
    assert not any("examination is over" in text for text in said), said
    assert not any("examination is over" in s["input"] for s in peer.speeches)
