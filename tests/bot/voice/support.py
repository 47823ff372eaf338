"""Helpers of the voice tests: a spoken answer made with eSpeak NG, a controller hook, a
recorder of the examiner's audio, and a real Pipecat worker to run them in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from pipecat.audio.utils import create_file_resampler
from pipecat.frames.frames import (
    EndFrame,
    Frame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSSpeakFrame,
    TTSStoppedFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.workers.runner import WorkerRunner

from bot.audio import VOICE_IN_SAMPLE_RATE, pipeline_params, wav_bytes
from bot.spoken_text import Interruption
from bot.usage import Component, Counter
from bot.voice.espeak import Voice, engine
from bot.voice.offline_stt import transcription_confidence

ANSWER = "I think the answer is one hundred."
ANSWER_VOICE = Voice(name="en-us+f2", rate_wpm=140)
"""A clear eSpeak voice for PocketSphinx (formant speech is far from its training data)."""
ANSWER_WORDS = frozenset({"think", "answer", "one", "hundred"})
REPLY = "Thank you. Can you explain how you reached that number?"


def words_heard(text: str) -> set[str]:
    """Which of the answer's key words a transcript holds. eSpeak NG varies its output slightly
    from call to call (waveform phase), so PocketSphinx sometimes misses one word: tests ask for
    most of them, not all."""
    return set(ANSWER_WORDS & set(text.lower().split()))


async def spoken_wav(path: Path, text: str, voice: Voice = ANSWER_VOICE) -> Path:
    """``text`` spoken by eSpeak NG, at 16 kHz, with half a second of silence around it."""
    espeak = engine()
    pcm = await asyncio.to_thread(espeak.synthesize, text, voice)
    pcm16k = await create_file_resampler().resample(pcm, espeak.sample_rate, VOICE_IN_SAMPLE_RATE)
    silence = bytes(VOICE_IN_SAMPLE_RATE)  # 0.5 s of 16-bit silence
    path.write_bytes(wav_bytes(silence + pcm16k + silence + silence, VOICE_IN_SAMPLE_RATE))
    return path


class ControllerHook(FrameProcessor):
    """Stands in for the runtime controller's transcript hook (ADP-013): records each final
    transcript with its confidence, forwards it, and has the examiner reply."""

    def __init__(self, reply: Callable[[str, float | None], str]) -> None:
        super().__init__()
        self.reply = reply
        self.transcripts: list[tuple[str, float | None]] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, TranscriptionFrame):
            confidence = transcription_confidence(frame)
            self.transcripts.append((frame.text, confidence))
            await self.push_frame(TTSSpeakFrame(self.reply(frame.text, confidence)))


class SpeechRecorder(FrameProcessor):
    """The output end: keeps the examiner's audio."""

    def __init__(self) -> None:
        super().__init__()
        self.audio: list[TTSAudioRawFrame] = []
        self.utterances_done = 0
        self.done = asyncio.Event()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame):
            self.audio.append(frame)
        elif isinstance(frame, TTSStoppedFrame):
            self.utterances_done += 1
            self.done.set()
        await self.push_frame(frame, direction)


class AfterAllReplies(FrameProcessor):
    """Goes after ``recorder`` at the end of a pipeline: sets :attr:`done` when the examiner has
    finished speaking ``replies`` utterances (``run_pipeline``'s ``until``)."""

    def __init__(self, recorder: SpeechRecorder, replies: int) -> None:
        super().__init__()
        self.recorder = recorder
        self.replies = replies
        self.done = asyncio.Event()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, TTSStoppedFrame) and self.recorder.utterances_done >= self.replies:
            self.done.set()


async def run_pipeline(
    processors: list[FrameProcessor],
    feed: Sequence[Frame],
    until: asyncio.Event,
    *,
    params: PipelineParams | None = None,
) -> None:
    """Run ``processors`` in a real worker, queue ``feed``, wait for ``until``, then end."""
    worker = PipelineWorker(
        Pipeline(processors),
        params=params or pipeline_params(),
        idle_timeout_secs=None,
        enable_rtvi=False,
    )
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    running = asyncio.create_task(runner.run())
    try:
        await worker.queue_frames(feed)
        await asyncio.wait_for(until.wait(), timeout=30)
        await worker.queue_frame(EndFrame())
        await asyncio.wait_for(running, timeout=30)
    finally:
        if not running.done():
            await runner.cancel("test failed")
            await asyncio.wait_for(running, timeout=10)


class RecordingCore:
    """The ``PipelineCore`` protocol, recording every call."""

    def __init__(self) -> None:
        self.transcripts: list[tuple[str, float]] = []
        self.turns: list[tuple[str, float]] = []
        self.partials: list[tuple[str, float]] = []
        self.unheard: list[int] = []
        self.spans: list[tuple[float, float] | None] = []
        self.started: list[str] = []
        self.started_at: list[float | None] = []
        """When each utterance's first audio played (wall-clock seconds)."""
        self.finished: list[tuple[str, int]] = []
        self.unplayed: list[str] = []
        self.dropped: list[str] = []
        self.interrupted: list[str] = []
        self.cut: list[tuple[str, Interruption]] = []
        self.activity: list[tuple[str, bool, float | None]] = []
        self.usage_seen: list[tuple[str, Counter, str | None]] = []
        self.heard = asyncio.Event()
        self.spoken = asyncio.Event()

    def llm_allowed(self) -> bool:
        return False

    def llm_started(self) -> bool:
        raise AssertionError("the LLM must not run while the exam is not in progress")

    def llm_rerun_started(self) -> bool:
        raise AssertionError("the LLM must not run again while the exam is not in progress")

    def llm_response_ended(self, text: str, calls: Sequence[str]) -> None:
        raise AssertionError(f"the LLM ran: {text!r} {calls!r}")

    def llm_interrupted(self) -> None:
        pass  # nothing on its way to cut

    async def candidate_turn(
        self,
        text: str,
        confidence: float,
        *,
        input_id: str | None = None,
        sent_at: float | None = None,
    ) -> None:
        self.turns.append((text, confidence))

    def candidate_transcript(
        self,
        text: str,
        confidence: float,
        *,
        input_id: str | None = None,
        spoken: tuple[float, float] | None = None,
        sent_at: float | None = None,
    ) -> None:
        self.transcripts.append((text, confidence))
        self.spans.append(spoken)
        self.heard.set()

    def candidate_activity(self, activity: str, active: bool, when: float | None) -> None:
        self.activity.append((activity, active, when))

    def candidate_partial(self, text: str, stability: float) -> None:
        self.partials.append((text, stability))

    def candidate_unheard(self, duration_ms: int) -> None:
        self.unheard.append(duration_ms)

    def utterance_started(self, utterance_id: str, when: float | None = None) -> None:
        self.started.append(utterance_id)
        self.started_at.append(when)

    def utterance_unplayed(self, utterance_id: str) -> None:
        self.unplayed.append(utterance_id)

    def utterances_dropped(self, utterance_ids: tuple[str, ...]) -> None:
        self.dropped.extend(utterance_ids)

    def utterance_finished(
        self, utterance_id: str, duration_ms: int, *, interruption: Interruption | None = None
    ) -> None:
        self.finished.append((utterance_id, duration_ms))
        if interruption is not None:
            self.cut.append((utterance_id, interruption))
        self.spoken.set()

    def candidate_interrupted(self, utterance_id: str) -> None:
        self.interrupted.append(utterance_id)

    def text_without_tool(self, text: str) -> None:
        raise AssertionError(f"the LLM ran: {text!r}")

    def usage(self, component: Component, counter: Counter, model: str | None) -> None:
        self.usage_seen.append((component, counter, model))


def unused_llm() -> OpenAILLMService:
    """An LLM service for pipelines whose gate never lets it run (no server behind it)."""
    return OpenAILLMService(
        api_key="never-used",
        base_url="http://127.0.0.1:9/v1",
        settings=OpenAILLMService.Settings(model="never-called"),
    )
