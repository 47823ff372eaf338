"""Text mode: the exam without audio.

Typed answers reach the bot from the exam room's WebSocket through the session's bot group in
the channel layer (``sessions.bot_channel``; the session runner listens): each becomes a final
transcript with confidence 1.0 (:func:`typed_answer_frame`), queued into the same pipeline a
voice bot uses, so it passes the same transcript hook (ADP-013) into the runtime controller.

What the examiner says goes out as events: the controller records every utterance it validated
as ``examiner_utterance_started`` / ``examiner_utterance_final`` (with the text), and the event
store publishes them to the candidate's event socket. :class:`TextSpeech` stands where a TTS
service stands in a voice pipeline: it "speaks" each examiner utterance instantly by emitting
the frames a TTS service would (``TTSStartedFrame``, ``TTSTextFrame``, ``TTSStoppedFrame``), so
the assistant context aggregator records it and the speech reporter reports it, exactly as with
audio. No audio is produced.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from pipecat.frames.frames import (
    Frame,
    LLMAssistantPushAggregationFrame,
    LLMTextFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    TTSTextFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.utils.text.base_text_aggregator import TextType
from pipecat.utils.time import time_now_iso8601

CANDIDATE_USER_ID = "candidate"
TYPED_CONFIDENCE = 1.0


@dataclass
class TypedTranscriptionFrame(TranscriptionFrame):
    """A final transcript that was typed, not recognised: its confidence is exact."""

    confidence: float = TYPED_CONFIDENCE
    input_id: str | None = None
    """The durable inbox id of the answer (``sessions.inbox``), when it came through it."""
    sent_at: float | None = None
    """When the server stored the answer (wall-clock seconds; ``sessions.inbox``): the instant
    the candidate handed the turn over, however late the bot reads it."""


def typed_answer_frame(
    text: str,
    confidence: float = TYPED_CONFIDENCE,
    *,
    input_id: str | None = None,
    sent_at: float | None = None,
) -> TranscriptionFrame:
    """The final transcript frame of a typed answer."""
    return TypedTranscriptionFrame(
        text=text,
        user_id=CANDIDATE_USER_ID,
        timestamp=time_now_iso8601(),
        finalized=True,
        confidence=confidence,
        input_id=input_id,
        sent_at=sent_at,
    )


class TextSpeech(FrameProcessor):
    """The text-mode stand-in for a TTS service (module docstring)."""

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if direction is FrameDirection.DOWNSTREAM and isinstance(frame, TTSSpeakFrame):
            context_id = uuid.uuid4().hex
            await self.push_frame(
                TTSStartedFrame(context_id=context_id, append_to_context=frame.append_to_context)
            )
            text = TTSTextFrame(frame.text, TextType.SENTENCE, context_id=context_id)
            text.append_to_context = frame.append_to_context
            await self.push_frame(text)
            await self.push_frame(TTSStoppedFrame(context_id=context_id))
            if frame.append_to_context:
                await self.push_frame(LLMAssistantPushAggregationFrame())
            return
        if isinstance(frame, LLMTextFrame):
            return  # never spoken: only the controller's validated text is
        await self.push_frame(frame, direction)
