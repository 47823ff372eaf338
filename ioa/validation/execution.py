"""Running rules and collecting their findings (shared by publish and runtime validation)."""

from __future__ import annotations

from typing import Final

from ioa.schema.paths import ROOT, JsonPath
from ioa.validation.document import PackageDocument
from ioa.validation.findings import Finding, Issue, Phase, Severity, Stage, path_sort_key
from ioa.validation.registry import REGISTRY, RuleInput, RuleSpec

INTERNAL_ERROR_RULE: Final = "VAL-002"
SCHEMA_RULES: Final = frozenset({"SCH-002", "SCH-003"})
"""Rules whose findings give way to a more specific error at the same path."""


class FindingCollector:
    """Turns issues into findings and produces the final, de-duplicated, sorted list."""

    def __init__(self, doc: PackageDocument) -> None:
        self._doc = doc
        self._findings: list[Finding] = []

    def add(self, spec: RuleSpec, issue: Issue, *, phase: Phase | None = None) -> None:
        """Record ``issue`` as a finding of ``spec`` (sorted under ``phase`` if given)."""
        sort_phase = phase or spec.phase
        self._findings.append(
            Finding(
                rule_id=spec.rule_id,
                severity=spec.severity,
                node_id=issue.node_id,
                message=issue.message,
                path=self._doc.render(issue.path),
                phase=sort_phase,
                sort_key=(sort_phase.step, path_sort_key(issue.path), spec.rule_id, issue.message),
            )
        )

    def add_pipeline_finding(self, rule_id: str, message: str, path: JsonPath = ROOT) -> None:
        """Record a finding the pipeline itself emits (VAL-*)."""
        self.add(REGISTRY.get(rule_id), Issue(path, message))

    def add_internal_error(self, failed: RuleSpec, error: BaseException) -> None:
        """Report that ``failed`` raised; the package is rejected (fail closed)."""
        self.add(
            REGISTRY.get(INTERNAL_ERROR_RULE),
            Issue(
                ROOT,
                f"internal error in rule {failed.rule_id} ({failed.module}): "
                f"{type(error).__name__}: {error}; the package could not be fully checked, so "
                "it is rejected. Report this to the platform team with the document",
            ),
            phase=failed.phase,
        )

    def error_count(self) -> int:
        """Errors recorded so far, as they will appear in the report (after de-duplication)."""
        return sum(1 for finding in self.finish() if finding.severity is Severity.ERROR)

    def finish(self) -> tuple[Finding, ...]:
        """De-duplicate and sort the findings."""
        specific_error_paths = {
            finding.path
            for finding in self._findings
            if finding.severity is Severity.ERROR and finding.rule_id not in SCHEMA_RULES
        }
        unique: dict[tuple[str, str, str], Finding] = {}
        for finding in self._findings:
            if finding.rule_id in SCHEMA_RULES and finding.path in specific_error_paths:
                continue
            unique.setdefault((finding.rule_id, finding.path, finding.message), finding)
        return tuple(sorted(unique.values(), key=lambda finding: finding.sort_key))


def run_phase(phase: Phase, stage: Stage, inp: RuleInput, collector: FindingCollector) -> None:
    """Run every rule of ``phase`` enforced at ``stage``; a rule that raises is reported."""
    for spec in REGISTRY.checks(phase, stage):
        check = spec.check
        if check is None:
            continue
        try:
            issues = list(check(inp))
        except Exception as error:
            collector.add_internal_error(spec, error)
            continue
        for issue in issues:
            collector.add(spec, issue)
