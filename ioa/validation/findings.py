"""What rules report: severities, pipeline phases, issues and findings."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from ioa.schema.paths import JsonPath


class Severity(StrEnum):
    """How a finding affects publication: any ``error`` rejects the package."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Phase(StrEnum):
    """The steps of the validation pipeline (chapter 08), in execution order."""

    SCHEMA = "schema"
    PACKAGE = "package"
    NODE = "node"
    TRANSITION = "transition"
    EVIDENCE = "evidence"
    POLICY = "policy"
    FAIRNESS = "fairness"
    REACHABILITY = "reachability"
    ADAPTER = "adapter"
    COMPATIBILITY = "compatibility"
    RUNTIME = "runtime"
    """Checks that only make sense when a session starts (or during it)."""
    PIPELINE = "pipeline"
    """Findings the pipeline itself emits (internal errors); sorted with the failing rule."""

    @property
    def step(self) -> int:
        """1-based position in the pipeline (chapter 08 numbering for steps 1-10)."""
        return PHASE_ORDER.index(self) + 1


PHASE_ORDER: Final[tuple[Phase, ...]] = tuple(Phase)
"""Phases in pipeline order."""


class Stage(StrEnum):
    """When a rule is enforced."""

    PUBLISH = "publish"
    RUNTIME = "runtime"


@dataclass(frozen=True, slots=True)
class Issue:
    """What a rule function yields: where the problem is and a message that says what is
    wrong and how to fix it. The pipeline adds the rule id and severity."""

    path: JsonPath
    message: str
    node_id: str | None = None


SortKey = tuple[int, tuple[tuple[int, int | str], ...], str, str]


def path_sort_key(path: JsonPath) -> tuple[tuple[int, int | str], ...]:
    """Order paths by document position: indexes numerically, keys alphabetically."""
    return tuple((0, segment) if isinstance(segment, int) else (1, segment) for segment in path)


@dataclass(frozen=True, slots=True)
class Finding:
    """One entry of a validation report."""

    rule_id: str
    severity: Severity
    node_id: str | None
    message: str
    path: str
    """Rendered path, e.g. ``nodes[q-dijkstra].followUpPolicy.maxFollowUps``."""
    phase: Phase
    sort_key: SortKey

    def to_dict(self) -> dict[str, str | None]:
        """The finding in report format (chapter 08)."""
        return {
            "ruleId": self.rule_id,
            "severity": self.severity.value,
            "nodeId": self.node_id,
            "message": self.message,
            "path": self.path,
        }
