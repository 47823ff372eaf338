"""Interaction metrics of ``exam_completed`` (chapter 05 §4.15), from the state alone.

* ``candidateTurnCount`` / ``examinerTurnCount``: candidate transcript turns taken while the
  exam was in progress; examiner utterances finished (the closing, spoken after the event, is
  not counted).
* ``averageCandidateResponseLatencyMs``: mean time from the end of an examiner utterance to the
  start of the candidate's next turn.
* ``averageExaminerFollowUpDepth``: mean follow-ups per finished visit of a node that allows
  follow-ups (``maxFollowUps > 0``).
* ``probingConsistencyScore``: 1 minus the coefficient of variation of those counts, clipped
  to [0, 1] (1.0 with fewer than two such visits, or when no follow-up was asked at all).
* ``longestCandidateMonologueSec``: the longest run of candidate speech with no examiner
  utterance in between.
"""

from __future__ import annotations

import math

from ioa.events import payloads as p
from ioa.runtime.state import RuntimeState


def probing_consistency(counts: list[int]) -> float:
    """1 - (standard deviation / mean) of ``counts``, clipped to [0, 1]."""
    if len(counts) < 2:
        return 1.0
    mean = sum(counts) / len(counts)
    if mean == 0:
        return 1.0
    variance = sum((c - mean) ** 2 for c in counts) / len(counts)
    return round(min(1.0, max(0.0, 1.0 - math.sqrt(variance) / mean)), 4)


def interaction_metrics(state: RuntimeState) -> p.InteractionMetrics:
    """The metrics of the session so far."""
    counts = state.probe_counts
    latency = state.latency_total_ms / state.latency_count if state.latency_count else 0
    depth = sum(counts) / len(counts) if counts else 0
    return p.InteractionMetrics(
        candidateTurnCount=state.candidate_turns,
        examinerTurnCount=state.examiner_turns,
        averageCandidateResponseLatencyMs=round(latency, 1),
        averageExaminerFollowUpDepth=round(depth, 4),
        probingConsistencyScore=probing_consistency(counts),
        longestCandidateMonologueSec=round(state.longest_monologue_ms / 1000, 3),
    )
