"""The dry run: simulated candidates through the real runtime controller, before publishing.

Public API::

    report = dry_run(package)          # an AssessmentPackage; a JSON-ready dict

Every persona of :data:`~ioa.dry_run.personas.PERSONAS` runs once per pool variant (variant
``k`` draws the ``k``-th node of every question pool; as many variants as the largest pool has
nodes, at least one), through a fresh :class:`~ioa.runtime.RuntimeController` each
(:mod:`ioa.dry_run.driver`); :mod:`ioa.dry_run.report` turns their events into the report.
Pure and deterministic: no clock, no randomness, no I/O. See ``docs/spec/dry-run.md``.
"""

from __future__ import annotations

from typing import Any

from ioa.dry_run.driver import RunResult, run_persona
from ioa.dry_run.personas import PERSONAS
from ioa.dry_run.report import REPORT_VERSION, build_report
from ioa.schema import AssessmentPackage

__all__ = ["PERSONAS", "REPORT_VERSION", "RunResult", "build_report", "dry_run", "run_all"]


def variant_count(package: AssessmentPackage) -> int:
    """How many runs each persona gets: the size of the largest question pool (at least 1)."""
    return max((len(pool.nodeIds) for pool in package.questionPools), default=1)


def run_all(package: AssessmentPackage) -> list[RunResult]:
    """Every persona, every variant (variants outer, personas in :data:`PERSONAS` order)."""
    return [
        run_persona(package, name, persona, variant=variant)
        for variant in range(variant_count(package))
        for name, persona in PERSONAS.items()
    ]


def dry_run(package: AssessmentPackage) -> dict[str, Any]:
    """The dry-run report of ``package`` (module docstring)."""
    return build_report(package, run_all(package))
