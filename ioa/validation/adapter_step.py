"""Step 9 of the pipeline: adapter compilation and the adapter rules (ADP-*).

The compiler (``ioa.compiler.compile_package``) and the adapter rules
(``ioa.validation.rules.adapter``) are written separately and may be absent from an
installation; this module finds them at run time. When the compiler also offers
``compile_for_validation`` (same compile, also returning the normalised document and the compile
findings), the step uses it, so the package is dumped and compiled once per validation and the
adapter rules get the document (``RuleInput.compiled_from``) and the compile warnings
(``RuleInput.compile_findings``) from that single compile. The step runs only when steps 1-8
found no error. What happens otherwise:

* earlier errors, or no compiler installed: a VAL-001 info finding says the step was skipped
  and why (the ADP-* rules were not evaluated);
* compilation raises an error carrying ``findings`` (the compiler's ``CompileError``): each
  finding is reported under its own rule id (ADP-C00x...);
* the compiler or the adapter rules are present but fail to import, or compilation raises
  anything else: a VAL-003 error (fail closed: a package must not be published unchecked).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, cast

from ioa.schema.package import AssessmentPackage
from ioa.validation.execution import FindingCollector, run_phase
from ioa.validation.findings import Issue, Phase, Severity, Stage
from ioa.validation.registry import REGISTRY, RuleInput, RuleSpec

COMPILER_MODULE: Final = "ioa.compiler"
COMPILER_FUNCTION: Final = "compile_package"
VALIDATION_COMPILER_FUNCTION: Final = "compile_for_validation"
ADAPTER_RULES_MODULE: Final = "ioa.validation.rules.adapter"

SKIPPED_RULE: Final = "VAL-001"
FAILED_RULE: Final = "VAL-003"

Compiler = Callable[[AssessmentPackage], object]


@dataclass(frozen=True)
class ModuleLookup:
    """Result of looking for an optional module: found, absent, or present but broken."""

    module: object | None
    problem: str | None = None
    broken: bool = False


def find_optional_module(name: str) -> ModuleLookup:
    """Import ``name`` if it exists; report absence and import failures without raising."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return ModuleLookup(loaded)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as error:
        return ModuleLookup(None, f"{name} could not be located: {error}", broken=True)
    if spec is None:
        return ModuleLookup(None, f"{name} is not installed")
    try:
        return ModuleLookup(importlib.import_module(name))
    except Exception as error:
        return ModuleLookup(
            None, f"{name} failed to import: {type(error).__name__}: {error}", broken=True
        )


def find_compiler() -> tuple[Compiler | None, ModuleLookup]:
    """``ioa.compiler.compile_package`` if available, with the lookup details."""
    lookup = find_optional_module(COMPILER_MODULE)
    if lookup.module is None:
        return None, lookup
    compiler = getattr(lookup.module, COMPILER_FUNCTION, None)
    if not callable(compiler):
        return None, ModuleLookup(None, f"{COMPILER_MODULE} has no {COMPILER_FUNCTION}()")
    return compiler, lookup


@dataclass(frozen=True)
class Compiled:
    """The output of the compile step."""

    flow: object
    document: Mapping[str, Any] | None = None
    """The normalised package the flow was compiled from, if the compiler handed it over."""
    findings: tuple[tuple[str, Issue], ...] | None = None
    """The compile findings (rule id, issue), if the compiler handed them over."""


def validation_compiler(compiler: Compiler, lookup: ModuleLookup) -> Callable[..., object] | None:
    """The compiler module's ``compile_for_validation``, if it has one that goes with
    ``compiler`` (defined next to that very ``compile_package``: a replaced compile_package is
    called as it is)."""
    full: object = getattr(lookup.module, VALIDATION_COMPILER_FUNCTION, None)
    if not callable(full):
        return None
    home = sys.modules.get(str(getattr(full, "__module__", "")))
    if getattr(home, COMPILER_FUNCTION, None) is not compiler:
        return None
    return full


def run_compiler(compiler: Compiler, lookup: ModuleLookup, package: AssessmentPackage) -> Compiled:
    """Compile ``package`` once: with ``compile_for_validation`` (returning ``(flow, document,
    findings)``) when the compiler module offers it, else with ``compiler``. Raises what the
    compiler raises."""
    full = validation_compiler(compiler, lookup)
    if full is None:
        return Compiled(compiler(package))
    flow, document, findings = cast(tuple[object, object, object], full(package))
    return Compiled(
        flow,
        document if isinstance(document, Mapping) else None,
        compile_issues(findings),
    )


def compile_issues(findings: object) -> tuple[tuple[str, Issue], ...] | None:
    """Compile findings (objects with ``rule_id``, ``path``, ``message``, ``node_id``) as
    ``(rule id, Issue)`` pairs; None if any is not usable."""
    if not isinstance(findings, Sequence):
        return None
    issues: list[tuple[str, Issue]] = []
    for finding in findings:
        rule_id = getattr(finding, "rule_id", None)
        path = getattr(finding, "path", None)
        message = getattr(finding, "message", None)
        node_id = getattr(finding, "node_id", None)
        if (
            not isinstance(rule_id, str)
            or not isinstance(path, tuple)
            or not all(isinstance(segment, str | int) for segment in path)
            or not isinstance(message, str)
            or not (node_id is None or isinstance(node_id, str))
        ):
            return None
        issues.append((rule_id, Issue(path, message, node_id)))
    return tuple(issues)


def adapter_rules_lookup() -> ModuleLookup:
    """Whether the adapter rules module is loaded (imported by ``ioa.validation.rules``)."""
    return find_optional_module(ADAPTER_RULES_MODULE)


def report_compile_findings(error: Exception, collector: FindingCollector) -> bool:
    """Report the findings a compile error carries (``error.findings``: objects with
    ``rule_id``, ``path``, ``message``, ``node_id``) under their own rule ids.

    Returns False, reporting nothing, unless every finding is usable (known rule id, tuple
    path) and at least one is an error, so a rejection is never lost.
    """
    findings = getattr(error, "findings", None)
    if not isinstance(findings, tuple | list) or not findings:
        return False
    issues: list[tuple[RuleSpec, Issue]] = []
    for finding in findings:
        rule_id = getattr(finding, "rule_id", None)
        path = getattr(finding, "path", None)
        message = getattr(finding, "message", None)
        node_id = getattr(finding, "node_id", None)
        if (
            not isinstance(rule_id, str)
            or rule_id not in REGISTRY
            or not isinstance(path, tuple)
            or not all(isinstance(segment, str | int) for segment in path)
            or not isinstance(message, str)
        ):
            return False
        issues.append(
            (
                REGISTRY.get(rule_id),
                Issue(path, message, node_id if isinstance(node_id, str) else None),
            )
        )
    if not any(spec.severity is Severity.ERROR for spec, _ in issues):
        return False
    for spec, issue in issues:
        collector.add(spec, issue)
    return True


def run_adapter_step(
    inp: RuleInput, collector: FindingCollector, errors_so_far: int
) -> object | None:
    """Compile and run the ADAPTER rules; return the compiled flow, or None if not compiled."""
    if errors_so_far:
        collector.add_pipeline_finding(
            SKIPPED_RULE,
            f"step 9 (adapter compilation, ADP-* rules) skipped: steps 1-8 found {errors_so_far} "
            "error(s), and only a package that passes them is compiled; fix those errors and "
            "validate again",
        )
        return None
    package = inp.package
    if package is None:
        collector.add_pipeline_finding(
            SKIPPED_RULE, "step 9 skipped: the document did not load as a package"
        )
        return None
    compiler, lookup = find_compiler()
    if compiler is None:
        _report_no_compiler(lookup, collector)
        return None
    try:
        result = run_compiler(compiler, lookup, package)
    except Exception as error:  # reported as findings or VAL-003, never propagated
        if not report_compile_findings(error, collector):
            collector.add_pipeline_finding(
                FAILED_RULE,
                f"adapter compilation failed: {type(error).__name__}: {error}; the package "
                "cannot be compiled for the runtime. Fix the cause, or report it to the "
                "platform team",
            )
        return None
    _report_rules_not_run(collector)
    adapter_input = replace(
        inp, compiled=result.flow, compiled_from=result.document, compile_findings=result.findings
    )
    run_phase(Phase.ADAPTER, Stage.PUBLISH, adapter_input, collector)
    return result.flow


def _report_no_compiler(lookup: ModuleLookup, collector: FindingCollector) -> None:
    """No adapter compiler: a broken installation rejects the package, a missing one skips."""
    if lookup.broken:
        collector.add_pipeline_finding(
            FAILED_RULE,
            f"adapter compilation could not run: {lookup.problem}; the package cannot be "
            "checked against the adapter rules, so it is rejected. Fix the installation",
        )
    else:
        collector.add_pipeline_finding(
            SKIPPED_RULE,
            f"step 9 (adapter compilation, ADP-* rules) skipped: {lookup.problem}; install "
            "the adapter to have these rules evaluated",
        )


def _report_rules_not_run(collector: FindingCollector) -> None:
    """The package compiled but the adapter rules cannot run (not loaded, or none registered)."""
    rules = adapter_rules_lookup()
    if rules.module is None:
        rule_id = FAILED_RULE if rules.broken else SKIPPED_RULE
        collector.add_pipeline_finding(
            rule_id,
            f"the package compiled, but the adapter rules were not evaluated: {rules.problem}",
        )
    elif not REGISTRY.checks(Phase.ADAPTER, Stage.PUBLISH):
        collector.add_pipeline_finding(
            SKIPPED_RULE,
            f"the package compiled, but {ADAPTER_RULES_MODULE} registers no adapter-phase rule",
        )
