"""Offline speech-to-text: a Pipecat ``SegmentedSTTService`` on PocketSphinx (en-US model).

The ``pocketsphinx`` wheel ships the US English acoustic model, language model and dictionary,
so nothing is downloaded. VAD (Silero, upstream) cuts the candidate's audio into utterances; each
utterance (16-bit mono PCM, resampled to 16 kHz if the pipeline runs at another rate) is decoded
in a worker thread and becomes one ``TranscriptionFrame`` whose ``result`` is an
:class:`OfflineTranscript` carrying the confidence and when the segment's speech started and
ended by the VAD (the transcript comes seconds later: its timing is the audio's, not the
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
Decoders are expensive (~90 MB, ~0.3 s to load), so one process shares a small pool of them
(:data:`DEFAULT_MAX_DECODERS`, at most 2) between all sessions: at most that many utterances are
decoded at once, whatever the number of bots. Decoding uses a lighter search than PocketSphinx's
default (no second flat-lexicon pass, 10 000 active HMMs) but scores the top 6 Gaussians of each
codebook (PocketSphinx's default is 4; 2 was ~25 % faster and, with the exam's language model,
missed 49 % of the words of ``bench/stt.py`` against 41 %): about 0.2x real time on one core.
Audio is dithered (:func:`dithered`) so digital silence (a muted track, the zero padding after a
segment) is not decoded as a confident word.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import queue
import re
import threading
import zlib
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Protocol

import numpy as np
from loguru import logger
from pipecat.audio.utils import create_file_resampler
from pipecat.frames.frames import (
    Frame,
    StartFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import STTSettings
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.transcriptions.language import Language
from pipecat.utils.time import time_now_iso8601

from bot.activity import speech_instant
from bot.voice.exam_language_model import ExamLanguageModel, ExamModels, build_exam_models

MODEL_SAMPLE_RATE: Final = 16000
"""The en-US acoustic model's sample rate."""
FRAME_MS: Final = 10
"""PocketSphinx frames are 10 ms."""
DEFAULT_DECODER_OPTIONS: Final[Mapping[str, object]] = {
    "fwdflat": False,
    "bestpath": True,  # the lattice the word posteriors come from: keep it on
    "maxhmmpf": 10000,
    "topn": 6,  # Gaussians scored per codebook: 2 was faster and missed ~10 % more words
    "loglevel": "FATAL",
}
DEFAULT_SEARCH: Final = "_default"
"""PocketSphinx's search of the general model."""
DEFAULT_MAX_DECODERS: Final = max(1, min(2, os.cpu_count() or 1))
DEFAULT_TTFS_P99: Final = 1.0
"""Seconds from end of speech to transcript, for turn strategies (5 s of speech: ~0.8 s)."""


def dithered(pcm: bytes) -> bytes:
    """``pcm`` plus ±1 LSB of noise, seeded by the audio itself (same input, same output).

    Digital silence (a muted track, the zero padding after each segment) otherwise decodes as a
    confident word; PocketSphinx's own dither would make results depend on what the pooled
    decoder heard before."""
    samples = np.frombuffer(pcm[: len(pcm) - len(pcm) % 2], dtype=np.int16).astype(np.int32)
    noise = np.random.default_rng(zlib.crc32(pcm)).integers(-1, 2, size=samples.size)
    return bytes(np.clip(samples + noise, -32768, 32767).astype(np.int16).tobytes())


_FILLER = re.compile(r"^(<.*>|\[.*\]|\+\+.*\+\+)$")
_VARIANT = re.compile(r"\(\d+\)$")


@dataclass(frozen=True, slots=True)
class WordScore:
    """One recognised word: text, posterior probability in [0, 1], start and end (ms)."""

    word: str
    confidence: float
    start_ms: int
    end_ms: int


@dataclass(frozen=True, slots=True)
class OfflineTranscript:
    """``TranscriptionFrame.result`` of :class:`PocketsphinxSTTService`."""

    text: str
    confidence: float
    """Duration-weighted mean word posterior, in [0, 1] (module docstring)."""
    words: tuple[WordScore, ...]
    duration_ms: int
    """Length of the decoded audio (the VAD segment plus its trailing silence)."""
    engine: str = "pocketsphinx"
    speech_start: float | None = None
    """When the segment's speech started, by the VAD (wall-clock seconds), when known."""
    speech_end: float | None = None
    """When it ended, by the VAD (wall-clock seconds), when known."""


def utterance_confidence(words: tuple[WordScore, ...] | list[WordScore]) -> float:
    """Duration-weighted mean of the word posteriors (0.0 when there are no words)."""
    total = sum(max(1, w.end_ms - w.start_ms) for w in words)
    if total == 0:
        return 0.0
    weighted = sum(w.confidence * max(1, w.end_ms - w.start_ms) for w in words)
    return round(min(1.0, max(0.0, weighted / total)), 4)


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


class WordSegment(Protocol):
    """A word of PocketSphinx's best path (``pocketsphinx.Segment``; the library is untyped)."""

    word: str
    prob: float
    start_frame: int
    end_frame: int


class PocketsphinxDecoder(Protocol):
    """What the pool uses of ``pocketsphinx.Decoder`` (the library is untyped)."""

    config: object
    logmath: object

    def current_search(self) -> str | None: ...

    def lookup_word(self, word: str) -> str | None: ...

    def add_word(self, word: str, phones: str, update: bool) -> object: ...

    def add_lm(self, name: str, lm: object) -> None: ...

    def activate_search(self, name: str) -> None: ...

    def start_utt(self) -> None: ...

    def process_raw(self, data: bytes, no_search: bool, full_utt: bool) -> object: ...

    def end_utt(self) -> None: ...

    def hyp(self) -> object | None: ...

    def seg(self) -> Iterable[WordSegment]: ...


class DecoderPool:
    """PocketSphinx decoders shared by every STT service of the process (one per decode)."""

    def __init__(self, options: Mapping[str, object], max_decoders: int) -> None:
        self.options = dict(options)
        self.max_decoders = max(1, max_decoders)
        self._idle: queue.LifoQueue[PocketsphinxDecoder] = queue.LifoQueue()
        self._created = 0
        self._lock = threading.Lock()
        self._searches: dict[int, set[str]] = {}

    def _new_decoder(self) -> PocketsphinxDecoder:
        import pocketsphinx

        decoder: PocketsphinxDecoder = pocketsphinx.Decoder(**self.options)
        return decoder

    def warm_up(self) -> None:
        """Load one decoder now (blocking; ~0.3 s), so the first answer is not delayed."""
        with self.acquire():
            pass

    @contextmanager
    def acquire(self) -> Iterator[PocketsphinxDecoder]:
        """A decoder for the caller's thread alone; blocks while all are in use."""
        try:
            decoder = self._idle.get_nowait()
        except queue.Empty:
            with self._lock:
                create = self._created < self.max_decoders
                if create:
                    self._created += 1
            if create:
                try:
                    decoder = self._new_decoder()
                except BaseException:
                    with self._lock:
                        self._created -= 1
                    raise
            else:
                decoder = self._idle.get()
        try:
            yield decoder
        finally:
            self._idle.put(decoder)

    def _search(self, decoder: PocketsphinxDecoder, model: ExamLanguageModel | None) -> None:
        """Make ``model``'s search (the general model's, ``_default``, for ``None``) the
        decoder's active one, adding it on the decoder's first use of it."""
        name = DEFAULT_SEARCH if model is None else model.name
        if decoder.current_search() == name:
            return
        added = self._searches.setdefault(id(decoder), set())
        if model is not None and name not in added:
            from pocketsphinx import NGramModel

            for word, phones in model.pronunciations:
                if decoder.lookup_word(word) is None:
                    decoder.add_word(word, phones, False)
            for word, phones in model.variants:
                _add_variant(decoder, word, phones)
            decoder.add_lm(name, NGramModel(decoder.config, decoder.logmath, model.arpa_path))
            added.add(name)
        decoder.activate_search(name)

    def decode(
        self, pcm16k: bytes, model: ExamLanguageModel | None = None
    ) -> OfflineTranscript | None:
        """Decode one utterance of 16 kHz 16-bit mono PCM; ``None`` if no word was heard.
        ``model``: the exam's language model (:mod:`bot.voice.exam_language_model`)."""
        if len(pcm16k) < 2:
            return None
        audio = dithered(pcm16k)
        with self.acquire() as decoder:
            self._search(decoder, model)
            decoder.start_utt()
            decoder.process_raw(audio, no_search=False, full_utt=True)
            decoder.end_utt()
            hypothesis = decoder.hyp()
            words = tuple(
                WordScore(
                    word=_VARIANT.sub("", segment.word),
                    confidence=min(1.0, max(0.0, float(segment.prob))),
                    start_ms=int(segment.start_frame) * FRAME_MS,
                    end_ms=(int(segment.end_frame) + 1) * FRAME_MS,
                )
                for segment in decoder.seg()
                if not _FILLER.match(segment.word)
            )
        text = " ".join(w.word for w in words) if words else ""
        if hypothesis is None or not text:
            return None
        return OfflineTranscript(
            text=text,
            confidence=utterance_confidence(words),
            words=words,
            duration_ms=len(pcm16k) * 1000 // (2 * MODEL_SAMPLE_RATE),
        )


def _add_variant(decoder: PocketsphinxDecoder, word: str, phones: str) -> None:
    """Give ``word`` (already in the dictionary) the pronunciation ``phones`` as its next
    ``word(n)`` variant, unless it has it already."""
    if decoder.lookup_word(word) is None:
        return
    number = 2
    while (known := decoder.lookup_word(f"{word}({number})")) is not None:
        if known == phones:
            return
        number += 1
    if decoder.lookup_word(word) != phones:
        decoder.add_word(f"{word}({number})", phones, False)


_pools: dict[tuple[tuple[str, str], ...], DecoderPool] = {}
_pools_lock = threading.Lock()


def decoder_pool(
    options: Mapping[str, object] | None = None, max_decoders: int | None = None
) -> DecoderPool:
    """The process-wide pool for these decoder options (created on first use)."""
    merged = {**DEFAULT_DECODER_OPTIONS, **(options or {})}
    key = tuple(sorted((k, repr(v)) for k, v in merged.items()))
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = DecoderPool(merged, max_decoders or DEFAULT_MAX_DECODERS)
            _pools[key] = pool
        return pool


class PocketsphinxSTTService(SegmentedSTTService):
    """Offline STT on PocketSphinx: one ``TranscriptionFrame`` per VAD segment.

    Needs VAD frames (``VADUserStartedSpeakingFrame``/``VADUserStoppedSpeakingFrame``) from a
    ``VADProcessor`` before it or a user aggregator with a VAD analyzer after it. US English
    only. ``TranscriptionFrame.result`` is an :class:`OfflineTranscript`; ``finalized`` is set.
    """

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
            max_decoders: Size of the process-wide decoder pool (first caller sets it).
            settings: An ``STTSettings`` delta.
            **kwargs: Passed to ``SegmentedSTTService`` (``sample_rate``,
                ``trailing_silence_secs``, ``ttfs_p99_latency``...).
        """
        store = STTSettings(model="pocketsphinx-en-us", language=Language.EN_US)
        if settings is not None:
            store.apply_update(settings)
        kwargs.setdefault("ttfs_p99_latency", DEFAULT_TTFS_P99)
        super().__init__(settings=store, **kwargs)
        self._pool = decoder_pool(decoder_options, max_decoders)
        self._resampler = create_file_resampler()
        self._exam_texts: tuple[str, ...] = ()
        self._node_texts: dict[str, tuple[str, ...]] = {}
        self._current_node: Callable[[], str | None] | None = None
        self._models: ExamModels | None = None
        self._speech_start: float | None = None
        self._spans: deque[tuple[float | None, float | None]] = deque()

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

    @property
    def wants_wav_segments(self) -> bool:
        """PocketSphinx reads raw 16-bit PCM."""
        return False

    def can_generate_metrics(self) -> bool:
        """Processing time is measured around each decode."""
        return True

    def language_to_service_language(self, language: Language) -> str | None:
        """English only: every English variant maps to the en-US model."""
        code = str(language.value if isinstance(language, Language) else language)
        return "en-US" if code.lower().startswith("en") else None

    async def start(self, frame: StartFrame) -> None:
        """Start the service; load a decoder and build the exam's models off the event loop."""
        await super().start(frame)
        try:
            await asyncio.to_thread(self._pool.warm_up)
        except Exception as error:
            await self.push_error(f"{self}: cannot load PocketSphinx: {error}", exception=error)
            return
        await self.build_exam_models()

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

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """Note when each VAD segment's speech started and ended (the base class queues one
        segment for :meth:`run_stt` at each stop while usable, in order), then process."""
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._speech_start = speech_instant(frame)
        elif isinstance(frame, VADUserStoppedSpeakingFrame) and self.is_usable:
            self._spans.append((self._speech_start, speech_instant(frame)))
            self._speech_start = None
        await super().process_frame(frame, direction)

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame | None, None]:
        """Decode one segment (raw 16-bit mono PCM at :attr:`sample_rate`); the transcript
        carries when its speech started and ended (``OfflineTranscript.speech_start``/``_end``)."""
        start, end = self._spans.popleft() if self._spans else (None, None)
        await self.start_processing_metrics()
        pcm = audio
        if self.sample_rate and self.sample_rate != MODEL_SAMPLE_RATE:
            pcm = await self._resampler.resample(audio, self.sample_rate, MODEL_SAMPLE_RATE)
        transcript = await asyncio.to_thread(self._pool.decode, pcm, self.exam_model())
        await self.stop_processing_metrics()
        if transcript is None:
            logger.debug(f"{self}: no words in a {len(audio)}-byte segment")
            return
        logger.debug(f"{self}: [{transcript.text}] confidence {transcript.confidence:.2f}")
        yield TranscriptionFrame(
            transcript.text,
            self._user_id,
            time_now_iso8601(),
            Language.EN_US,
            result=dataclasses.replace(transcript, speech_start=start, speech_end=end),
        )
