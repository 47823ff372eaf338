"""A candidate who stops to think in the middle of an answer keeps their question (issue #30).

Seen before: a 2.5-4 s pause inside the warm-up answer ended the spoken turn, the examiner moved
on to the Dijkstra question, and the rest of the warm-up answer was taken as the answer to it.

The whole bot core runs a real session (``bot.runners.run_bot``, the offline examiner, Postgres
or SQLite), with the recogniser and the voice served by the local protocol peers (OpenAI's
transcription and speech endpoints). The candidate's answer is spoken by eSpeak NG and played
at the wire's pace, with a thinking pause inside it. Both parts of the answer must be stored at
the warm-up node, and the examiner must say nothing until the answer is over.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pipecat.audio.utils import create_file_resampler

from bot.audio import VOICE_IN_SAMPLE_RATE, voice_io
from bot.runners import run_bot
from bot.session_runner import BotOptions
from bot.voice.espeak import Voice, engine
from tests.bot.conftest import Candidate, Watcher
from tests.bot.voice.test_speech_peers import configure
from tests.bot.voice.test_voice_exam import Loudspeaker, Microphone
from tests.support.speech_server import SpeechServer

pytestmark = pytest.mark.django_db(transaction=True)

ANSWERS = [
    pytest.param(
        ("I enjoyed graph algorithms most, especially, um,", 4.0, "shortest paths."),
        Voice(name="en-us+f2", rate_wpm=150),
        id="filler-4s",
    ),
    pytest.param(
        ("The part I liked best was the one about", 3.0, "minimum spanning trees."),
        Voice(name="en-gb", rate_wpm=140),
        id="open-word-3s",
    ),
]


async def _said(text: str, voice: Voice) -> bytes:
    espeak = engine()
    pcm = await asyncio.to_thread(espeak.synthesize, text, voice)
    return await create_file_resampler().resample(pcm, espeak.sample_rate, VOICE_IN_SAMPLE_RATE)


@pytest.mark.parametrize(("answer", "voice"), ANSWERS)
def test_a_thinking_pause_inside_the_warm_up_answer_keeps_the_warm_up_question(
    exam_session: Any,
    bot_settings: Any,
    tmp_path: Path,
    answer: tuple[str, float, str],
    voice: Voice,
) -> None:
    first, pause, rest = answer
    watcher = Watcher()
    microphone = Microphone()
    loudspeaker = Loudspeaker()
    with SpeechServer() as peer:
        configure(bot_settings, peer, stt="openai_compatible", tts="openai_compatible")
        peer.script(first, rest)

        async def main() -> None:
            watcher.bind()
            options = BotOptions(
                io_factory=lambda: voice_io(input=microphone, output=loudspeaker),
                on_stored=watcher,
            )
            bot = asyncio.create_task(run_bot(exam_session.pk, options=options))
            try:
                await watcher.until_count("bot_ready", 1)
                await Candidate(exam_session.pk, watcher).ready()
                await watcher.until_count("examiner_utterance_final", 1, timeout=30)
                silence = bytes(int(pause * VOICE_IN_SAMPLE_RATE) * 2)
                pcm = await _said(first, voice) + silence + await _said(rest, voice)
                await microphone.speak(pcm + bytes(VOICE_IN_SAMPLE_RATE * 2), VOICE_IN_SAMPLE_RATE)
                await watcher.until_count("examiner_utterance_final", 2, timeout=30)
            finally:
                bot.cancel()
                await asyncio.gather(bot, return_exceptions=True)

        asyncio.run(asyncio.wait_for(main(), 120))

    finals = [e["payload"] for e in watcher.of("transcript_final")]
    candidate = [t for t in finals if t["speaker"] == "candidate"]
    # Both parts of the answer were heard at the warm-up, the question it answers.
    assert [t["text"] for t in candidate] == [first, rest], candidate
    assert {t["nodeId"] for t in candidate} == {"warmup"}, candidate
    # The examiner waited for the whole answer: its reply began after the second part.
    started = watcher.of("examiner_utterance_started")
    assert len(started) >= 2
    second_part = next(e for e in watcher.of("transcript_final") if e["payload"]["text"] == rest)
    assert started[1]["seq"] > second_part["seq"], [e["payload"] for e in started]
