"""A voice exam turn end to end through the bot core: ``bot.runners.run_bot`` with the voice
``BotIO`` (``bot.audio.voice_io``) and the offline (rehearsal) examiner, on a published example
package and a real session.

The candidate's microphone and loudspeaker are the ``BotIO``'s input and output processors: the
examiner's opening is spoken by eSpeak NG; the candidate's spoken answer (eSpeak NG at test time)
goes through Silero VAD and PocketSphinx, is stored as ``transcript_final`` with its STT
confidence, ends the candidate's turn, and the examiner answers (spoken again).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pipecat.frames.frames import Frame, TTSAudioRawFrame
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from bot.audio import (
    VOICE_OUT_SAMPLE_RATE,
    input_audio_frames,
    pcm_duration_secs,
    read_wav,
    voice_io,
)
from bot.runners import run_bot
from bot.session_runner import BotOptions
from tests.bot.conftest import Candidate, Watcher
from tests.bot.voice.support import ANSWER, spoken_wav, words_heard

pytestmark = pytest.mark.django_db(transaction=True)


class Microphone(FrameProcessor):
    """The candidate's microphone: pushes a recording into the pipeline on demand, at the
    wire's pace (20 ms of audio every 20 ms), as a transport delivers it: audio cannot arrive
    before it was spoken, and the bot's audio clock (``bot.activity.AudioClock``) times speech
    by it (since issue #30 a transcript of speech that was over before Start is dropped)."""

    async def speak(self, pcm: bytes, sample_rate: int) -> None:
        started = time.monotonic()
        for index, frame in enumerate(input_audio_frames(pcm, sample_rate)):
            await self.push_frame(frame)
            delay = started + (index + 1) * 0.02 - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)


class Loudspeaker(FrameProcessor):
    """The candidate's loudspeaker: keeps what the examiner says."""

    def __init__(self) -> None:
        super().__init__()
        self.audio: list[TTSAudioRawFrame] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame):
            self.audio.append(frame)
        await self.push_frame(frame, direction)

    def seconds(self) -> float:
        return pcm_duration_secs(b"".join(f.audio for f in self.audio), VOICE_OUT_SAMPLE_RATE)


@asynccontextmanager
async def voice_exam_under_way(
    session_pk: Any,
    watcher: Watcher,
    microphone: Microphone,
    loudspeaker: Loudspeaker,
    *,
    opening_timeout: float = 30,
) -> AsyncIterator[None]:
    """The whole bot core on the session, ``microphone`` and ``loudspeaker`` its voice I/O
    (``watcher`` bound by the caller): inside, the candidate is ready and the opening question
    was spoken; the bot is cancelled on leaving."""
    options = BotOptions(
        io_factory=lambda: voice_io(input=microphone, output=loudspeaker), on_stored=watcher
    )
    bot = asyncio.create_task(run_bot(session_pk, options=options))
    try:
        await watcher.until_count("bot_ready", 1)
        await Candidate(session_pk, watcher).ready()
        await watcher.until_count("examiner_utterance_final", 1, timeout=opening_timeout)
        yield
    finally:
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)


def test_a_spoken_answer_in_a_voice_exam(
    exam_session: Any, bot_settings: Any, tmp_path: Path
) -> None:
    watcher = Watcher()
    microphone = Microphone()
    loudspeaker = Loudspeaker()
    heard: dict[str, float] = {}

    async def main() -> None:
        watcher.bind()
        wav = await spoken_wav(tmp_path / "answer.wav", ANSWER)
        pcm, rate = read_wav(wav)
        options = BotOptions(
            io_factory=lambda: voice_io(input=microphone, output=loudspeaker),
            on_stored=watcher,
        )
        bot = asyncio.create_task(run_bot(exam_session.pk, options=options))
        try:
            await watcher.until_count("bot_ready", 1)
            await Candidate(exam_session.pk, watcher).ready()
            await watcher.until_count("examiner_utterance_final", 1)
            heard["opening"] = loudspeaker.seconds()
            await microphone.speak(pcm, rate)
            await watcher.until(
                lambda w: any(
                    e["payload"]["speaker"] == "candidate" for e in w.of("transcript_final")
                ),
                timeout=30,
                what="the candidate's transcript",
            )
            await watcher.until_count("examiner_utterance_final", 2, timeout=30)
            heard["reply"] = loudspeaker.seconds() - heard["opening"]
        finally:
            bot.cancel()
            await asyncio.gather(bot, return_exceptions=True)

    asyncio.run(asyncio.wait_for(main(), 90))

    transcripts = [e["payload"] for e in watcher.of("transcript_final")]
    candidate = [t for t in transcripts if t["speaker"] == "candidate"]
    assert len(candidate) == 1, candidate
    assert len(words_heard(candidate[0]["text"])) >= 3, candidate[0]["text"]
    assert 0.5 <= candidate[0]["confidence"] <= 1.0
    assert candidate[0]["language"].lower().startswith("en")
    # The examiner's opening and its next turn were both spoken aloud.
    assert heard["opening"] > 1.0
    assert heard["reply"] > 0.5
    assert {f.sample_rate for f in loudspeaker.audio} == {VOICE_OUT_SAMPLE_RATE}
    usage = [e["payload"] for e in watcher.of("usage_reported")]
    assert all(u["provider"] != "" for u in usage)
