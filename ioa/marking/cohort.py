"""Cohort statistics: distributions, per-target level counts, agreement across the cohort and
interaction-fairness measures (``docs/spec/marking.md`` §8). Pure: it works on plain per-session
summaries (:class:`SessionSummary`), however they were stored.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ioa.marking.alpha import krippendorff_alpha
from ioa.marking.config import MarkingConfig
from ioa.marking.levels import LEVELS_DESCENDING, Level

BINS: Final = 10


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What the cohort view needs from one marked session."""

    session_id: str
    exam_score: float
    """Final (after moderation) score in [0, 1]."""
    levels: Mapping[str, Level]
    """Final level per target key."""
    metrics: Mapping[str, Any]
    review_flags: int = 0
    raters: Mapping[str, Mapping[str, Level]] = field(default_factory=dict)
    """target key → rater name → level (the deterministic marker as ``marker`` and panel members)
    for cross-cohort agreement."""
    outcomes: Mapping[str, float | None] = field(default_factory=dict)


def _describe(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "median": None, "sd": None, "min": None, "max": None}
    return {
        "mean": round(statistics.fmean(values), 4),
        "median": round(statistics.median(values), 4),
        "sd": round(statistics.pstdev(values), 4) if len(values) > 1 else 0.0,
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def histogram(scores: Sequence[float], bins: int = BINS) -> list[int]:
    """Counts of scores (in [0, 1]) in ``bins`` equal bins; 1.0 falls in the last."""
    counts = [0] * bins
    for score in scores:
        index = min(bins - 1, max(0, int(score * bins)))
        counts[index] += 1
    return counts


def cohort_summary(config: MarkingConfig, sessions: Sequence[SessionSummary]) -> dict[str, Any]:
    """Everything the cohort view and its API show."""
    scores = [s.exam_score for s in sessions]
    targets: list[dict[str, Any]] = []
    for target in config.targets():
        levels = [s.levels[target.key] for s in sessions if target.key in s.levels]
        counts = {level.label: sum(1 for v in levels if v is level) for level in LEVELS_DESCENDING}
        units = [
            [float(v) for v in s.raters[target.key].values()]
            for s in sessions
            if target.key in s.raters and len(s.raters[target.key]) >= 2
        ]
        targets.append(
            {
                "key": target.key,
                "label": target.label,
                "nodeId": target.node_id,
                "n": len(levels),
                "levels": counts,
                "meanScore": round(statistics.fmean(v.score for v in levels), 4)
                if levels
                else None,
                "alpha": krippendorff_alpha(units) if units else None,
                "alphaUnits": len(units),
            }
        )
    outcomes = []
    for outcome in config.outcomes:
        values = [v for s in sessions if (v := s.outcomes.get(outcome.outcome_id)) is not None]
        outcomes.append(
            {"id": outcome.outcome_id, "text": outcome.text, **_describe(values), "n": len(values)}
        )
    return {
        "n": len(sessions),
        "score": _describe(scores),
        "histogram": histogram(scores),
        "targets": targets,
        "outcomes": outcomes,
        "fairness": fairness(config, sessions),
        "reviewRate": round(sum(1 for s in sessions if s.review_flags) / len(sessions), 4)
        if sessions
        else None,
    }


def fairness(config: MarkingConfig, sessions: Sequence[SessionSummary]) -> dict[str, Any]:
    """Interaction-fairness measures across candidates: follow-ups and time per node, the
    consistency of probing (1 - coefficient of variation of a node's follow-up counts across
    the candidates who were asked it), per-session probing consistency and total time."""
    nodes: list[dict[str, Any]] = []
    for node in config.nodes:
        follow = [
            float(s.metrics["followUpsPerNode"][node.node_id])
            for s in sessions
            if node.node_id in s.metrics.get("followUpsPerNode", {})
        ]
        times = [
            float(s.metrics["nodeTimeSec"][node.node_id])
            for s in sessions
            if node.node_id in s.metrics.get("nodeTimeSec", {})
        ]
        consistency: float | None = None
        if len(follow) >= 2:
            mean = statistics.fmean(follow)
            cv = statistics.pstdev(follow) / mean if mean > 0 else 0.0
            consistency = round(max(0.0, min(1.0, 1.0 - cv)), 4)
        elif follow:
            consistency = 1.0
        nodes.append(
            {
                "nodeId": node.node_id,
                "title": node.title,
                "candidates": len(follow),
                "followUps": _describe(follow),
                "timeSec": _describe(times),
                "probingConsistency": consistency,
            }
        )
    per_session = [
        float(s.metrics["probingConsistency"])
        for s in sessions
        if isinstance(s.metrics.get("probingConsistency"), int | float)
    ]
    total = [
        float(s.metrics["totalTimeSec"])
        for s in sessions
        if isinstance(s.metrics.get("totalTimeSec"), int | float)
    ]
    return {
        "nodes": nodes,
        "probingConsistency": _describe(per_session),
        "totalTimeSec": _describe(total),
    }
