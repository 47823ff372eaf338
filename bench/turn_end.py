"""When is a spoken answer over? The end-of-turn policy on natural answers (issue #30).

Speaks, with five eSpeak NG voices, demo-exam answers cut where a candidate stops to think
(mid-sentence, after "um", after "let me think", after "and"; plus two cut at a sentence's end,
which look finished), and whole finished answers. For each it measures what the bot's policy
sees when the pause begins: the offline recogniser's words and confidence for the segment (with
the node's exam model, as in a session), and smart-turn's probability that the speaker has
finished (``bot.voice.turn_model``). Then it prints, for the product's policy
(``ioa.runtime.answer_end.turn_wait``) with the offline recogniser and with exact words (what a
good hosted recogniser gives), and for the old rule (a fixed 1.2 s turn timeout after the VAD's
0.6 s), in the same run:

* **held**: the share of thinking pauses of 2.5 s, 3.5 s and 5 s that do not end the turn;
* **wait**: the silence after a finished answer before its turn ends (p50, p95; counted from the
  end of speech, the recogniser's own delay left out).

Run: ``python bench/turn_end.py`` (about two minutes on one core). Nothing is timed against the
wall clock: the waits are the policy's, so the figures are exact for the signals measured.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VOICES = (("en-us+f2", 150), ("en-us", 170), ("en-gb", 140), ("en-us+m3", 175), ("en-us+f4", 160))
THINKING = (
    ("q-dijkstra", "Dijkstra's algorithm keeps a priority queue of"),
    ("q-dijkstra", "The running time is, um,"),
    ("q-dijkstra", "Hmm. Let me think."),
    ("scn-delivery-routes", "I would model the shops as vertices and"),
    ("q-dijkstra", "It picks the vertex with the"),
    ("q-dijkstra", "A negative edge is a problem because"),
    ("q-dijkstra", "Um, so, the algorithm"),
    ("scn-delivery-routes", "I would pick Dijkstra, uh,"),
    ("q-dijkstra", "With a binary heap the complexity is"),
)
SENTENCE_END = (
    ("q-dijkstra", "It uses a priority queue."),
    ("scn-delivery-routes", "The roads are the edges."),
)
FINISHED = (
    ("q-dijkstra", "It keeps the unvisited vertices in a priority queue ordered by distance."),
    ("q-dijkstra", "With negative costs I would need Bellman-Ford instead."),
    (
        "q-dijkstra",
        "Dijkstra repeatedly settles the unvisited vertex with the smallest tentative distance.",
    ),
    ("q-dijkstra", "With a binary heap priority queue the running time is O of V plus E log V."),
    (
        "scn-delivery-routes",
        "I would model the shops and the depot as vertices and the roads as weighted edges.",
    ),
    ("scn-delivery-routes", "I would pick Dijkstra because the travel times are non-negative."),
    ("q-dijkstra", "That is everything I can say about it."),
    ("q-dijkstra", "I am not sure."),
    ("q-dijkstra", "Yes."),
)
OLD_TURN_TIMEOUT = 1.2
PAUSES = (2.5, 3.5, 5.0)


@dataclass(frozen=True)
class Heard:
    """What the policy sees when one spoken piece ends."""

    kind: str
    said: str
    voice: str
    words: str
    confidence: float
    probability: float


def measure() -> list[Heard]:
    """Speak every piece with every voice; decode it and ask the model (module docstring)."""
    from pipecat.audio.utils import create_file_resampler

    from bot.voice.espeak import Voice, engine
    from bot.voice.exam_language_model import build_exam_models
    from bot.voice.exam_text import node_texts, package_texts
    from bot.voice.offline_stt import DEFAULT_DECODER_OPTIONS, DecoderPool
    from bot.voice.turn_model import TurnModel
    from tests.factories import example_document

    document = example_document()
    models = build_exam_models(package_texts(document), node_texts(document))
    pool = DecoderPool(DEFAULT_DECODER_OPTIONS, 1)
    pool.warm_up()
    model = TurnModel()
    espeak = engine()

    async def at_16k(pcm: bytes) -> bytes:
        return await create_file_resampler().resample(pcm, espeak.sample_rate, 16000)

    silence = bytes(16000)  # 0.5 s
    vad_stop = bytes(int(16000 * 0.6) * 2)
    heard: list[Heard] = []
    for kind, pieces in (
        ("thinking", THINKING),
        ("sentence_end", SENTENCE_END),
        ("finished", FINISHED),
    ):
        for node, text in pieces:
            for name, rate in VOICES:
                pcm = asyncio.run(at_16k(espeak.synthesize(text, Voice(name=name, rate_wpm=rate))))
                result = pool.decode(silence + pcm + silence, models.for_node(node))
                probability = model.probability_finished(silence + pcm + vad_stop, 16000)
                heard.append(
                    Heard(
                        kind=kind,
                        said=text,
                        voice=name,
                        words=result.text if result else "",
                        confidence=result.confidence if result else 0.0,
                        probability=probability,
                    )
                )
        print(f"  measured {kind}", flush=True)
    return heard


def policy_waits(heard: Sequence[Heard], exact: bool) -> list[float]:
    """The product's wait beyond the VAD for each piece (``exact``: the words said, a hosted
    recogniser's confidence)."""
    from ioa.runtime.answer_end import RELIABLE_CONFIDENCE, TurnTiming, turn_wait

    timing = TurnTiming()
    waits = []
    for item in heard:
        words = item.said if exact else item.words
        reliable = True if exact else item.confidence >= RELIABLE_CONFIDENCE
        waits.append(turn_wait(timing, words, "en", item.probability, words_reliable=reliable))
    return waits


VAD_STOP = 0.6
"""No turn ends before the VAD has heard this much silence."""


def silence(wait: float) -> float:
    """The silence after the speech before the turn ends: the policy's wait, but never before
    the VAD's stop (the transcript's own delay is left out: it is the recogniser's)."""
    return max(VAD_STOP, wait)


def held(waits: Sequence[float], pause: float) -> float:
    """Share of pauses of ``pause`` s that the turn outlasts."""
    return sum(silence(wait) > pause for wait in waits) / max(1, len(waits))


def report(heard: Sequence[Heard]) -> None:
    rules: dict[str, Callable[[Sequence[Heard]], list[float]]] = {
        "old rule (1.2 s timeout)": lambda items: [VAD_STOP + OLD_TURN_TIMEOUT for _ in items],
        "product, offline recogniser": lambda items: policy_waits(items, exact=False),
        "product, exact words": lambda items: policy_waits(items, exact=True),
    }
    thinking = [h for h in heard if h.kind == "thinking"]
    sentence_end = [h for h in heard if h.kind == "sentence_end"]
    finished = [h for h in heard if h.kind == "finished"]
    print()
    header = "| rule | " + " | ".join(f"held at {p:g} s" for p in PAUSES)
    print(header + " | held at 3.5 s after a full stop | finished: silence p50 / p95 / max |")
    print("|---" * (len(PAUSES) + 3) + "|")
    for name, rule in rules.items():
        waits = rule(thinking)
        ends = rule(sentence_end)
        done = sorted(silence(wait) for wait in rule(finished))
        p95 = done[min(len(done) - 1, int(0.95 * len(done)))]
        cells = " | ".join(f"{held(waits, p):.0%}" for p in PAUSES)
        print(
            f"| {name} | {cells} | {held(ends, 3.5):.0%} | "
            f"{statistics.median(done):.1f} / {p95:.1f} / {max(done):.1f} s |"
        )
    print(
        f"\n{len(thinking)} thinking pauses, {len(sentence_end)} sentence-end pauses, "
        f"{len(finished)} finished answers ({len(VOICES)} voices)."
    )


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    print("bench/turn_end.py: speaking and measuring...", flush=True)
    report(measure())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
