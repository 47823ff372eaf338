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

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

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
    compiled_from: Mapping[str, Any] | None = None
    """ADAPTER rules: the normalised package document ``compiled`` was compiled from, when the
    compiler hands it over (``ioa.compiler.compile_for_validation``); None: the rules derive it
    from :attr:`package` (``ioa.compiler.package_document``). Read-only."""
    compile_findings: tuple[tuple[str, Issue], ...] | None = None
    """ADAPTER rules: the findings of the compile that produced ``compiled`` (rule id, issue),
    when the compiler reports them; None: unknown."""
    _memo: dict[str, object] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    @property
    def package(self) -> AssessmentPackage | None:
        """The loaded package if the document passed the schema, else None."""
        return self.schema.package

    def memo[T](self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, computed once per RuleInput and shared by the rules that ask for the
        same ``key`` (e.g. a view of the compiled flow that several rules walk).

        The value must depend only on this input's fields, which are never modified during
        validation. Every RuleInput has its own memo (``dataclasses.replace`` starts an empty
        one), and it holds its values only as long as the RuleInput lives. Thread-safe: two
        threads asking at once may both compute, but both get the same stored value.
        """
        try:
            return cast(T, self._memo[key])
        except KeyError:
            return cast(T, self._memo.setdefault(key, compute()))


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
        self._checks: dict[tuple[Phase, Stage], tuple[RuleSpec, ...]] = {}
        """:meth:`checks` results, cleared by :meth:`add`."""

    def add(self, spec: RuleSpec) -> None:
        """Register ``spec``; a real rule may replace a declaration, nothing else may repeat."""
        existing = self._rules.get(spec.rule_id)
        if existing is not None and not (existing.is_declared_only and not spec.is_declared_only):
            raise RuleRegistryError(
                f"rule {spec.rule_id} is already registered by {existing.module}"
            )
        self._rules[spec.rule_id] = spec
        self._checks = {}

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
        key = (phase, stage)
        cache = self._checks  # add() replaces the cache: a result never outlives a change
        found = cache.get(key)
        if found is None:
            found = tuple(
                spec
                for spec in self._rules.values()
                if spec.phase is phase and spec.check is not None and stage in spec.stages
            )
            cache[key] = found
        return found


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
