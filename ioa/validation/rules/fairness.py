"""Step 7: fairness rules (FAIR-001..004)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Final

from ioa.validation.document import NodeView, as_int, as_mapping, as_text
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import RuleInput, rule

WEIGHT_TOTAL_TOLERANCE: Final = 0.15
"""FAIR-001: largest minus smallest node weight total."""

TIME_BUDGET_SPREAD: Final = 2.0
"""FAIR-002: the largest question budget may be at most twice the smallest (100% more)."""

CANDIDATES_PER_VARIANT: Final = 10
"""FAIR-004: one pool variant per this many expected candidates."""

LARGE_COHORT: Final = 50
"""FAIR-004 applies above this expectedCandidateCount."""


def outlier(values: list[tuple[NodeView, float]], *, ratio: bool) -> tuple[NodeView, float]:
    """The entry furthest from the median (by difference, or by ratio); first one on ties."""
    ordered = sorted(value for _, value in values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2

    def distance(value: float) -> float:
        if ratio:
            return max(value / median, median / value) if value > 0 and median > 0 else 0.0
        return abs(value - median)

    return max(values, key=lambda item: distance(item[1]))


def weight_total(node: NodeView) -> float | None:
    """Sum of the node's target weights, if it has targets and all have numeric weights."""
    targets = [target for target in node.evidence_targets if target.is_object]
    weights = [target.weight for target in targets]
    if not weights or any(weight is None for weight in weights):
        return None
    return sum(weight for weight in weights if weight is not None)


@rule(
    "FAIR-001",
    phase=Phase.FAIRNESS,
    severity=Severity.WARNING,
    summary=(
        "Evidence weight totals of question nodes SHOULD be about equal (±0.15), or the "
        "package MUST give metadata.difficultyJustification."
    ),
)
def weight_totals_comparable(inp: RuleInput) -> Iterator[Issue]:
    """Question nodes carry comparable evidence weight."""
    doc = inp.doc
    if doc.justification("difficultyJustification") is not None:
        return
    totals = [
        (node, total) for node in doc.question_nodes if (total := weight_total(node)) is not None
    ]
    if len(totals) < 2:
        return
    low = min(total for _, total in totals)
    high = max(total for _, total in totals)
    if high - low > WEIGHT_TOTAL_TOLERANCE:
        node, total = outlier(totals, ratio=False)
        yield node.issue(
            f"evidence weights of question node {node.name} total {total:.2f}, while question "
            f"node totals range from {low:.2f} to {high:.2f} (more than "
            f"±{WEIGHT_TOTAL_TOLERANCE} apart), so questions count unequally; balance the "
            "weights or explain in metadata.difficultyJustification",
            "evidenceTargets",
        )


@rule(
    "FAIR-002",
    phase=Phase.FAIRNESS,
    severity=Severity.WARNING,
    summary=(
        "Question time budgets SHOULD NOT differ by more than 100%, or the package MUST give "
        "metadata.timeBudgetJustification."
    ),
)
def time_budgets_comparable(inp: RuleInput) -> Iterator[Issue]:
    """Question nodes get comparable time."""
    doc = inp.doc
    if doc.justification("timeBudgetJustification") is not None:
        return
    budgets = [
        (node, seconds)
        for node in doc.question_nodes
        if (seconds := node.time_budget_seconds) is not None
    ]
    if len(budgets) < 2:
        return
    low = min(seconds for _, seconds in budgets)
    high = max(seconds for _, seconds in budgets)
    if high > low * TIME_BUDGET_SPREAD:
        node, seconds = outlier(budgets, ratio=True)
        key = "timeBudgetMs" if "timeBudget" not in node.raw else "timeBudget"
        yield node.issue(
            f"question node {node.name} has a time budget of {seconds:g} s, while question "
            f"budgets range from {low:g} s to {high:g} s (more than 100% apart); budgets should "
            "follow cognitive demand (5-7 minutes per theoretical question is typical), so "
            "align them or explain in metadata.timeBudgetJustification",
            key,
        )


@rule(
    "FAIR-003",
    phase=Phase.FAIRNESS,
    severity=Severity.ERROR,
    summary=(
        "A question pool with more than one node MUST include a difficultyCalibration "
        "(method and notes) showing its questions are of equivalent difficulty."
    ),
)
def pools_calibrated(inp: RuleInput) -> Iterator[Issue]:
    """Randomised alternatives are documented as equally difficult."""
    for pool in inp.doc.pools:
        members = set(pool.member_ids)
        if len(members) < 2:
            continue
        label = f"pool '{pool.pool_id}'" if pool.pool_id else f"questionPools[{pool.index}]"
        calibration = as_mapping(pool.raw.get("difficultyCalibration"))
        if calibration is None:
            yield Issue(
                pool.path("difficultyCalibration"),
                f"{label} picks one of {len(members)} questions at random but has no "
                'difficultyCalibration; add {"method": "expert_review", "notes": "how '
                'equivalence was established"} so every candidate faces equal difficulty',
            )
            continue
        for key in ("method", "notes"):
            if as_text(calibration.get(key)) is None:
                yield Issue(
                    pool.path("difficultyCalibration", key),
                    f"difficultyCalibration of {label} needs a non-empty {key}",
                )


@rule(
    "FAIR-004",
    phase=Phase.FAIRNESS,
    severity=Severity.WARNING,
    summary=(
        "With expectedCandidateCount > 50 and question pools, each pool SHOULD have at least "
        "expectedCandidateCount / 10 distinct variants."
    ),
)
def pools_large_enough(inp: RuleInput) -> Iterator[Issue]:
    """Large cohorts get enough variants to limit question sharing."""
    doc = inp.doc
    expected = as_int(doc.metadata.get("expectedCandidateCount"))
    if expected is None or expected <= LARGE_COHORT:
        return
    needed = math.ceil(expected / CANDIDATES_PER_VARIANT)
    for pool in doc.pools:
        if not pool.is_object:
            continue
        variants = len(set(pool.member_ids))
        if variants < needed:
            label = f"pool '{pool.pool_id}'" if pool.pool_id else f"questionPools[{pool.index}]"
            yield Issue(
                pool.path("nodeIds"),
                f"{label} has {variants} variant(s) for {expected} expected candidates; with more "
                f"than {LARGE_COHORT} candidates it should have at least {needed} "
                f"(expectedCandidateCount / {CANDIDATES_PER_VARIANT}) to limit question sharing",
            )
