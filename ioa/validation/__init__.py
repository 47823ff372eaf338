"""Package validation (chapter 08): publish-time and runtime rules, the report.

Public API
==========

``validate_package(document, *, now=None, context=None) -> ValidationReport``
    Validate any parsed JSON value for publication. Runs the pipeline of chapter 08 (schema,
    package, node, transition, evidence, policy, fairness, reachability, adapter,
    compatibility) and never raises for a bad document.

``validate_for_session(document, *, published_checksum, now=None, context=None)
-> ValidationReport``
    The runtime check before a session starts (supported irVersion, checksum, references).

``ValidationReport``
    ``.passed``, ``.result`` (``"pass"``/``"reject"``), ``.errors``/``.warnings``/``.info``
    (tuples of :class:`Finding`), ``.to_dict()`` (chapter 08 format).

``ValidationContext(published=(PublishedPackage(...), ...), support_policy=...)``
    What the validator may know beyond the document (earlier publications for CMP-001/004).

Writing rules (for other modules, e.g. ``ioa.validation.rules.adapter``)
=======================================================================

``@rule(rule_id, phase=Phase.X, severity=Severity.Y, summary="...")`` registers a function
``(inp: RuleInput) -> Iterable[Issue]``. ``inp.doc`` is a tolerant view of the raw document
(:class:`PackageDocument`), ``inp.package`` the loaded model (None if the schema failed) and, for
``Phase.ADAPTER`` rules, ``inp.compiled`` the output of ``ioa.compiler.compile_package``, with
``inp.compiled_from`` (the normalised document it was compiled from) and ``inp.compile_findings``
when the compiler hands them over. ``inp.memo(key, compute)`` shares a derived value between the
rules of one validation. Adapter rules run only when steps 1-8 found no error, so
``inp.package`` is set for them.
``Issue(path, message, node_id)`` paths are tuples of keys and indexes (``("nodes", 3,
"followUpPolicy")``; ``("$compiled", ...)`` points into the compiled flow).
"""

from ioa.validation.context import PublishedPackage, ValidationContext
from ioa.validation.document import PackageDocument
from ioa.validation.findings import Finding, Issue, Phase, Severity, Stage
from ioa.validation.pipeline import validate_package
from ioa.validation.registry import REGISTRY, RuleInput, RuleSpec, declare, rule
from ioa.validation.report import ValidationReport
from ioa.validation.runtime import validate_for_session

__all__ = [
    "REGISTRY",
    "Finding",
    "Issue",
    "PackageDocument",
    "Phase",
    "PublishedPackage",
    "RuleInput",
    "RuleSpec",
    "Severity",
    "Stage",
    "ValidationContext",
    "ValidationReport",
    "declare",
    "rule",
    "validate_for_session",
    "validate_package",
]
