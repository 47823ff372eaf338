"""A barge-in while the examiner speaks is reported to the controller as an interruption, and
the utterance ends with when its audio stopped and the text heard until then."""

from __future__ import annotations

import asyncio
import time

from pipecat.frames.frames import (
    Frame,
    InterruptionFrame,
    OutputAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.tests.utils import SleepFrame, run_test

from bot.audio import build_offline_tts, pipeline_params
from bot.pipeline import ExaminerSpeakFrame, SpeechReporter
from bot.spoken_text import HeardSpeech
from bot.voice.espeak import engine
from tests.bot.voice.support import RecordingCore

QUESTION = (
    "Tell me how the water cycle moves heat around the planet, "
    "and which part of it you think matters most for the weather we see every day."
)


class Playback(FrameProcessor):
    """The output end, as a transport plays it: each audio frame is passed on once it has
    played (in real time), so a barge-in finds only what was heard downstream."""

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, OutputAudioRawFrame):
            await asyncio.sleep(len(frame.audio) / (2 * frame.sample_rate))
        await self.push_frame(frame, direction)


def _run(reporter: SpeechReporter, *frames: Frame) -> None:
    asyncio.run(run_test(reporter, frames_to_send=list(frames)))


def test_an_interruption_of_an_interruptible_utterance_is_reported_before_its_end() -> None:
    core = RecordingCore()
    reporter = SpeechReporter(core)
    reporter.expect("utt-1")
    reporter.expect("utt-2")
    _run(reporter, TTSStartedFrame(), SleepFrame(0.1), InterruptionFrame())
    assert core.started == []  # cut before its first audio: never heard (the controller
    # records its start with its end)
    assert core.interrupted == ["utt-1"]
    assert [u for u, _ in core.finished] == ["utt-1"]
    assert reporter.idle  # the queued utterance was dropped by the interruption
    assert core.dropped == ["utt-2"]  # and reported so: the runtime knows it was never heard


def test_no_interruption_is_reported_when_nothing_interruptible_is_spoken() -> None:
    core = RecordingCore()
    reporter = SpeechReporter(core)
    reporter.expect("utt-1", interruptible=False)
    _run(
        reporter,
        InterruptionFrame(),
        SleepFrame(0.1),
        TTSStartedFrame(),
        SleepFrame(0.1),
        InterruptionFrame(),
        SleepFrame(0.1),
        TTSStoppedFrame(),
    )
    assert core.interrupted == []
    assert core.started == [] and core.unplayed == []  # ended before its audio, not a fault
    assert [u for u, _ in core.finished] == ["utt-1"]  # ended by the interruption, once


def test_a_barge_in_records_the_audio_played_and_the_words_heard_until_then() -> None:
    core = RecordingCore()
    reporter = SpeechReporter(core)
    reporter.expect("utt-1")
    before = time.time()
    asyncio.run(
        run_test(
            Pipeline([build_offline_tts(), Playback(), reporter]),
            frames_to_send=[
                ExaminerSpeakFrame(QUESTION, utterance_id="utt-1"),
                SleepFrame(2.0),
                InterruptionFrame(),
                SleepFrame(0.3),
            ],
            expected_down_frames=None,
            pipeline_params=pipeline_params(),
        )
    )
    assert core.started == ["utt-1"] and core.interrupted == ["utt-1"]
    ((utterance, cut),) = core.cut
    assert utterance == "utt-1"
    ((_, duration_ms),) = core.finished
    assert duration_ms == round(cut.played_secs * 1000)
    assert 0.8 <= cut.played_secs <= 2.1, cut  # the audio stopped at the barge-in
    assert before + cut.played_secs <= cut.at <= time.time()
    # What was heard: the question up to the last word whose audio had started, by eSpeak's
    # own word timing for this text (the voice eSpeak spoke it with).
    speech = engine().speak(QUESTION, build_offline_tts().voice)
    started = [word for word in speech.words if word.audio_ms / 1000 < cut.played_secs]
    assert 0 < len(started) < len(speech.words)
    assert cut.spoken_text == QUESTION[: started[-1].end]
    assert QUESTION.startswith(cut.spoken_text) and len(cut.spoken_text) < len(QUESTION)


def test_without_word_timing_only_the_text_played_to_its_end_counts_as_heard() -> None:
    heard = HeardSpeech()
    second = 24000 * 2
    heard.audio(OutputAudioRawFrame(b"\0" * second, 24000, 1))
    assert heard.spoken_text() == ""  # the first sentence is still playing
    heard.text_played("First sentence.")  # its TTSTextFrame followed its audio
    heard.audio(OutputAudioRawFrame(b"\0" * second, 24000, 1))
    assert heard.spoken_text() == "First sentence."
    assert heard.played_secs == 2.0


def test_an_utterance_starts_when_its_first_audio_plays_not_when_its_synthesis_starts() -> None:
    """A TTS that takes its time before the first audio (eSpeak synthesising on a loaded
    machine, a hosted voice's first byte): the examiner started speaking when the candidate
    could first hear it, and the audio's length is measured from there."""
    core = RecordingCore()
    reporter = SpeechReporter(core)
    reporter.expect("utt-1")
    before = time.time()
    _run(
        reporter,
        TTSStartedFrame(),
        SleepFrame(0.8),
        OutputAudioRawFrame(b"\0" * 24000 * 2, 24000, 1),
        SleepFrame(0.4),
        TTSStoppedFrame(),
    )
    assert core.started == ["utt-1"]
    (at,) = core.started_at
    assert at is not None and before + 0.8 <= at <= time.time() - 0.4, (before, at)
    ((_, duration_ms),) = core.finished
    assert duration_ms == 1000, duration_ms  # the audio that played, not the synthesis time


def test_an_utterance_the_voice_gave_no_audio_for_is_a_fault_and_ends_unheard() -> None:
    """Seen: with the hosted voice down, every examiner utterance was logged as spoken while
    the candidate heard nothing, and the exam went on to its end."""
    core = RecordingCore()
    reporter = SpeechReporter(core)
    reporter.expect("utt-1")
    _run(reporter, TTSStartedFrame(), SleepFrame(0.2), TTSStoppedFrame())
    assert core.unplayed == ["utt-1"]
    assert core.started == []  # it never started to be heard
    assert core.finished == [("utt-1", 0)]
    ((_, cut),) = core.cut
    assert (cut.played_secs, cut.spoken_text) == (0.0, "")


def test_without_audio_an_utterance_starts_with_its_tts_context() -> None:
    """Text mode (``TextSpeech``: no audio ever): the examiner's words went out when the TTS
    context started, and it lasted until its end."""
    core = RecordingCore()
    reporter = SpeechReporter(core, audio=False)
    reporter.expect("utt-1")
    before = time.time()
    _run(reporter, TTSStartedFrame(), SleepFrame(0.4), TTSStoppedFrame())
    (at,) = core.started_at
    assert at is not None and before <= at < before + 0.3, (before, at)
    ((_, duration_ms),) = core.finished
    assert duration_ms >= 350, duration_ms
