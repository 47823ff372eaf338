"""Audio from before Start is never an answer (issue #30).

Seen before: what the candidate said in the room before pressing Start (checking the microphone,
talking to someone) became part of the first answer the examiner judged.

The whole bot core runs a real session with the voice served by the local protocol peers and the
examiner model served by the scripted OpenAI-compatible server, which records every request. The
warm-up keeps its context (``append``), as a package may ask. The candidate speaks before Start,
then presses it, then answers the warm-up question. The words from before Start must reach
neither the log nor the model. (A transcript that arrives after Start for speech that began
before it is dropped as well: ``tests/ioa/runtime/test_exam_start.py`` and the transcript hook.)
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from pipecat.audio.utils import create_file_resampler
from pipecat.frames.frames import InputAudioRawFrame

from bot.audio import VOICE_IN_SAMPLE_RATE, input_audio_frames, voice_io
from bot.runners import run_bot
from bot.session_runner import BotOptions
from bot.voice.espeak import Voice, engine
from tests.bot.conftest import Candidate, Watcher, new_session
from tests.bot.test_redteam import publish_document
from tests.bot.voice.test_speech_peers import configure
from tests.bot.voice.test_voice_exam import Loudspeaker, Microphone
from tests.factories import example_document
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply
from tests.support.redteam import report
from tests.support.speech_server import SpeechServer

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = "Hello can you hear me now"
ANSWER = "I enjoyed graph algorithms most especially shortest paths."
# Said without commas: eSpeak pauses at a comma, and each VAD segment is one transcription
# request to the peer, which answers them in this order.


class Room:
    """The candidate's microphone as a transport delivers it: 20 ms of audio every 20 ms,
    silence when nobody speaks."""

    def __init__(self, microphone: Microphone) -> None:
        self.microphone = microphone
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def say(self, text: str) -> None:
        espeak = engine()
        voice = Voice(name="en-us+f2", rate_wpm=160)
        pcm = await asyncio.to_thread(espeak.synthesize, text, voice)
        pcm = await create_file_resampler().resample(pcm, espeak.sample_rate, VOICE_IN_SAMPLE_RATE)
        for frame in input_audio_frames(pcm, VOICE_IN_SAMPLE_RATE):
            self.queue.put_nowait(frame.audio)
        while not self.queue.empty():
            await asyncio.sleep(0.05)

    async def stream(self) -> None:
        silence = bytes(VOICE_IN_SAMPLE_RATE * 2 // 50)
        started = time.monotonic()
        index = 0
        while True:
            chunk = silence if self.queue.empty() else self.queue.get_nowait()
            await self.microphone.push_frame(
                InputAudioRawFrame(audio=chunk, sample_rate=VOICE_IN_SAMPLE_RATE, num_channels=1)
            )
            index += 1
            await asyncio.sleep(max(0.0, started + index * 0.02 - time.monotonic()))


def _examiner(request: RecordedRequest) -> Reply:
    if not request.stream:  # Pipecat's context summaries
        return Reply.text("The candidate discussed shortest paths.")
    return report("Thank you, let us begin.", evidenceSufficient=True)


def test_what_the_candidate_said_before_start_is_not_the_first_answer(
    db: Any, bot_settings: Any, tmp_path: Path
) -> None:
    document = example_document()
    warmup = next(n for n in document["nodes"] if n["nodeId"] == "warmup")
    warmup["contextPolicy"] = {"strategy": "append", "includePreviousNodeSummary": False}
    exam_session = new_session(publish_document(document))
    watcher = Watcher()
    microphone = Microphone()
    loudspeaker = Loudspeaker()
    bot_settings.VIVA_LLM_PROVIDER = "openai_compatible"
    with SpeechServer() as peer, OpenAICompatibleServer(default_reply=_examiner) as model:
        configure(bot_settings, peer, stt="openai_compatible", tts="openai_compatible")
        bot_settings.VIVA_LLM_BASE_URL = model.base_url
        peer.script(BEFORE, ANSWER)

        async def main() -> None:
            watcher.bind()
            options = BotOptions(
                io_factory=lambda: voice_io(input=microphone, output=loudspeaker),
                on_stored=watcher,
            )
            bot = asyncio.create_task(run_bot(exam_session.pk, options=options))
            room = Room(microphone)
            try:
                await watcher.until_count("bot_ready", 1)
                room.task = asyncio.create_task(room.stream())
                # In the room before Start: the microphone is live, the exam is not.
                await room.say(BEFORE)
                while not peer.transcriptions:
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.5)
                await Candidate(exam_session.pk, watcher).ready()
                await watcher.until_count("examiner_utterance_final", 1, timeout=30)
                await room.say(ANSWER)
                await watcher.until(
                    lambda w: any(
                        e["payload"]["nodeId"] == "q-dijkstra" for e in w.of("node_entered")
                    ),
                    timeout=30,
                    what="the move to the first question",
                )
            finally:
                bot.cancel()
                if room.task is not None:
                    room.task.cancel()
                await asyncio.gather(
                    bot, *([room.task] if room.task else []), return_exceptions=True
                )

        asyncio.run(asyncio.wait_for(main(), 120))
        requests = model.requests

    finals = [e["payload"] for e in watcher.of("transcript_final")]
    assert [t["text"] for t in finals if t["speaker"] == "candidate"] == [ANSWER]
    said_to_model = [text for r in requests if r.stream for text in r.messages_with_role("user")]
    assert said_to_model, "the model was never asked"
    assert all("hear me" not in text for text in said_to_model), said_to_model
    assert any(ANSWER in text for text in said_to_model), said_to_model
