"""Offline speech-to-text on Whisper tiny.en: a Pipecat ``SegmentedSTTService``.

The second offline engine (``VIVA_OFFLINE_STT=whisper``; PocketSphinx is the default,
:mod:`bot.voice.offline_stt`). VAD (Silero, upstream) cuts the candidate's audio into
segments; each is decoded by :class:`bot.voice.whisper_decoder.WhisperDecoder` in a thread (the
decoder releases the GIL) and becomes one ``TranscriptionFrame`` whose ``result`` is an
:class:`~bot.voice.sphinx_decoder.OfflineTranscript` (confidence, words, and when the segment's
speech started and ended by the VAD), exactly as PocketSphinx's, so the bot core reads both
alike. The exam biases recognition through Whisper's prompt: the text of the node the
candidate is answering, else the package's (:meth:`OfflineWhisperSTTService.use_exam_prose`).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import ClassVar, Final

from loguru import logger
from pipecat.audio.utils import create_file_resampler
from pipecat.frames.frames import Frame, StartFrame
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import STTSettings
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.transcriptions.language import Language

from bot.voice.segment_spans import SegmentSpans, transcription_frame
from bot.voice.sphinx_decoder import DEFAULT_MAX_DECODERS, MODEL_SAMPLE_RATE
from bot.voice.whisper_decoder import MODEL_NAME, WhisperDecoder, exam_prompt

DEFAULT_TTFS_P99: Final = 1.5
"""Seconds from end of speech to transcript, for turn strategies (10 s of speech on 2 cores)."""

_decoder: WhisperDecoder | None = None
_decoder_lock = threading.Lock()


def shared_decoder(workers: int | None = None) -> WhisperDecoder:
    """The process-wide Whisper decoder (created on first use; the first caller sets how many
    segments it decodes at once; each decode gets an equal share of the CPUs)."""
    global _decoder
    with _decoder_lock:
        if _decoder is None:
            count = max(1, workers or DEFAULT_MAX_DECODERS)
            threads = max(1, (os.cpu_count() or 1) // count)
            _decoder = WhisperDecoder(workers=count, cpu_threads=threads)
        return _decoder


class OfflineWhisperSTTService(SegmentedSTTService):
    """Offline STT on Whisper tiny.en: one ``TranscriptionFrame`` per VAD segment.

    Needs VAD frames before it (as :class:`bot.voice.offline_stt.PocketsphinxSTTService`).
    English only. ``TranscriptionFrame.result`` is an ``OfflineTranscript``.
    """

    USAGE: ClassVar[tuple[str, str]] = ("whisper", MODEL_NAME)
    """(engine, model) for usage records."""

    def __init__(
        self,
        *,
        decoder: WhisperDecoder | None = None,
        settings: STTSettings | None = None,
        sample_rate: int | None = None,
        ttfs_p99_latency: float = DEFAULT_TTFS_P99,
    ) -> None:
        """Create the service; the model loads when the pipeline starts.

        Args:
            decoder: The decoder (default: the process-wide one, :func:`shared_decoder`).
            settings: An ``STTSettings`` delta.
            sample_rate: The input rate (default: the pipeline's).
            ttfs_p99_latency: Seconds from end of speech to transcript, for turn strategies.
        """
        store = STTSettings(model=f"whisper-{MODEL_NAME}", language=Language.EN_US)
        if settings is not None:
            store.apply_update(settings)
        super().__init__(settings=store, sample_rate=sample_rate, ttfs_p99_latency=ttfs_p99_latency)
        self._decoder = decoder or shared_decoder()
        self._resampler = create_file_resampler()
        self._package_prompt: str | None = None
        self._node_prompts: dict[str, str | None] = {}
        self._current_node: Callable[[], str | None] | None = None
        self._spans = SegmentSpans()

    def use_exam_prose(
        self,
        nodes: Mapping[str, Sequence[str]],
        *,
        current_node: Callable[[], str | None] | None = None,
    ) -> None:
        """Bias recognition to the exam: each segment is decoded with the prompt of the node
        ``current_node()`` names when it ends (that node's own prose: its question), else the
        package's (``nodes[""]``: the metadata's prose;
        :func:`bot.voice.exam_text.node_prose`)."""
        self._package_prompt = exam_prompt(nodes.get("", ()))
        self._node_prompts = {node: exam_prompt(t) for node, t in nodes.items() if node}
        self._current_node = current_node

    def prompt(self) -> str | None:
        """The prompt the next segment is decoded with (``None``: no bias)."""
        node = self._current_node() if self._current_node else None
        return self._node_prompts.get(node or "") or self._package_prompt

    @property
    def wants_wav_segments(self) -> bool:
        """The decoder reads raw 16-bit PCM."""
        return False

    def can_generate_metrics(self) -> bool:
        """Processing time is measured around each decode."""
        return True

    def language_to_service_language(self, language: Language) -> str | None:
        """English only (tiny.en)."""
        code = str(language.value if isinstance(language, Language) else language)
        return "en-US" if code.lower().startswith("en") else None

    async def start(self, frame: StartFrame) -> None:
        """Start the service and load the model off the event loop."""
        await super().start(frame)
        try:
            await asyncio.to_thread(self._decoder.warm_up)
        except Exception as error:
            await self.push_error(f"{self}: cannot load Whisper: {error}", exception=error)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """Note when each VAD segment's speech started and ended, then process."""
        self._spans.observe(frame, usable=self.is_usable)
        await super().process_frame(frame, direction)

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame | None, None]:
        """Decode one segment (raw 16-bit mono PCM at :attr:`sample_rate`) in a thread."""
        span = self._spans.next_span()
        await self.start_processing_metrics()
        pcm = audio
        if self.sample_rate and self.sample_rate != MODEL_SAMPLE_RATE:
            pcm = await self._resampler.resample(audio, self.sample_rate, MODEL_SAMPLE_RATE)
        transcript = await asyncio.to_thread(self._decoder.decode, pcm, self.prompt())
        await self.stop_processing_metrics()
        if transcript is None:
            logger.debug(f"{self}: no words in a {len(audio)}-byte segment")
            return
        logger.debug(f"{self}: [{transcript.text}] confidence {transcript.confidence:.2f}")
        yield transcription_frame(transcript, self._user_id, span)
