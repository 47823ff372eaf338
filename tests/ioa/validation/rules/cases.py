"""Table-driven rule tests: each case edits a copy of the example so that one rule fires
(``trigger``), and edits it a little differently so that the same rule stays silent
(``near_miss``). Every rule module's test file holds a ``CASES`` list;
``test_coverage.py`` checks that every built-in rule id has a case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from ioa.validation import ValidationContext, ValidationReport, validate_for_session
from ioa.validation.registry import REGISTRY
from tests.ioa.builders import NOW, example, validate

Edit = Callable[[dict[str, Any]], object]
"""Edits the package in place (the return value is ignored unless it is a Replacement)."""


@dataclass(frozen=True)
class Replacement:
    """Returned by an edit to validate another document instead of the edited package."""

    document: object


def replace_with(document: object) -> Replacement:
    """Make an edit validate ``document`` (any value) instead of the package."""
    return Replacement(document)


@dataclass(frozen=True)
class Case:
    """One rule, one edit that triggers it, one near miss that does not."""

    rule_id: str
    trigger: Edit
    near_miss: Edit
    path: str | None = None
    """If given, a finding of the rule must have exactly this path."""
    context: ValidationContext | None = None
    runtime_checksum: str | None = field(default=None)
    """If given, run runtime validation with this published checksum instead."""
    label: str = ""

    @property
    def test_id(self) -> str:
        return f"{self.rule_id}{'-' + self.label if self.label else ''}"


def _run(case: Case, edit: Edit) -> ValidationReport:
    document: Any = example()
    result = edit(document)
    if isinstance(result, Replacement):
        document = result.document
    if case.runtime_checksum is not None:
        return validate_for_session(
            document, published_checksum=case.runtime_checksum, now=NOW, context=case.context
        )
    return validate(document, case.context)


def assert_triggers(case: Case) -> None:
    """The trigger edit yields a finding of the rule (at the expected path, if given)."""
    report = _run(case, case.trigger)
    found = [finding for finding in report.findings if finding.rule_id == case.rule_id]
    assert found, f"{case.rule_id} did not fire; findings: {report.to_dict()}"
    spec = REGISTRY.get(case.rule_id)
    assert all(finding.severity is spec.severity for finding in found)
    if case.path is not None:
        assert case.path in {finding.path for finding in found}, [f.path for f in found]
    for finding in found:
        assert finding.message, "every finding explains itself"


def assert_near_miss(case: Case) -> None:
    """The near-miss edit does not yield a finding of the rule."""
    report = _run(case, case.near_miss)
    found = [finding.to_dict() for finding in report.findings if finding.rule_id == case.rule_id]
    assert not found, f"{case.rule_id} fired on its near miss: {found}"


def parametrize(cases: list[Case]) -> pytest.MarkDecorator:
    """``@parametrize(CASES)`` over ``case``, with readable ids."""
    return pytest.mark.parametrize("case", cases, ids=[case.test_id for case in cases])


def unchanged(document: dict[str, Any]) -> None:
    """The near miss "the example as it is" (which passes with no finding)."""
    del document
