"""The dry-run report: what the simulated candidates did to the package, in figures.

:func:`build_report` reads the runs' events (nothing else about the runs) beside the package
and returns a JSON-ready dict (key order fixed, every list sorted in package order), so the
same package always gives the same report, byte for byte. Its sections:

``runs``         one row per simulated session: persona, pool variant, nodes in order, how it
                 ended, its duration, the forced exits it met, the targets it covered, the
                 examiner's LLM requests per node and what it said (characters, words): the
                 measures of the cost estimate (``publishing.cost_estimate``)
``nodes``        per node: runs that reached it, time spent there (min/median/max seconds)
                 against its budget, exits by reason, forced exits
``neverReached`` nodes no run entered
``targets``      per evidence target: runs that reached its node, runs that covered it
``transitions``  per transition: how often it fired; ``neverFired`` lists the ones at zero
``pools``        per question pool: in how many runs each node was drawn
``deadEnds``     runs that stopped without finishing, or that ran out of the exam's time
``guardrails``   guardrail firings by type
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import median
from typing import Any, Final

from ioa.dry_run.driver import RunResult
from ioa.events import payloads as p
from ioa.schema import AssessmentPackage

REPORT_VERSION: Final = 1
FORCED_EXITS: Final = frozenset({"time_exhausted", "follow_ups_exhausted", "forced_transition"})
"""Node exits the candidate did not bring about by finishing (or skipping) the node."""


def _seconds(value: float) -> float:
    return round(value, 1)


def _run_row(run: RunResult) -> dict[str, Any]:
    path: list[str] = []
    forced: list[dict[str, str]] = []
    covered: list[str] = []
    end_reason = None
    duration = 0.0
    spoken_chars = spoken_words = 0
    for event in run.events:
        payload = event.payload
        if isinstance(payload, p.NodeEntered):
            path.append(payload.nodeId)
        elif isinstance(payload, p.NodeExited) and payload.reason in FORCED_EXITS:
            forced.append({"nodeId": payload.nodeId, "reason": payload.reason})
        elif isinstance(payload, p.EvidenceSignal) and payload.signalKind.value == "positive":
            covered.extend(t for t in payload.targetIds if t not in covered)
        elif isinstance(payload, p.ExamCompleted):
            end_reason, duration = payload.reason, payload.totalDurationSec
        elif isinstance(payload, p.ExaminerUtteranceFinal):
            spoken_chars += len(payload.text)
            spoken_words += len(payload.text.split())
    return {
        "persona": run.persona,
        "variant": run.variant,
        "path": path,
        "endReason": end_reason,
        "durationSec": _seconds(duration),
        "forcedExits": forced,
        "covered": covered,
        "stuckAt": run.stuck_at,
        "llmRequests": dict(run.llm_requests),
        "examinerChars": spoken_chars,
        "examinerWords": spoken_words,
    }


def _node_rows(package: AssessmentPackage, runs: Sequence[RunResult]) -> list[dict[str, Any]]:
    reached: Counter[str] = Counter()
    times: dict[str, list[float]] = {}
    exits: dict[str, Counter[str]] = {}
    for run in runs:
        entered = {e.payload.nodeId for e in run.events if isinstance(e.payload, p.NodeEntered)}
        reached.update(entered)
        for event in run.events:
            if isinstance(event.payload, p.NodeExited):
                times.setdefault(event.payload.nodeId, []).append(event.payload.durationSec)
                exits.setdefault(event.payload.nodeId, Counter())[event.payload.reason] += 1
    rows = []
    for node in package.nodes:
        spent = times.get(node.nodeId, [])
        budget = node.timeBudget.maxDurationSec if node.timeBudget else None
        by_reason = exits.get(node.nodeId, Counter())
        rows.append(
            {
                "nodeId": node.nodeId,
                "kind": node.kind.value,
                "title": node.title,
                "reached": reached[node.nodeId],
                "budgetSec": budget,
                "timeSec": {
                    "min": _seconds(min(spent)),
                    "median": _seconds(median(spent)),
                    "max": _seconds(max(spent)),
                }
                if spent
                else None,
                "overBudget": sum(1 for s in spent if budget is not None and s > budget),
                "exits": dict(sorted(by_reason.items())),
                "forcedExits": sum(n for r, n in by_reason.items() if r in FORCED_EXITS),
            }
        )
    return rows


def _target_rows(
    package: AssessmentPackage, runs: Sequence[RunResult], nodes: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    reached = {row["nodeId"]: row["reached"] for row in nodes}
    covered: Counter[str] = Counter()
    for run in runs:
        covered.update(
            {
                t
                for e in run.events
                if isinstance(e.payload, p.EvidenceSignal)
                and e.payload.signalKind.value == "positive"
                for t in e.payload.targetIds
            }
        )
    return [
        {
            "targetId": target.id,
            "nodeId": node.nodeId,
            "label": target.label,
            "reached": reached[node.nodeId],
            "covered": covered[target.id],
        }
        for node in package.nodes
        for target in node.evidenceTargets
    ]


def _transition_rows(package: AssessmentPackage, runs: Sequence[RunResult]) -> list[dict[str, Any]]:
    fired: Counter[str] = Counter(
        e.payload.edgeId
        for run in runs
        for e in run.events
        if isinstance(e.payload, p.TransitionDecision)
    )
    return [
        {
            "id": transition.id,
            "fromNodeId": node.nodeId,
            "toNodeId": transition.targetNodeId,
            "condition": transition.condition.type,
            "fired": fired[transition.id],
        }
        for node in package.nodes
        for transition in node.transitions
    ]


def _pool_rows(package: AssessmentPackage, runs: Sequence[RunResult]) -> list[dict[str, Any]]:
    drawn: Counter[tuple[str, str]] = Counter(
        draw
        for run in runs
        for draw in {
            (e.payload.poolId, e.payload.toNodeId)
            for e in run.events
            if isinstance(e.payload, p.TransitionDecision) and e.payload.poolId is not None
        }
    )  # runs that drew the node (a package with a cycle re-enters its pool in one run)
    return [
        {"poolId": pool.poolId, "drawn": {n: drawn[(pool.poolId, n)] for n in pool.nodeIds}}
        for pool in package.questionPools
    ]


def _dead_ends(runs: Sequence[RunResult], rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for run, row in zip(runs, rows, strict=True):
        if run.stuck_at is not None:
            out.append(
                {
                    "persona": run.persona,
                    "variant": run.variant,
                    "nodeId": run.stuck_at,
                    "reason": "no_progress",
                }
            )
        elif row["endReason"] == "time_total_exhausted":
            last = next((n for n in reversed(row["path"][:-1])), row["path"][-1])
            out.append(
                {
                    "persona": run.persona,
                    "variant": run.variant,
                    "nodeId": last,
                    "reason": "exam_time_exhausted",
                }
            )
    return out


def build_report(package: AssessmentPackage, runs: Sequence[RunResult]) -> dict[str, Any]:
    """The report (module docstring)."""
    run_rows = [_run_row(run) for run in runs]
    nodes = _node_rows(package, runs)
    transitions = _transition_rows(package, runs)
    guardrails: Counter[str] = Counter(
        e.payload.guardrailType
        for run in runs
        for e in run.events
        if isinstance(e.payload, p.GuardrailTriggered)
    )
    return {
        "reportVersion": REPORT_VERSION,
        "packageId": package.metadata.packageId,
        "runCount": len(runs),
        "personas": sorted({run.persona for run in runs}, key=[r.persona for r in runs].index),
        "runs": run_rows,
        "nodes": nodes,
        "neverReached": [row["nodeId"] for row in nodes if row["reached"] == 0],
        "targets": _target_rows(package, runs, nodes),
        "transitions": transitions,
        "neverFired": [row["id"] for row in transitions if row["fired"] == 0],
        "pools": _pool_rows(package, runs),
        "deadEnds": _dead_ends(runs, run_rows),
        "guardrails": dict(sorted(guardrails.items())),
    }
