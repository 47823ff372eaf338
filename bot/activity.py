"""What the candidate is doing, fed to the controller as ``CandidateActivity`` (issue 15).

* **Voice**: :class:`VoiceActivityHook` sits after the STT service and turns Silero VAD's
  ``VADUserStartedSpeakingFrame`` / ``VADUserStoppedSpeakingFrame`` into ``speaking``
  started/stopped, with the instant the audio showed it (the VAD decides ``start_secs`` after
  speech began and ``stop_secs`` after it ended; the frame's ``timestamp`` is when it decided).
* **Text**: the exam room sends a throttled ``composing`` signal while the candidate types
  (``candidate_activity`` bot input, ``sessions.bot_channel``). :class:`ComposingWatch` turns it
  into ``composing`` started/stopped, and stops it itself when the signal stops coming
  (:data:`COMPOSING_STALE_SECONDS`: a page that died while typing does not hold the exam).

The controller records only changes (``candidate_activity``), so refreshes cost nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final, Literal

from pipecat.frames.frames import (
    Frame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

Activity = Literal["composing", "speaking"]
Report = Callable[[Activity, bool, float | None], None]
"""``(activity, active, when)``: ``when`` is the wall-clock instant (seconds) it happened."""

COMPOSING_STALE_SECONDS: Final = 15.0
"""Without a composing refresh for this long, the candidate is taken to have stopped typing
(the exam room refreshes every few seconds while keys are pressed)."""


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
