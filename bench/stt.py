#!/usr/bin/env python
"""Offline speech recognition benchmark: word error rate (WER) of PocketSphinx on spoken answers.

The corpus is fixed text (answers a candidate gives in the demo exam) spoken at run time by
eSpeak NG in several voices and speeds, resampled to 16 kHz with silence around it, as the
microphone path delivers it. Each recogniser configuration decodes every utterance; the bench
prints per configuration the WER (word-level Levenshtein distance over the reference's words,
summed over the corpus), the median utterance confidence, and the decode time, with today's
configuration (``bot.voice.offline_stt.DEFAULT_DECODER_OPTIONS``) as the baseline in the same
run.

Configurations:

* ``today``: the product's light search (no flat-lexicon pass, 10 000 active HMMs, top-2
  Gaussians);
* ``full-search``: PocketSphinx's own defaults (flat-lexicon second pass, wider beams).

* ``exam-lm``: today's search with the exam's own language model (what the product runs: the
  demo package's text interpolated with the general model, ``bot.voice.exam_language_model``);
* ``exam-lm+full``: the exam's model with PocketSphinx's full search.

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

CORPUS: tuple[str, ...] = (
    "I enjoyed the part of the course on graph algorithms the most",
    "It keeps a tentative distance for every vertex and repeatedly settles the closest "
    "unvisited vertex",
    "With a binary heap as the priority queue the running time is V plus E log V",
    "A negative edge could invalidate a distance that was already settled",
    "I would model the depot and every shop as vertices and each road as a weighted edge",
    "Travel times are never negative so Dijkstra from the depot gives the fastest route",
    "No I have nothing to add thank you",
)
CONFIGURATIONS: Mapping[str, Mapping[str, Any]] = {
    "today": {},
    "full-search": {"fwdflat": True, "maxhmmpf": 30000, "topn": 4},
    "exam-lm": {},  # today's search, with the exam's own language model
    "exam-lm+full": {"fwdflat": True, "maxhmmpf": 30000, "topn": 4},
}
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


def spoken_corpus(voices: Sequence[str], rates: Sequence[int]) -> list[tuple[str, str, bytes]]:
    """``(label, reference, pcm16k)`` for every sentence, voice and rate."""
    from pipecat.audio.utils import create_file_resampler

    from bot.voice.espeak import Voice, engine

    espeak = engine()

    async def resample(pcm: bytes) -> bytes:
        return await create_file_resampler().resample(pcm, espeak.sample_rate, 16000)

    silence = bytes(16000)  # 0.5 s
    corpus = []
    for voice in voices:
        for rate in rates:
            for text in CORPUS:
                pcm = espeak.synthesize(text + ".", Voice(name=voice, rate_wpm=rate))
                corpus.append(
                    (f"{voice}@{rate}", text, silence + asyncio.run(resample(pcm)) + silence)
                )
    return corpus


def measure(
    name: str, options: Mapping[str, Any], corpus: list[tuple[str, str, bytes]]
) -> dict[str, Any]:
    from bot.voice.offline_stt import DEFAULT_DECODER_OPTIONS, DecoderPool

    pool = DecoderPool({**DEFAULT_DECODER_OPTIONS, **options}, 1)
    pool.warm_up()
    model = exam_model() if name.startswith("exam-lm") else None
    errors = total = 0
    confidences: list[float] = []
    seconds: list[float] = []
    by_voice: dict[str, list[int]] = {}
    for label, reference, pcm in corpus:
        started = time.perf_counter()
        result = pool.decode(pcm, model)
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


def exam_model() -> Any:
    """The demo package's language model, built from the package's text alone."""
    from bot.voice.exam_language_model import build
    from bot.voice.exam_text import package_texts

    document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return build(package_texts(document))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--voices", nargs="*", default=["en-us", "en-us+f2", "en-gb"])
    parser.add_argument("--rates", nargs="*", type=int, default=[140, 175])
    args = parser.parse_args()
    one, five, _ = os.getloadavg()
    print(f"bench/stt.py  (load average {one:.2f} {five:.2f} on {os.cpu_count()} CPUs)")
    corpus = spoken_corpus(args.voices, args.rates)
    words_total = sum(len(words(reference)) for _, reference, _ in corpus)
    print(
        f"corpus: {len(CORPUS)} answers x {len(args.voices)} voices x {len(args.rates)} rates "
        f"= {len(corpus)} utterances, {words_total} words"
    )
    results = [measure(name, options, corpus) for name, options in CONFIGURATIONS.items()]
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
    best = min(results, key=lambda r: r["wer"])
    met = "met" if best["wer"] <= baseline / 2 else "NOT met"
    print(f"target (half of today's WER, {baseline * 50:.1f} %): {met} (best: {best['name']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
