"""PocketSphinx decoding itself, with neither Pipecat nor Django: what a decoder worker process
imports (:mod:`bot.voice.decoder_workers`), and what ``bench/stt.py`` and the tests use in-process.

:class:`DecoderPool` decodes in the calling process: ``Decoder.process_raw``/``end_utt`` hold the
GIL for the whole decode, so the Pipecat service never calls it on the bot's process but through
:class:`bot.voice.decoder_workers.DecoderProcesses`, whose worker processes each hold one. The
confidence and the search options are explained in :mod:`bot.voice.offline_stt`.
"""

from __future__ import annotations

import os
import queue
import re
import threading
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np

if TYPE_CHECKING:
    from bot.voice.exam_language_model import ExamLanguageModel

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
    """PocketSphinx decoders in this process, shared by its threads (one per decode).

    A decode holds the GIL throughout: the bot's process decodes through
    :class:`bot.voice.decoder_workers.DecoderProcesses` (one of these in each worker)."""

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

    def loaded(self) -> int:
        """How many decoders are loaded."""
        with self._lock:
            return self._created

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
