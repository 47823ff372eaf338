"""The dry run of a package document before (and at) publication; reads only, stores nothing.

The simulation itself is :mod:`ioa.dry_run` (pure). Here: the gate in front of it (a dry run
needs a package that passes validation: the controller assumes one) and the text rendering the
``dry_run`` command prints. See ``docs/spec/dry-run.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ioa.compiler import compile_package
from ioa.dry_run import dry_run
from ioa.schema import load_package
from ioa.validation import validate_package
from publishing.cost_estimate import CostEstimate, estimate, measure, node_prompt_tokens
from publishing.examiner_port import examiner_pricing


class DryRunRefused(Exception):
    """The document does not pass validation; ``report`` is its validation report."""

    def __init__(self, report: dict[str, Any]) -> None:
        errors = report.get("errors", [])
        super().__init__(
            f"the dry run needs a package that passes validation; it has {len(errors)} error(s)"
        )
        self.report = report


def document_dry_run(*, document: object) -> dict[str, Any]:
    """The dry-run report of ``document``; raises :class:`DryRunRefused` when it is invalid."""
    report = validate_package(document)
    if not report.passed:
        raise DryRunRefused(report.to_dict())
    return dry_run(load_package(document))


def dry_run_estimate(
    *, document: object, report: Mapping[str, object], candidates: int
) -> CostEstimate | None:
    """The cost estimate of an exam of ``document`` and of a sitting of ``candidates``, from its
    dry-run ``report`` (``publishing.cost_estimate``), priced with the examiner's price table and
    providers; None when no examiner bot is installed to ask (``publishing.examiner_port``).
    ``document`` passed validation (the dry run needs it)."""
    examiner = examiner_pricing()
    if examiner is None:
        return None
    package = load_package(document)
    usage = measure(
        report,
        node_prompt_tokens(dict(compile_package(package))),
        package.metadata.totalTimeBudgetSec,
    )
    return estimate(usage, examiner.pricing(), examiner.providers(), candidates)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole}"


def report_lines(report: Mapping[str, Any]) -> list[str]:
    """A plain-text rendering of a dry-run report (what ``manage.py dry_run`` prints)."""
    lines = [
        f"Dry run of {report['packageId']}: {report['runCount']} simulated sessions "
        f"({', '.join(report['personas'])})",
        "",
        "Runs:",
    ]
    for run in report["runs"]:
        forced = ", ".join(f"{f['nodeId']} ({f['reason']})" for f in run["forcedExits"])
        lines.append(
            f"  {run['persona']:<14} v{run['variant']} {run['durationSec']:>7.1f}s "
            f"{run['endReason'] or 'did not finish'}: {' > '.join(run['path'])}"
            + (f"; forced exits: {forced}" if forced else "")
        )
    lines += ["", "Nodes (reached, time min/median/max against budget, forced exits):"]
    for node in report["nodes"]:
        time = node["timeSec"]
        spent = f"{time['min']}/{time['median']}/{time['max']}s" if time else "-"
        budget = f"{node['budgetSec']:g}s" if node["budgetSec"] is not None else "no budget"
        lines.append(
            f"  {node['nodeId']:<24} {_share(node['reached'], report['runCount']):>6} "
            f"{spent} of {budget}; forced exits {node['forcedExits']}"
        )
    lines += ["", "Evidence coverage (runs that covered / runs that reached the node):"]
    lines += [
        f"  {t['targetId']:<28} {_share(t['covered'], t['reached'])}" for t in report["targets"]
    ]
    lines += ["", "Transitions fired:"]
    lines += [
        f"  {t['id']:<24} {t['fromNodeId']} -> {t['toNodeId']} ({t['condition']}): {t['fired']}"
        for t in report["transitions"]
    ]
    for pool in report["pools"]:
        drawn = ", ".join(f"{node} {count}" for node, count in pool["drawn"].items())
        lines.append(f"Pool {pool['poolId']} drawn: {drawn}")
    lines.append("Never reached: " + (", ".join(report["neverReached"]) or "none"))
    lines.append("Never fired: " + (", ".join(report["neverFired"]) or "none"))
    dead = [f"{d['nodeId']} ({d['persona']}, {d['reason']})" for d in report["deadEnds"]]
    lines.append("Dead ends: " + (", ".join(dead) or "none"))
    return lines
