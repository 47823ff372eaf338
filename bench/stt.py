#!/usr/bin/env python
"""Offline speech recognition benchmark: word error rate (WER) of PocketSphinx on spoken answers.

The corpus is fixed text (answers a candidate gives in the demo exam) spoken at run time by
eSpeak NG in several voices and speeds, resampled to 16 kHz with silence around it, as the
microphone path delivers it. Each recogniser configuration decodes every utterance; the bench
prints per configuration the WER (word-level Levenshtein distance over the reference's words,
summed over the corpus), the median utterance confidence, and the decode time, with today's
configuration (``bot.voice.offline_stt.DEFAULT_DECODER_OPTIONS``) as the baseline in the same
run.

Configurations (each a set of decoder options and the language model an utterance is decoded
with):

* ``today``: the recogniser before issue #17, frozen here (:data:`TODAY_OPTIONS`: no flat-lexicon
  pass, 10 000 active HMMs, top-2 Gaussians; PocketSphinx's general US English model);
* ``full-search``: today's model with PocketSphinx's own search (flat-lexicon second pass, wider
  beams);
* ``exam-lm``: today's search with the exam's own language model (the demo package's text
  interpolated with the general model, ``bot.voice.exam_language_model``);
* ``exam-lm+topn``: the package-wide model with the product's decoder options
  (``bot.voice.offline_stt.DEFAULT_DECODER_OPTIONS``: top-6 Gaussians);
* ``product``: what the bot runs now, by the same code: the product's decoder options and, for
  each answer, the language model of the exam node it answers
  (``bot.voice.exam_language_model.ExamModels.for_node``);
* ``whisper``: the second offline engine (``VIVA_OFFLINE_STT=whisper``, issue #30), Whisper
  tiny.en from its package, prompted with the text of the node each answer is given at, as
  ``bot.voice.whisper_stt.OfflineWhisperSTTService`` does (``--no-whisper`` leaves it out).

Target (issue #17): half of today's WER.

Usage: ``python bench/stt.py [--voices en-us en-us+f2 en-gb] [--rates 140 175]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CORPUS: tuple[tuple[str, str], ...] = (
    # (the demo exam's node the answer is given at, the answer)
    ("warmup", "I enjoyed the part of the course on graph algorithms the most"),
    (
        "q-dijkstra",
        "It keeps a tentative distance for every vertex and repeatedly settles the closest "
        "unvisited vertex",
    ),
    ("q-dijkstra", "With a binary heap as the priority queue the running time is V plus E log V"),
    ("q-dijkstra", "A negative edge could invalidate a distance that was already settled"),
    (
        "scn-delivery-routes",
        "I would model the depot and every shop as vertices and each road as a weighted edge",
    ),
    (
        "scn-delivery-routes",
        "Travel times are never negative so Dijkstra from the depot gives the fastest route",
    ),
    ("wrapup", "No I have nothing to add thank you"),
)
TODAY_OPTIONS: Mapping[str, Any] = {
    "fwdflat": False,
    "bestpath": True,
    "maxhmmpf": 10000,
    "topn": 2,
    "loglevel": "FATAL",
}
"""The decoder options before issue #17 (the baseline; the product's defaults moved on)."""
FULL_SEARCH: Mapping[str, Any] = {"fwdflat": True, "maxhmmpf": 30000, "topn": 4}
CONFIGURATIONS: tuple[tuple[str, Mapping[str, Any] | None, str], ...] = (
    # (name, decoder options (None: the product's), language model: "" the general one,
    # "package" the exam's package-wide one, "node" the one of the node the answer is given at)
    ("today", TODAY_OPTIONS, ""),
    ("full-search", {**TODAY_OPTIONS, **FULL_SEARCH}, ""),
    ("exam-lm", TODAY_OPTIONS, "package"),
    ("exam-lm+topn", None, "package"),
    ("product", None, "node"),
)
WHISPER = "whisper"

EXAMPLE = ROOT / "examples" / "cs201-graph-algorithms.json"


def words(text: str) -> list[str]:
    return re.sub(r"[^a-z' ]", " ", text.lower()).split()


def edit_distance(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Word-level Levenshtein distance (substitutions, deletions, insertions)."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        current = [i]
        for j, hyp in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp)))
        previous = current
    return previous[-1]


Utterance = tuple[str, str, str, bytes]
"""``(label, node, reference, pcm16k)``."""


def spoken_corpus(voices: Sequence[str], rates: Sequence[int]) -> list[Utterance]:
    """``(label, node, reference, pcm16k)`` for every answer, voice and rate."""
    from pipecat.audio.utils import create_file_resampler

    from bot.voice.espeak import Voice, engine

    espeak = engine()

    async def resample(pcm: bytes) -> bytes:
        return await create_file_resampler().resample(pcm, espeak.sample_rate, 16000)

    silence = bytes(16000)  # 0.5 s
    corpus = []
    for voice in voices:
        for rate in rates:
            for node, text in CORPUS:
                pcm = espeak.synthesize(text + ".", Voice(name=voice, rate_wpm=rate))
                audio = silence + asyncio.run(resample(pcm)) + silence
                corpus.append((f"{voice}@{rate}", node, text, audio))
    return corpus


def measure(
    name: str,
    options: Mapping[str, Any] | None,
    exam: str,
    corpus: list[Utterance],
) -> dict[str, Any]:
    decode = whisper_decoding() if name == WHISPER else sphinx_decoding(options, exam)
    errors = total = 0
    confidences: list[float] = []
    seconds: list[float] = []
    by_voice: dict[str, list[int]] = {}
    for label, node, reference, pcm in corpus:
        started = time.perf_counter()
        result = decode(pcm, node)
        seconds.append(time.perf_counter() - started)
        hypothesis = words(result.text) if result else []
        ref = words(reference)
        distance = edit_distance(ref, hypothesis)
        errors += distance
        total += len(ref)
        by_voice.setdefault(label, [0, 0])
        by_voice[label][0] += distance
        by_voice[label][1] += len(ref)
        confidences.append(result.confidence if result else 0.0)
    return {
        "name": name,
        "wer": errors / max(1, total),
        "confidence": statistics.median(confidences),
        "decode": statistics.median(seconds),
        "by_voice": {k: e / max(1, n) for k, (e, n) in by_voice.items()},
    }


def sphinx_decoding(options: Mapping[str, Any] | None, exam: str) -> Any:
    """``decode(pcm, node)`` by PocketSphinx with ``options`` and the ``exam`` model."""
    from bot.voice.offline_stt import DEFAULT_DECODER_OPTIONS, DecoderPool

    pool = DecoderPool(DEFAULT_DECODER_OPTIONS if options is None else options, 1)
    pool.warm_up()
    models = exam_models() if exam else None

    def decode(pcm: bytes, node: str) -> Any:
        model = None if models is None else models.for_node(node if exam == "node" else None)
        return pool.decode(pcm, model)

    return decode


def whisper_decoding() -> Any:
    """``decode(pcm, node)`` by Whisper tiny.en, prompted with the node's text."""
    from bot.voice.exam_text import node_prose
    from bot.voice.whisper_decoder import WhisperDecoder, exam_prompt

    nodes = node_prose(json.loads(EXAMPLE.read_text(encoding="utf-8")))
    package = exam_prompt(nodes[""])
    decoder = WhisperDecoder(workers=1, cpu_threads=os.cpu_count() or 1)
    decoder.warm_up()

    def decode(pcm: bytes, node: str) -> Any:
        return decoder.decode(pcm, exam_prompt(nodes.get(node, ())) or package)

    return decode


def exam_models() -> Any:
    """The demo package's language models (package-wide and per node), built from the package's
    text alone, as the bot builds them (``bot.voice.exam_text.bias_recogniser``)."""
    from bot.voice.exam_language_model import build_exam_models
    from bot.voice.exam_text import node_texts, package_texts

    document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return build_exam_models(package_texts(document), node_texts(document))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--voices", nargs="*", default=["en-us", "en-us+f2", "en-gb"])
    parser.add_argument("--rates", nargs="*", type=int, default=[140, 175])
    parser.add_argument("--no-whisper", action="store_true", help="leave the Whisper row out")
    args = parser.parse_args()
    one, five, _ = os.getloadavg()
    print(f"bench/stt.py  (load average {one:.2f} {five:.2f} on {os.cpu_count()} CPUs)")
    corpus = spoken_corpus(args.voices, args.rates)
    words_total = sum(len(words(reference)) for _, _, reference, _ in corpus)
    print(
        f"corpus: {len(CORPUS)} answers x {len(args.voices)} voices x {len(args.rates)} rates "
        f"= {len(corpus)} utterances, {words_total} words"
    )
    configurations = [*CONFIGURATIONS] + ([] if args.no_whisper else [(WHISPER, None, "")])
    results = [measure(name, options, exam, corpus) for name, options, exam in configurations]
    baseline = results[0]["wer"]
    for r in results:
        ratio = r["wer"] / baseline if baseline else 0.0
        print(
            f"  {r['name']:<12} WER {r['wer'] * 100:5.1f} %  ({ratio:4.2f} x today)  "
            f"median confidence {r['confidence']:.2f}  median decode {r['decode'] * 1000:6.0f} ms"
        )
        print(
            "               " + "  ".join(f"{k} {v * 100:.0f}%" for k, v in r["by_voice"].items())
        )
    product = next(r for r in results if r["name"] == "product")
    met = "met" if product["wer"] <= baseline / 2 else "NOT met"
    print(f"target (product at half of today's WER, {baseline * 50:.1f} %): {met}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
