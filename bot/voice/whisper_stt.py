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
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, Final

from pipecat.frames.frames import StartFrame
from pipecat.services.settings import STTSettings

from bot.voice.segmented_recogniser import SegmentedEnglishSTTService
from bot.voice.sphinx_decoder import DEFAULT_MAX_DECODERS, OfflineTranscript
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


class OfflineWhisperSTTService(SegmentedEnglishSTTService):
    """Offline STT on Whisper tiny.en: one ``TranscriptionFrame`` per VAD segment.

    Needs VAD frames before it (as :class:`bot.voice.offline_stt.PocketsphinxSTTService`).
    English only (tiny.en). ``TranscriptionFrame.result`` is an ``OfflineTranscript``
    (:class:`~bot.voice.segmented_recogniser.SegmentedEnglishSTTService`).
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
        super().__init__(
            model=f"whisper-{MODEL_NAME}",
            settings=settings,
            sample_rate=sample_rate,
            ttfs_p99_latency=ttfs_p99_latency,
        )
        self._decoder = decoder or shared_decoder()
        self._package_prompt: str | None = None
        self._node_prompts: dict[str, str | None] = {}
        self._current_node: Callable[[], str | None] | None = None

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

    async def start(self, frame: StartFrame) -> None:
        """Start the service and load the model off the event loop."""
        await super().start(frame)
        try:
            await asyncio.to_thread(self._decoder.warm_up)
        except Exception as error:
            await self.push_error(f"{self}: cannot load Whisper: {error}", exception=error)

    async def decode_segment(self, pcm16k: bytes) -> OfflineTranscript | None:
        """Decode one segment in a thread (the decoder releases the GIL), with the prompt of
        the node being answered (:meth:`prompt`)."""
        return await asyncio.to_thread(self._decoder.decode, pcm16k, self.prompt())
