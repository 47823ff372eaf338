"""The validation pipeline: runs the registered rules phase by phase and builds the report.

Order (chapter 08): schema -> package -> node -> transition -> evidence -> policy ->
fairness -> reachability -> adapter -> compatibility. Every phase runs whatever the earlier
phases found, except the adapter step (9), which needs a package that passed steps 1-8.

Guarantees:

* any Python value gives a complete report; a rule that raises becomes a VAL-002 error naming
  the rule, and the other rules still run;
* a schema finding (SCH-002/003) is dropped when a later rule reports an error at the same
  path, so each problem is reported once, under its most specific rule id;
* findings are sorted by pipeline step, then by document position, then by rule id.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from datetime import UTC, datetime
from typing import Final

from ioa.schema.loader import SchemaCheck, check_schema
from ioa.validation.adapter_step import run_adapter_step
from ioa.validation.context import DEFAULT_CONTEXT, ValidationContext
from ioa.validation.document import PackageDocument
from ioa.validation.execution import FindingCollector, run_phase
from ioa.validation.findings import PHASE_ORDER, Phase, Stage
from ioa.validation.registry import REGISTRY, RuleInput
from ioa.validation.report import ValidationReport, format_timestamp

PUBLISH_PHASES_BEFORE_ADAPTER: Final = PHASE_ORDER[: PHASE_ORDER.index(Phase.ADAPTER)]


def load_rules() -> None:
    """Import the built-in rule modules (and the adapter rules if present) once."""
    importlib.import_module("ioa.validation.rules")


def resolve_moment(now: datetime | None) -> datetime:
    """The validation time: ``now`` (must be timezone-aware) or the current UTC time."""
    moment = now if now is not None else datetime.now(UTC)
    format_timestamp(moment)  # raises ValueError for a naive datetime
    return moment


def safe_schema_check(document: object) -> tuple[SchemaCheck, BaseException | None]:
    """Check the schema; if pydantic itself fails, return an empty check and the error."""
    try:
        return check_schema(document), None
    except Exception as error:
        return SchemaCheck(None, ()), error


def build_report(
    doc: PackageDocument, moment: datetime, collector: FindingCollector
) -> ValidationReport:
    """Assemble the report from the collected findings."""
    return ValidationReport(
        package_id=doc.package_id,
        ir_version=doc.ir_version,
        validated_at=moment,
        findings=collector.finish(),
        nodes_validated=len(doc.nodes),
        transitions_validated=doc.transition_count,
    )


def validate_package(
    document: object,
    *,
    now: datetime | None = None,
    context: ValidationContext | None = None,
) -> ValidationReport:
    """Validate ``document`` (any parsed JSON value) for publication (chapter 08, steps 1-10).

    Never raises for a bad document. Raises ValueError only if ``now`` is naive.
    """
    moment = resolve_moment(now)
    load_rules()
    doc = PackageDocument(document)
    schema, schema_error = safe_schema_check(document)
    inp = RuleInput(doc=doc, schema=schema, context=context or DEFAULT_CONTEXT)
    collector = FindingCollector(doc)
    if schema_error is not None:
        collector.add_internal_error(REGISTRY.get("SCH-002"), schema_error)
    for phase in PUBLISH_PHASES_BEFORE_ADAPTER:
        run_phase(phase, Stage.PUBLISH, inp, collector)
    compiled = run_adapter_step(inp, collector, collector.error_count())
    run_phase(Phase.COMPATIBILITY, Stage.PUBLISH, replace(inp, compiled=compiled), collector)
    return build_report(doc, moment, collector)
