"""What the candidate is doing, fed to the controller as ``CandidateActivity`` (issue 15).

* **Voice**: :class:`VoiceActivityHook` sits after the STT service and turns Silero VAD's
  ``VADUserStartedSpeakingFrame`` / ``VADUserStoppedSpeakingFrame`` into ``speaking``
  started/stopped, with the instant the audio showed it (the VAD decides ``start_secs`` after
  speech began and ``stop_secs`` after it ended; the frame's ``timestamp`` is the time of the
  audio it decided on, :class:`TimedVADProcessor`, not when it got to it).
* **Text**: the exam room sends a throttled ``composing`` signal while the candidate types
  (``candidate_activity`` bot input, ``sessions.bot_channel``). :class:`ComposingWatch` turns it
  into ``composing`` started/stopped, and stops it itself when the signal stops coming
  (:data:`COMPOSING_STALE_SECONDS`: a page that died while typing does not hold the exam).

The controller records only changes (``candidate_activity``), so refreshes cost nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Final, Literal

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

Activity = Literal["composing", "speaking"]
Report = Callable[[Activity, bool, float | None], None]
"""``(activity, active, when)``: ``when`` is the wall-clock instant (seconds) it happened."""

MAX_AUDIO_LAG_SECS: Final = 2.0
"""Audio processed later than this behind its place on the stream's clock is taken as a gap in
the stream (no audio came), not as lag: the clock is set again from it."""
COMPOSING_STALE_SECONDS: Final = 15.0
"""Without a composing refresh for this long, the candidate is taken to have stopped typing
(the exam room refreshes every few seconds while keys are pressed)."""


class AudioClock:
    """Wall-clock time of the audio stream's samples, however late they are processed.

    Each chunk's end is ``position`` seconds into the stream; it cannot have been captured
    after it was processed, so ``processed - position`` bounds the stream's start from above,
    and the smallest bound seen (a chunk processed with no backlog) is the best estimate. A
    chunk more than :data:`MAX_AUDIO_LAG_SECS` behind that sets it again (a gap in the stream).
    """

    def __init__(self) -> None:
        self.position = 0.0
        self._origin: float | None = None

    def advance(self, frame: InputAudioRawFrame, now: float | None = None) -> None:
        """``frame`` (the next chunk of the stream) is being processed (at ``now``)."""
        now = time.time() if now is None else now
        rate = frame.sample_rate or 1
        self.position += len(frame.audio) / (2 * max(1, frame.num_channels) * rate)
        start = now - self.position
        origin = self._origin
        if origin is None or start < origin or start - origin > MAX_AUDIO_LAG_SECS:
            self._origin = start

    def now(self) -> float:
        """When the latest sample was captured (wall-clock seconds); the time if none was."""
        return time.time() if self._origin is None else self._origin + self.position


class TimedVADProcessor(VADProcessor):
    """Pipecat's ``VADProcessor`` whose speech start/stop frames are stamped with the audio's
    own time (:class:`AudioClock`) instead of the moment the VAD got to the audio: under load
    the input backs up and the processing time lags the audio by up to a second or more."""

    def __init__(self, **kwargs: Any) -> None:  # Any: Pipecat's VADProcessor takes untyped kwargs
        super().__init__(**kwargs)
        self.clock = AudioClock()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, InputAudioRawFrame):
            self.clock.advance(frame)
        await super().process_frame(frame, direction)

    # Any: Pipecat's broadcast_frame passes untyped kwargs to the frame's constructor.
    async def broadcast_frame(self, frame_cls: type[Frame], **kwargs: Any) -> None:
        if frame_cls in (VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame):
            kwargs.setdefault("timestamp", self.clock.now())
        await super().broadcast_frame(frame_cls, **kwargs)


class VoiceActivityHook(FrameProcessor):
    """Reports the VAD's speech start and stop (module docstring); passes every frame on."""

    def __init__(self, report: Report) -> None:
        super().__init__()
        self._report = report
        self._speaking = False

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, VADUserStartedSpeakingFrame) and not self._speaking:
            self._speaking = True
            self._report("speaking", True, speech_instant(frame))
        elif isinstance(frame, VADUserStoppedSpeakingFrame) and self._speaking:
            self._speaking = False
            self._report("speaking", False, speech_instant(frame))
        await self.push_frame(frame, direction)


def speech_instant(
    frame: VADUserStartedSpeakingFrame | VADUserStoppedSpeakingFrame,
) -> float | None:
    """When the audio showed the speech start or stop ``frame`` reports (wall-clock seconds)."""
    if isinstance(frame, VADUserStartedSpeakingFrame):
        return _instant(frame.timestamp, frame.start_secs)
    return _instant(frame.timestamp, frame.stop_secs)


def _instant(timestamp: float, lag_secs: float) -> float | None:
    """When the speech started or stopped: the VAD's decision time minus its lag."""
    if not timestamp:
        return None
    return timestamp - max(0.0, lag_secs or 0.0)


class ComposingWatch:
    """Turns the exam room's composing signals into started/stopped (module docstring)."""

    def __init__(self, report: Report, *, stale_seconds: float = COMPOSING_STALE_SECONDS) -> None:
        self._report = report
        self._stale = stale_seconds
        self._timer: asyncio.TimerHandle | None = None
        self.composing = False

    def signal(self, active: bool) -> None:
        """One composing signal from the exam room (``active`` false: idle, cleared, sent)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if active:
            self._timer = asyncio.get_running_loop().call_later(self._stale, self.signal, False)
        if active != self.composing:
            self.composing = active
            self._report("composing", active, None)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
