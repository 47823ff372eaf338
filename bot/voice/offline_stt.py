"""Offline speech-to-text: a Pipecat ``SegmentedSTTService`` on PocketSphinx (en-US model).

The ``pocketsphinx`` wheel ships the US English acoustic model, language model and dictionary,
so nothing is downloaded. VAD (Silero, upstream) cuts the candidate's audio into utterances; each
utterance (16-bit mono PCM, resampled to 16 kHz if the pipeline runs at another rate) is decoded
in a decoder worker process (CPU, below) and becomes one ``TranscriptionFrame`` whose ``result``
is an :class:`OfflineTranscript` carrying the confidence and when the segment's speech started
and ended by the VAD (the transcript comes seconds later: its timing is the audio's, not the
decoder's).

Confidence (what ``TranscriptSegment.confidence`` and EVD-010 read)
-------------------------------------------------------------------
PocketSphinx keeps a word lattice for each utterance (``bestpath``) and runs the forward-backward
algorithm over it, so every word on the best path has a *posterior probability*: the lattice mass
of all paths through that word at that time, divided by the mass of all paths. It is the standard
Sphinx word confidence; ``Decoder.seg()`` exposes it as ``Segment.prob`` (already converted from
the log domain). The utterance confidence is the duration-weighted mean of the word posteriors::

    confidence = sum(p_w * frames_w) / sum(frames_w)     over the real words w of the best path

Fillers (``<s>``, ``</s>``, ``<sil>``, ``[NOISE]``...) are left out; each ``p_w`` is clamped to
[0, 1] (log-domain rounding can give 1.0001), so the result is in [0, 1]. A clearly recognised
answer scores about 0.7-0.95; misrecognised or foreign speech mostly 0.15-0.5 (a single utterance
now and then a little above): below 0.5 the runtime rejects evidence from that turn and routes to
``stt_low_confidence`` (EVD-010, POL-R005). The whole-utterance posterior
(``Hypothesis.prob``) is not used: it is the product over all words, so it shrinks with length.

CPU
---
PocketSphinx holds the GIL for the whole of a decode (``Decoder.process_raw``/``end_utt``: 0.2 to
1 times the audio's length), so a decode in a thread of the bot's process stalled its event loop,
and with it the VAD, the turn timers, audio output and every other session on that loop, for
seconds. Decoding therefore runs in worker processes (:mod:`bot.voice.decoder_workers`, started
with ``spawn``); the bot's thread only ships the PCM there and waits with the GIL released (an
event-loop stall under 0.1 s while a 14-s answer decodes, against 2.6-7.5 s before). The
decoding itself, with neither Pipecat nor Django, is :mod:`bot.voice.sphinx_decoder`.

Decoders are expensive (~90 MB, ~0.3 s to load), so one process shares a small pool of worker
processes, one decoder each (:data:`DEFAULT_MAX_DECODERS`, at most 2), between all sessions: at
most that many utterances are decoded at once, whatever the number of bots. Decoding uses a
lighter search than PocketSphinx's default (no second flat-lexicon pass, 10 000 active HMMs) but
scores the top 6 Gaussians of each codebook (PocketSphinx's default is 4; 2 was ~25 % faster and,
with the exam's language model, missed 49 % of the words of ``bench/stt.py`` against 41 %): about
0.2x real time on one core. Audio is dithered (:func:`dithered`) so digital silence (a muted
track, the zero padding after a segment) is not decoded as a confident word.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final

from loguru import logger
from pipecat.frames.frames import CancelFrame, EndFrame, StartFrame, TranscriptionFrame
from pipecat.services.settings import STTSettings

from bot.voice.decoder_workers import DecoderProcesses
from bot.voice.exam_language_model import ExamLanguageModel, ExamModels, build_exam_models
from bot.voice.segmented_recogniser import SegmentedEnglishSTTService
from bot.voice.sphinx_decoder import (
    DEFAULT_DECODER_OPTIONS,
    DEFAULT_MAX_DECODERS,
    MODEL_SAMPLE_RATE,
    DecoderPool,
    OfflineTranscript,
    WordScore,
    dithered,
    utterance_confidence,
)

MODEL_BUILD_WAIT_SECS: Final = 10.0
"""The longest a segment waits for the exam's models still being built at start."""
DEFAULT_TTFS_P99: Final = 1.0
"""Seconds from end of speech to transcript, for turn strategies (5 s of speech: ~0.8 s)."""

__all__ = [
    "DEFAULT_DECODER_OPTIONS",
    "DEFAULT_MAX_DECODERS",
    "MODEL_SAMPLE_RATE",
    "DecoderPool",
    "DecoderProcesses",
    "OfflineTranscript",
    "PocketsphinxSTTService",
    "WordScore",
    "decoder_pool",
    "dithered",
    "transcription_confidence",
    "utterance_confidence",
]


def transcription_confidence(frame: TranscriptionFrame) -> float | None:
    """The STT confidence of ``frame`` in [0, 1], or ``None`` if its service gave none.

    Reads :class:`OfflineTranscript` and any ``result`` with a numeric ``confidence`` attribute
    or key (the bot core's transcript hook uses this for ``TranscriptSegment.confidence``).
    """
    result = frame.result
    value: object = None
    if isinstance(result, Mapping):
        value = result.get("confidence")
    elif result is not None:
        value = getattr(result, "confidence", None)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return min(1.0, max(0.0, float(value)))
    return None


_pools: dict[tuple[tuple[str, str], ...], DecoderProcesses] = {}
_pools_lock = threading.Lock()


def decoder_pool(
    options: Mapping[str, object] | None = None, max_decoders: int | None = None
) -> DecoderProcesses:
    """The process-wide pool of decoder worker processes for these decoder options (created on
    first use; the first caller sets its size)."""
    merged = {**DEFAULT_DECODER_OPTIONS, **(options or {})}
    key = tuple(sorted((k, repr(v)) for k, v in merged.items()))
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = DecoderProcesses(merged, max_decoders or DEFAULT_MAX_DECODERS)
            _pools[key] = pool
        return pool


class PocketsphinxSTTService(SegmentedEnglishSTTService):
    """Offline STT on PocketSphinx: one ``TranscriptionFrame`` per VAD segment.

    Needs VAD frames (``VADUserStartedSpeakingFrame``/``VADUserStoppedSpeakingFrame``) from a
    ``VADProcessor`` before it or a user aggregator with a VAD analyzer after it. US English
    only: every English variant maps to the en-US model. ``TranscriptionFrame.result`` is an
    :class:`OfflineTranscript`; ``finalized`` is set
    (:class:`~bot.voice.segmented_recogniser.SegmentedEnglishSTTService`).
    """

    USAGE: ClassVar[tuple[str, str]] = ("pocketsphinx", "en-us")
    """(engine, model) for usage records."""

    def __init__(
        self,
        *,
        decoder_options: Mapping[str, object] | None = None,
        max_decoders: int | None = None,
        settings: STTSettings | None = None,
        **kwargs: Any,  # Any: Pipecat's SegmentedSTTService takes untyped **kwargs
    ) -> None:
        """Create the service; the decoder loads when the pipeline starts.

        Args:
            decoder_options: PocketSphinx ``Config`` options over :data:`DEFAULT_DECODER_OPTIONS`
                (e.g. ``{"hmm": ..., "lm": ..., "dict": ...}`` for another model).
            max_decoders: How many decoder worker processes the process-wide pool has (the
                first caller sets it).
            settings: An ``STTSettings`` delta.
            **kwargs: Passed to ``SegmentedSTTService`` (``sample_rate``,
                ``trailing_silence_secs``, ``ttfs_p99_latency``...).
        """
        kwargs.setdefault("ttfs_p99_latency", DEFAULT_TTFS_P99)
        super().__init__(model="pocketsphinx-en-us", settings=settings, **kwargs)
        self._pool = decoder_pool(decoder_options, max_decoders)
        self._exam_texts: tuple[str, ...] = ()
        self._node_texts: dict[str, tuple[str, ...]] = {}
        self._current_node: Callable[[], str | None] | None = None
        self._models: ExamModels | None = None
        self._building: asyncio.Task[None] | None = None

    def use_exam_text(
        self,
        texts: Sequence[str],
        *,
        nodes: Mapping[str, Sequence[str]] | None = None,
        current_node: Callable[[], str | None] | None = None,
    ) -> None:
        """Bias recognition to the exam: at start, language models are built from ``texts``
        (the package's own text, :mod:`bot.voice.exam_text`) and from each node's ``nodes``
        entry; each segment is decoded with the model of the node ``current_node()`` names
        when the segment ends, else the package's (:mod:`bot.voice.exam_language_model`)."""
        self._exam_texts = tuple(texts)
        self._node_texts = {node: tuple(node_texts) for node, node_texts in (nodes or {}).items()}
        self._current_node = current_node

    def exam_model(self) -> ExamLanguageModel | None:
        """The model the next segment is decoded with (``None``: the general model)."""
        if self._models is None:
            return None
        return self._models.for_node(self._current_node() if self._current_node else None)

    async def start(self, frame: StartFrame) -> None:
        """Start the service; start the decoder workers (:func:`decoder_pool`), and begin
        building the exam's models off the event loop without waiting for them: the pipeline
        (and the candidate's Start) does not wait the build (about 0.75 s the first time a
        process meets the exam); a segment to decode before it is done waits for it."""
        await super().start(frame)
        try:
            await asyncio.to_thread(self._pool.warm_up)
        except Exception as error:
            await self.push_error(f"{self}: cannot load PocketSphinx: {error}", exception=error)
            return
        if self._exam_texts and self._building is None:
            self._building = asyncio.create_task(self.build_exam_models())

    async def stop(self, frame: EndFrame) -> None:
        """Stop the service (a build still running is cancelled)."""
        await self._stop_building()
        await super().stop(frame)

    async def cancel(self, frame: CancelFrame) -> None:
        """Cancel the service (a build still running is cancelled)."""
        await self._stop_building()
        await super().cancel(frame)

    async def _stop_building(self) -> None:
        building, self._building = self._building, None
        if building is not None and not building.done():
            building.cancel()
            await asyncio.gather(building, return_exceptions=True)

    async def ready_to_decode(self) -> None:
        """Wait for the exam's models being built (at most :data:`MODEL_BUILD_WAIT_SECS`;
        after that the segment is decoded with what there is)."""
        building = self._building
        if building is None or building.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(building), MODEL_BUILD_WAIT_SECS)
        except TimeoutError:
            logger.warning(f"{self}: the exam's models are not built yet; the general one is used")

    async def build_exam_models(self, directory: str | None = None) -> None:
        """Build the exam's models (:meth:`use_exam_text`) off the event loop, once; on failure
        the general model keeps hearing the candidate (logged). ``directory``: where the model
        files go (default ``VIVA_STT_MODEL_DIR`` or the temporary directory)."""
        if not self._exam_texts or self._models is not None:
            return
        try:
            self._models = await asyncio.to_thread(
                build_exam_models, self._exam_texts, self._node_texts, directory=directory
            )
        except Exception as error:  # the general model still hears the candidate
            logger.warning(f"{self}: no exam language model ({error}); the general one is used")

    async def decode_segment(self, pcm16k: bytes) -> OfflineTranscript | None:
        """Decode one segment in a decoder worker process (the thread waits with the GIL
        released), with the model of the node being answered (:meth:`exam_model`)."""
        return await asyncio.to_thread(self._pool.decode, pcm16k, self.exam_model())
