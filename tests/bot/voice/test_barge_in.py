"""A barge-in while the examiner speaks is reported to the controller as an interruption."""

from __future__ import annotations

import asyncio

from pipecat.frames.frames import Frame, InterruptionFrame, TTSStartedFrame, TTSStoppedFrame
from pipecat.tests.utils import SleepFrame, run_test

from bot.pipeline import SpeechReporter
from tests.bot.voice.support import RecordingCore


def _run(reporter: SpeechReporter, *frames: Frame) -> None:
    asyncio.run(run_test(reporter, frames_to_send=list(frames)))


def test_an_interruption_of_an_interruptible_utterance_is_reported_before_its_end() -> None:
    core = RecordingCore()
    reporter = SpeechReporter(core)
    reporter.expect("utt-1")
    reporter.expect("utt-2")
    _run(reporter, TTSStartedFrame(), SleepFrame(0.1), InterruptionFrame())
    assert core.started == ["utt-1"]
    assert core.interrupted == ["utt-1"]
    assert [u for u, _ in core.finished] == ["utt-1"]
    assert reporter.idle  # the queued utterance was dropped by the interruption


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
    assert core.started == ["utt-1"]
    assert [u for u, _ in core.finished] == ["utt-1"]  # ended by the interruption, once
