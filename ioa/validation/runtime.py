"""Runtime validation: the checks a package passes before a session starts (chapter 08).

A session starts only from a published package, so this is a short, redundant safety check:

* the document still loads against the schema (SCH-001..003);
* its irVersion is well-formed and supported by this runtime (PKG-004, CMP-002, CMP-009;
  CMP-003 warns about an older supported version) and deprecated fields are reported
  (CMP-008);
* it is the published artifact: its canonical checksum equals the one recorded at publication
  (RUN-001);
* every reference resolves: initialNodeId, transition targets, pool members, condition and
  completion targets (PKG-002, TRN-001, POOL-002, TRN-011, EVD-101).

The report has the same shape as the publish report. The event protocol version is not part of
the package (the envelope's ``schemaVersion`` is set by the emitter), so it is not checked here.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from ioa.validation.context import DEFAULT_CONTEXT, ValidationContext
from ioa.validation.document import PackageDocument
from ioa.validation.execution import FindingCollector, run_phase
from ioa.validation.findings import PHASE_ORDER, Stage
from ioa.validation.pipeline import build_report, load_rules, resolve_moment, safe_schema_check
from ioa.validation.registry import REGISTRY, RuleInput
from ioa.validation.report import ValidationReport


def validate_for_session(
    document: object,
    *,
    published_checksum: str,
    now: datetime | None = None,
    context: ValidationContext | None = None,
) -> ValidationReport:
    """Validate a stored package before starting a session from it.

    ``published_checksum`` is the ``sha256:<hex>`` recorded when the package was published.
    Never raises for a bad document; raises ValueError only if ``now`` is naive.
    """
    moment = resolve_moment(now)
    load_rules()
    doc = PackageDocument(document)
    schema, schema_error = safe_schema_check(document)
    effective = replace(context or DEFAULT_CONTEXT, expected_checksum=published_checksum)
    inp = RuleInput(doc=doc, schema=schema, context=effective)
    collector = FindingCollector(doc)
    if schema_error is not None:
        collector.add_internal_error(REGISTRY.get("SCH-002"), schema_error)
    for phase in PHASE_ORDER:
        run_phase(phase, Stage.RUNTIME, inp, collector)
    return build_report(doc, moment, collector)
