"""When each VAD segment's speech started and ended, for a segmented recogniser's transcripts.

A segmented STT (Pipecat's ``SegmentedSTTService``) decodes a segment after the VAD says the
speech stopped, so its transcript comes seconds after the speech; the transcript must carry the
audio's own times (``OfflineTranscript.speech_start``/``speech_end``), not the decoder's. The
base class queues one segment per stop while the service is usable, in order, so the spans are
kept in the same order and taken one per decode.
"""

from __future__ import annotations

import dataclasses
from collections import deque

from pipecat.frames.frames import (
    Frame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.transcriptions.language import Language
from pipecat.utils.time import time_now_iso8601

from bot.activity import speech_instant
from bot.voice.sphinx_decoder import OfflineTranscript

Span = tuple[float | None, float | None]


class SegmentSpans:
    """The speech spans of the segments queued for decoding, oldest first."""

    def __init__(self) -> None:
        self._start: float | None = None
        self._spans: deque[Span] = deque()

    def observe(self, frame: Frame, *, usable: bool) -> None:
        """Note a VAD frame: a start begins a span; a stop while ``usable`` (a segment is
        queued) ends it."""
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._start = speech_instant(frame)
        elif isinstance(frame, VADUserStoppedSpeakingFrame) and usable:
            self._spans.append((self._start, speech_instant(frame)))
            self._start = None

    def next_span(self) -> Span:
        """The span of the segment decoded next (``(None, None)`` when none was noted)."""
        return self._spans.popleft() if self._spans else (None, None)


def transcription_frame(
    transcript: OfflineTranscript, user_id: str, span: Span
) -> TranscriptionFrame:
    """The final ``TranscriptionFrame`` of one decoded segment (US English, the offline
    recognisers' language): its words, and as ``result`` the transcript with its speech span."""
    start, end = span
    return TranscriptionFrame(
        transcript.text,
        user_id,
        time_now_iso8601(),
        Language.EN_US,
        result=dataclasses.replace(transcript, speech_start=start, speech_end=end),
    )
