"""Turn taking on a simulated clock through the real runtime controller (issue 15), the
``turn_taking`` section of ``bench/voice.py``.

Spoken answers of several lengths (5, 15, 30, 60 s, with the pauses people make mid-answer),
with the recogniser, LLM and TTS latencies drawn from the ranges the offline providers show
(final transcript 2.7-6 s after speech ends, issue 15). Per answer length:

* **end of candidate speech → examiner audio**, p50/p95 (ms): when the next examiner utterance
  starts after the candidate's last word;
* **utterances over the candidate**: examiner utterances started while the candidate was
  speaking (target: 0);
* **hesitation error**: the mean gap between the hesitation stored before the answer
  (``hesitation_detected``, ``after_question``; none when the candidate began within 5 s) and
  the true one (end of the question's audio → start of speech).

Each length runs twice in the same run: **activity** (the bot feeds voice-activity start/stop
to the controller, ``bot.activity``, and each final transcript carries its speech's start and
end from the VAD) and **baseline** (final transcripts only, stamped when they arrive, as before
issue 15), with the same seeds and timelines.
"""

from __future__ import annotations

import heapq
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.stats import percentile  # noqa: E402 (after the path set-up)
from ioa.events.payloads import HesitationDetected  # noqa: E402
from ioa.runtime import (  # noqa: E402
    BotReady,
    CandidateActivity,
    CandidateReady,
    ManualClock,
    Observation,
    RuntimeController,
    RuntimeInput,
    Speak,
    Tick,
    TranscriptSegment,
    UtteranceFinished,
    UtteranceStarted,
)
from ioa.runtime.transcripts import AFTER_QUESTION_MS  # noqa: E402
from ioa.schema import load_package  # noqa: E402

FIXTURE = ROOT / "tests" / "ioa" / "fixtures" / "cs201-graph-algorithms.json"
T0 = 1_800_000_000_000
ANSWER_LENGTHS_SEC = (5, 15, 30, 60)
STT_FINAL_MS = (2_700, 6_000)
"""Final transcript after the end of speech (offline recogniser, issue 15)."""
LLM_MS = (600, 1_500)
TTS_FIRST_AUDIO_MS = (150, 450)
MS_PER_CHAR = 65
"""Examiner speech rate (about 150 words a minute)."""
FOLLOW_UPS = (
    "Why does the algorithm need non-negative weights?",
    "What data structure keeps the tentative distances?",
    "What is the running time with a binary heap?",
    "How would you explain the relaxation step?",
)


# --- the simulated session ------------------------------------------------------------------


@dataclass(order=True)
class _Due:
    at_ms: int
    order: int
    item: Any = field(compare=False)


@dataclass
class _Session:
    """One controller on a manual clock, with a simulated bot that speaks every ``Speak``."""

    rng: random.Random
    feed_activity: bool
    clock: ManualClock = field(default_factory=lambda: ManualClock(T0))
    queue: list[_Due] = field(default_factory=list)
    order: int = 0
    examiner_starts: list[int] = field(default_factory=list)
    examiner_ends: list[int] = field(default_factory=list)
    hesitations: list[int] = field(default_factory=list)
    """``durationMs`` of each ``hesitation_detected`` before an answer."""
    controller: RuntimeController = field(init=False)

    def __post_init__(self) -> None:
        package = load_package(_document())
        self.controller = RuntimeController(package, session_id="bench-voice", clock=self.clock)

    def at(self, at_ms: int, item: RuntimeInput | Callable[[], None]) -> None:
        self.order += 1
        heapq.heappush(self.queue, _Due(at_ms, self.order, item))

    def run_until(self, end_ms: int) -> None:
        """Deliver everything due up to ``end_ms``, with a ``Tick`` at every controller
        deadline on the way (as the bot's scheduler does)."""
        while True:
            deadline = self.controller.next_deadline_ms()
            head = self.queue[0].at_ms if self.queue else None
            if deadline is not None and deadline <= end_ms and (head is None or deadline < head):
                self._handle(deadline, Tick())
                continue
            if head is None or head > end_ms:
                break
            due = heapq.heappop(self.queue)
            if callable(due.item):
                self.clock.set(max(self.clock.now_ms(), due.at_ms))
                due.item()
            else:
                self._handle(due.at_ms, due.item)
        self.clock.set(max(self.clock.now_ms(), end_ms))

    def _handle(self, at_ms: int, item: RuntimeInput) -> None:
        self.clock.set(max(self.clock.now_ms(), at_ms))
        decision = self.controller.handle(item)
        self.hesitations += [
            event.payload.durationMs
            for event in decision.events
            if isinstance(event.payload, HesitationDetected)
            and event.payload.context == "after_question"
        ]
        now = self.clock.now_ms()
        for effect in decision.effects:
            if isinstance(effect, Speak):
                start = now + self.rng.randint(*TTS_FIRST_AUDIO_MS)
                end = start + MS_PER_CHAR * len(effect.text)
                self.at(start, UtteranceStarted(effect.utterance_id))
                self.at(start, lambda s=start: self.examiner_starts.append(s))
                self.at(end, UtteranceFinished(effect.utterance_id, end - start))
                self.examiner_ends.append(end)


def _document() -> dict[str, Any]:
    import json

    document: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return document


def _observation(text: str) -> Observation:
    return Observation(
        {
            "signals": [],
            "answerQuality": "partial",
            "needsFollowUp": False,
            "evidenceSufficient": False,
            "anxietyDetected": False,
            "spokenText": text,
        }
    )


def _speech_bursts(rng: random.Random, start_ms: int, length_ms: int) -> list[tuple[int, int]]:
    """An answer of ``length_ms`` spoken in bursts with the 1.5-5 s pauses people make."""
    bursts: list[tuple[int, int]] = []
    at, spoken = start_ms, 0
    while spoken < length_ms:
        burst = min(length_ms - spoken, rng.randint(4_000, 10_000))
        bursts.append((at, at + burst))
        spoken += burst
        at += burst + rng.randint(1_500, 5_000)
    return bursts


@dataclass
class TurnResult:
    reply_ms: float | None
    """End of the candidate's speech → start of the next examiner audio."""
    over_candidate: int
    """Examiner utterances started while the candidate was speaking."""
    hesitation_error_ms: int
    """|stored hesitation before the answer - true one| (0 for a gap under 5 s not stored)."""


def one_answer(seed: int, length_sec: int, *, feed_activity: bool) -> TurnResult:
    """One question → spoken answer → examiner reply, on a fresh session at q-dijkstra."""
    rng = random.Random(seed)
    session = _Session(rng, feed_activity)
    session.at(T0, BotReady())
    session.at(T0 + 1_000, CandidateReady())
    session.at(T0 + 5_000, TranscriptSegment("candidate", "I liked graphs most.", 0.95))
    done = {**_observation("Thank you, let us begin.").args, "evidenceSufficient": True}
    session.at(T0 + 6_000, Observation(done))
    session.run_until(T0 + 6_000)
    question_end = max(session.examiner_ends)  # the core question's opening, fully spoken
    session.run_until(question_end)
    start = question_end + rng.randint(1_000, 6_000)
    bursts = _speech_bursts(rng, start, length_sec * 1000)
    words = "Dijkstra keeps a priority queue of tentative distances and settles vertices. "
    for begin, end in bursts:
        if feed_activity:
            session.at(begin, CandidateActivity("speaking", True))
            session.at(end, CandidateActivity("speaking", False))
    speech_end = bursts[-1][1]
    final_at = speech_end + rng.randint(*STT_FINAL_MS)
    text = (words * (1 + length_sec // 5))[:2000]
    spoken = {"start_ms": start - T0, "end_ms": speech_end - T0} if feed_activity else {}
    session.at(final_at, TranscriptSegment("candidate", text, 0.92, **spoken))
    reply_at = final_at + rng.randint(*LLM_MS)
    session.at(reply_at, _observation(FOLLOW_UPS[seed % len(FOLLOW_UPS)]))
    session.run_until(reply_at + 10_000)
    over = sum(
        1 for s in session.examiner_starts if any(b <= s < e for b, e in bursts) and s >= start
    )
    after = [s for s in session.examiner_starts if s >= speech_end]
    gap = start - question_end
    true_hesitation = gap if gap >= AFTER_QUESTION_MS else 0
    stored = session.hesitations[-1] if session.hesitations else 0
    return TurnResult(
        float(after[0] - speech_end) if after else None, over, abs(stored - true_hesitation)
    )


def report(trials: int, seed: int) -> bool:
    """Per answer length: reply latency p50/p95, utterances over the candidate, and the
    hesitation error."""
    header = (
        f"{'answer':>7} {'mode':>9} {'reply p50':>10} {'reply p95':>10} {'over cand.':>10} "
        f"{'hesit. err':>10}"
    )
    print(header)
    print("-" * len(header))
    held = True
    for length in ANSWER_LENGTHS_SEC:
        for label, feed in (("activity", True), ("baseline", False)):
            results = [
                one_answer(seed * 1000 + trial, length, feed_activity=feed)
                for trial in range(trials)
            ]
            replies = [r.reply_ms for r in results if r.reply_ms is not None]
            over = sum(r.over_candidate for r in results)
            p50 = f"{percentile(replies, 0.5):.0f}" if replies else "-"
            p95 = f"{percentile(replies, 0.95):.0f}" if replies else "-"
            error = sum(r.hesitation_error_ms for r in results) / len(results)
            print(f"{length:>6}s {label:>9} {p50:>10} {p95:>10} {over:>10} {error:>10.0f}")
            if feed and over:
                held = False
    print(f"target: 0 examiner utterances started over the candidate (activity): {held}")
    return held
