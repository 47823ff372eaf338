"""The rule registry: every rule id with its phase, severity, stages and one-line summary.

Rules are small functions registered with :func:`rule`::

    @rule("NOD-Q007", phase=Phase.NODE, severity=Severity.ERROR,
          summary="followUpPolicy.maxFollowUps MUST be >= 0.")
    def max_follow_ups_not_negative(inp: RuleInput) -> Iterator[Issue]:
        ...

A rule function receives a :class:`RuleInput` and yields :class:`Issue` objects; the pipeline
stamps each with the rule's id and severity. Rule functions must not raise: the pipeline
catches anything they raise and reports it as an internal error (VAL-002) naming the rule.

Rules of phase :attr:`Phase.ADAPTER` run only when steps 1-8 produced no error and the adapter
compiled the package; they find the compiled flow in :attr:`RuleInput.compiled`.

Rule ids enforced outside this validator (at runtime by the controller, the event store, the
output filters; or by another module) are recorded with :func:`declare` so the catalogue lists
every id of chapter 08. A later :func:`rule` registration replaces a declaration of the same id
(that is how ``ioa.validation.rules.adapter`` takes over the ADP-* placeholders).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from ioa.errors import RuleRegistryError
from ioa.schema.loader import SchemaCheck
from ioa.schema.package import AssessmentPackage
from ioa.validation.context import ValidationContext
from ioa.validation.document import PackageDocument
from ioa.validation.findings import Issue, Phase, Severity, Stage

PUBLISH: Final = frozenset({Stage.PUBLISH})
RUNTIME: Final = frozenset({Stage.RUNTIME})
PUBLISH_AND_RUNTIME: Final = frozenset({Stage.PUBLISH, Stage.RUNTIME})


@dataclass(frozen=True)
class RuleInput:
    """Everything a rule may look at."""

    doc: PackageDocument
    """Tolerant view of the raw document (works whatever its shape)."""
    schema: SchemaCheck
    """The schema check of the document."""
    context: ValidationContext
    compiled: object | None = None
    """The compiled flow (adapter output); only set for ADAPTER and COMPATIBILITY rules after a
    successful compilation."""

    @property
    def package(self) -> AssessmentPackage | None:
        """The loaded package if the document passed the schema, else None."""
        return self.schema.package


RuleCheck = Callable[[RuleInput], Iterable[Issue]]


@dataclass(frozen=True)
class RuleSpec:
    """A registered rule (``check`` set) or a declared-only rule (``enforced_by`` set)."""

    rule_id: str
    phase: Phase
    severity: Severity
    summary: str
    stages: frozenset[Stage]
    module: str
    """The module that registered it."""
    check: RuleCheck | None = None
    enforced_by: str | None = None
    """For declared-only rules: the component that enforces the rule."""

    @property
    def is_declared_only(self) -> bool:
        """True when this validator does not evaluate the rule itself."""
        return self.check is None


class RuleRegistry:
    """An ordered collection of rules keyed by id. Iteration follows registration order."""

    def __init__(self) -> None:
        self._rules: dict[str, RuleSpec] = {}

    def add(self, spec: RuleSpec) -> None:
        """Register ``spec``; a real rule may replace a declaration, nothing else may repeat."""
        existing = self._rules.get(spec.rule_id)
        if existing is not None and not (existing.is_declared_only and not spec.is_declared_only):
            raise RuleRegistryError(
                f"rule {spec.rule_id} is already registered by {existing.module}"
            )
        self._rules[spec.rule_id] = spec

    def get(self, rule_id: str) -> RuleSpec:
        """The rule with ``rule_id``; raises KeyError if unknown."""
        return self._rules[rule_id]

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._rules

    def __iter__(self) -> Iterator[RuleSpec]:
        return iter(tuple(self._rules.values()))

    def __len__(self) -> int:
        return len(self._rules)

    def checks(self, phase: Phase, stage: Stage) -> tuple[RuleSpec, ...]:
        """Rules of ``phase`` that this validator evaluates at ``stage``, in order."""
        return tuple(
            spec
            for spec in self._rules.values()
            if spec.phase is phase and spec.check is not None and stage in spec.stages
        )


REGISTRY: Final = RuleRegistry()
"""The process-wide registry the pipeline uses."""


def rule(
    rule_id: str,
    *,
    phase: Phase,
    severity: Severity,
    summary: str,
    stages: frozenset[Stage] = PUBLISH,
    registry: RuleRegistry = REGISTRY,
) -> Callable[[RuleCheck], RuleCheck]:
    """Register the decorated function as the check of ``rule_id``."""

    def register(check: RuleCheck) -> RuleCheck:
        registry.add(
            RuleSpec(
                rule_id=rule_id,
                phase=phase,
                severity=severity,
                summary=summary,
                stages=stages,
                module=check.__module__,
                check=check,
            )
        )
        return check

    return register


def declare(
    rule_id: str,
    *,
    phase: Phase,
    severity: Severity,
    summary: str,
    enforced_by: str,
    stages: frozenset[Stage] = RUNTIME,
    module: str,
    registry: RuleRegistry = REGISTRY,
) -> None:
    """Record a rule this validator does not evaluate, and who enforces it."""
    registry.add(
        RuleSpec(
            rule_id=rule_id,
            phase=phase,
            severity=severity,
            summary=summary,
            stages=stages,
            module=module,
            enforced_by=enforced_by,
        )
    )
