"""A voice turn through the bot core's own pipeline (``bot.pipeline.build_pipeline``) with the
voice ``BotIO`` (``bot.audio.voice_io``): offline STT and TTS, Silero VAD on the user
aggregator.

The core is a recording stand-in for ``ExaminerCore`` (the ``PipelineCore`` protocol): the
spoken answer must reach its transcript hook with the PocketSphinx confidence, the LLM must not
run (the exam is not in progress: the gate drops the turn), and an examiner utterance queued
as the controller does it must be spoken by eSpeak and reported as started and finished.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pipecat.frames.frames import EndFrame, Frame, TTSAudioRawFrame
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner

from bot.audio import (
    VOICE_OUT_SAMPLE_RATE,
    input_audio_frames,
    pcm_duration_secs,
    read_wav,
    voice_io,
)
from bot.pipeline import ExaminerSpeakFrame, build_pipeline
from bot.voice.offline_stt import PocketsphinxSTTService
from bot.voice.offline_tts import SLOWER_RATE_WPM, EspeakTTSService, EspeakTTSSettings
from tests.bot.voice.support import (
    ANSWER,
    REPLY,
    RecordingCore,
    spoken_wav,
    unused_llm,
    words_heard,
)


class AudioOut(FrameProcessor):
    """The output end (where a transport's output would be): keeps the examiner's audio."""

    def __init__(self) -> None:
        super().__init__()
        self.audio: list[TTSAudioRawFrame] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame):
            self.audio.append(frame)
        await self.push_frame(frame, direction)


def test_a_voice_turn_through_the_bot_core_pipeline(tmp_path: Path) -> None:
    core = RecordingCore()
    out = AudioOut()

    async def scenario() -> None:
        wav = await spoken_wav(tmp_path / "answer.wav", ANSWER)
        pcm, rate = read_wav(wav)
        io = voice_io(output=out)
        assert io.text_turns is False
        assert io.providers == {"stt": ("pocketsphinx", "en-us"), "tts": ("espeak-ng", "en-us")}
        assert isinstance(io.stt, PocketsphinxSTTService)
        assert isinstance(io.tts, EspeakTTSService)
        built = build_pipeline(core=core, llm=unused_llm(), io=io)
        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(built.worker)
        running = asyncio.create_task(runner.run())
        try:
            await asyncio.wait_for(built.started.wait(), timeout=15)
            await built.worker.queue_frames(list(input_audio_frames(pcm, rate)))
            await asyncio.wait_for(core.heard.wait(), timeout=30)

            # The controller's Speak effect, as the core queues it.
            built.reporter.expect("utt-1")
            await built.worker.queue_frame(ExaminerSpeakFrame(REPLY, utterance_id="utt-1"))
            await asyncio.wait_for(core.spoken.wait(), timeout=30)

            # AdjustSpeech(rate, slower) through the BotIO's speech controls.
            assert io.adjust_speech is not None
            frames = list(io.adjust_speech("rate", "slower"))
            assert len(frames) == 1
            assert isinstance(frames[0].delta, EspeakTTSSettings)
            assert frames[0].delta.rate == SLOWER_RATE_WPM
            assert list(io.adjust_speech("pitch", "higher")) == []

            await built.worker.queue_frame(EndFrame())
            await asyncio.wait_for(running, timeout=30)
        finally:
            if not running.done():
                await runner.cancel("test failed")
                await asyncio.wait_for(running, timeout=10)

    asyncio.run(scenario())

    assert core.turns == []  # voice: turns come from the aggregator, not the hook
    assert len(core.transcripts) == 1, core.transcripts
    text, confidence = core.transcripts[0]
    assert len(words_heard(text)) >= 3, text
    assert 0.5 <= confidence <= 1.0
    assert core.started == ["utt-1"]
    assert [utterance for utterance, _ in core.finished] == ["utt-1"]
    pcm_out = b"".join(frame.audio for frame in out.audio)
    assert {frame.sample_rate for frame in out.audio} == {VOICE_OUT_SAMPLE_RATE}
    assert 2.0 <= pcm_duration_secs(pcm_out, VOICE_OUT_SAMPLE_RATE) <= 6.0
    assert any(component == "stt" for component, _, _ in core.usage_seen)
