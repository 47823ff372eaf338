"""The validation report (chapter 08 format)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ioa.validation.findings import Finding, Severity


def format_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z`` suffix and second precision (``2026-05-06T02:00:00Z``).

    Raises ValueError for a naive datetime (the clock must say which time zone it means).
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("validation time must be timezone-aware (e.g. datetime.now(UTC))")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class ValidationReport:
    """The outcome of validating one document.

    ``findings`` are sorted by pipeline step, then by document position of their path, then
    by rule id. The package passes when no finding has severity ``error``.
    """

    package_id: str | None
    ir_version: str | None
    validated_at: datetime
    findings: tuple[Finding, ...]
    nodes_validated: int
    transitions_validated: int

    @property
    def errors(self) -> tuple[Finding, ...]:
        """Findings that block publication (or session start)."""
        return tuple(item for item in self.findings if item.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """Findings that should be fixed or justified."""
        return tuple(item for item in self.findings if item.severity is Severity.WARNING)

    @property
    def info(self) -> tuple[Finding, ...]:
        """Informational findings."""
        return tuple(item for item in self.findings if item.severity is Severity.INFO)

    @property
    def passed(self) -> bool:
        """True when there is no error."""
        return not any(item.severity is Severity.ERROR for item in self.findings)

    @property
    def result(self) -> str:
        """``"pass"`` or ``"reject"``."""
        return "pass" if self.passed else "reject"

    def rule_ids(self) -> frozenset[str]:
        """Ids of every rule with at least one finding."""
        return frozenset(item.rule_id for item in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict, exactly in chapter 08's format."""
        errors = [item.to_dict() for item in self.errors]
        warnings = [item.to_dict() for item in self.warnings]
        info = [item.to_dict() for item in self.info]
        return {
            "packageId": self.package_id,
            "irVersion": self.ir_version,
            "validatedAt": format_timestamp(self.validated_at),
            "result": self.result,
            "errors": errors,
            "warnings": warnings,
            "info": info,
            "summary": {
                "errors": len(errors),
                "warnings": len(warnings),
                "info": len(info),
                "nodesValidated": self.nodes_validated,
                "transitionsValidated": self.transitions_validated,
            },
        }
