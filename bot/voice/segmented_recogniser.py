"""A segmented English offline recogniser: what PocketSphinx's and Whisper's services share.

Both offline engines (:mod:`bot.voice.offline_stt`, :mod:`bot.voice.whisper_stt`) are Pipecat
``SegmentedSTTService`` s: VAD frames before them cut the candidate's audio into segments, and the
base class hands each finished segment to ``run_stt`` as raw 16-bit mono PCM. What they do with
a segment is the same but for the decode itself, so it is written once here:
:class:`SegmentedEnglishSTTService` notes each segment's speech span, resamples the segment to
the models' 16 kHz, times the decode as processing metrics, and makes a transcript one final
``TranscriptionFrame``; a subclass says how a segment is decoded (:meth:`decode_segment`) and,
if it must, what a decode waits for first (:meth:`ready_to_decode`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator
from typing import TypedDict, Unpack

from loguru import logger
from pipecat.audio.utils import create_file_resampler
from pipecat.frames.frames import Frame
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import STTSettings
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.transcriptions.language import Language

from bot.voice.segment_spans import SegmentSpans, transcription_frame
from bot.voice.sphinx_decoder import MODEL_SAMPLE_RATE, OfflineTranscript


class SegmentOptions(TypedDict, total=False):
    """Pipecat's ``SegmentedSTTService`` options a recogniser passes on."""

    sample_rate: int | None
    trailing_silence_secs: float
    ttfs_p99_latency: float


class SegmentedEnglishSTTService(SegmentedSTTService):
    """An offline recogniser of English: one final ``TranscriptionFrame`` per VAD segment.

    Behaviour:

    * Needs VAD frames (``VADUserStartedSpeakingFrame``/``VADUserStoppedSpeakingFrame``) before
      it, or a user aggregator with a VAD analyzer after it.
    * English only: every English language maps to ``en-US``, any other to ``None`` (not
      served); the settings' language is US English.
    * Segments arrive as raw 16-bit PCM (no WAV header) and are resampled to 16 kHz when the
      pipeline runs at another rate.
    * Processing metrics time the resampling and the decode (not :meth:`ready_to_decode`).
    * A segment with no words gives no frame; one with words gives a ``TranscriptionFrame``
      whose ``result`` is the :class:`~bot.voice.sphinx_decoder.OfflineTranscript` carrying
      when the segment's speech started and ended by the VAD (``speech_start``/``speech_end``).
    """

    def __init__(
        self, *, model: str, settings: STTSettings | None, **options: Unpack[SegmentOptions]
    ) -> None:
        """Create the service.

        Args:
            model: The settings' model name (e.g. ``pocketsphinx-en-us``).
            settings: An ``STTSettings`` delta over that model in US English.
            **options: Passed to ``SegmentedSTTService``.
        """
        store = STTSettings(model=model, language=Language.EN_US)
        if settings is not None:
            store.apply_update(settings)
        super().__init__(settings=store, **options)
        self._resampler = create_file_resampler()
        self._spans = SegmentSpans()

    @property
    def wants_wav_segments(self) -> bool:
        """The decoders read raw 16-bit PCM."""
        return False

    def can_generate_metrics(self) -> bool:
        """Processing time is measured around each decode."""
        return True

    def language_to_service_language(self, language: Language) -> str | None:
        """English only: every English variant maps to ``en-US``."""
        code = str(language.value if isinstance(language, Language) else language)
        return "en-US" if code.lower().startswith("en") else None

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """Note when each VAD segment's speech started and ended (the base class queues one
        segment for :meth:`run_stt` at each stop while usable, in order), then process."""
        self._spans.observe(frame, usable=self.is_usable)
        await super().process_frame(frame, direction)

    async def ready_to_decode(self) -> None:
        """Wait for what a decode needs that the start did not wait for (nothing here)."""

    @abstractmethod
    async def decode_segment(self, pcm16k: bytes) -> OfflineTranscript | None:
        """Decode one segment of 16-bit mono PCM at 16 kHz, off the event loop; ``None`` when
        it holds no words."""

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame | None, None]:
        """Decode one segment (raw 16-bit mono PCM at :attr:`sample_rate`); the transcript
        carries when its speech started and ended (``OfflineTranscript.speech_start``/``_end``)."""
        span = self._spans.next_span()
        await self.ready_to_decode()
        await self.start_processing_metrics()
        pcm = audio
        if self.sample_rate and self.sample_rate != MODEL_SAMPLE_RATE:
            pcm = await self._resampler.resample(audio, self.sample_rate, MODEL_SAMPLE_RATE)
        transcript = await self.decode_segment(pcm)
        await self.stop_processing_metrics()
        if transcript is None:
            logger.debug(f"{self}: no words in a {len(audio)}-byte segment")
            return
        logger.debug(f"{self}: [{transcript.text}] confidence {transcript.confidence:.2f}")
        yield transcription_frame(transcript, self._user_id, span)
