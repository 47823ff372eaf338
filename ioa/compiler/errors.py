"""Compile findings and errors of the Pipecat adapter (chapter 07 §11).

A finding has the fields of a validation report entry (``ruleId``, ``severity``, ``nodeId``,
``message``, ``path``); ``path`` is kept both as a document path (``ioa.schema.paths.JsonPath``,
so the validation pipeline can turn it into an ``Issue``) and rendered in report style.
This module deliberately does not import ``ioa.validation`` (which imports the compiler).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from ioa.compiler.types import FindingDict
from ioa.errors import IoaError
from ioa.schema.paths import JsonPath

CompileSeverity = Literal["error", "warning"]

COMPILE_RULES: Final[dict[str, tuple[CompileSeverity, str]]] = {
    "ADP-C001": ("error", "A node MUST NOT reference an evidence target it does not define."),
    "ADP-C002": ("error", "Every transition target and pool member MUST exist."),
    "ADP-C003": (
        "error",
        "Assessment nodes (question, scenario, task, discussion) MUST have prompt.opening.",
    ),
    "ADP-C004": (
        "warning",
        "Scaffolding nodes SHOULD have prompt.opening; end nodes SHOULD have prompt.closing.",
    ),
    "ADP-C005": ("error", "An action MUST NOT be both allowed and forbidden (node or global)."),
}
"""The compile checks of chapter 07 §11, with the severity they are reported with. ADP-001
(duplicate node ids) and ADP-015 (a construct with no mapping) are also reported at compile
time."""


@dataclass(frozen=True, slots=True)
class CompileFinding:
    """One compile finding (an error makes the compiler refuse to produce a flow)."""

    rule_id: str
    severity: CompileSeverity
    message: str
    path: JsonPath
    node_id: str | None = None
    rendered_path: str = "$"

    def to_dict(self) -> FindingDict:
        """The finding in validation report format."""
        return {
            "ruleId": self.rule_id,
            "severity": self.severity,
            "nodeId": self.node_id,
            "message": self.message,
            "path": self.rendered_path,
        }


class CompileError(IoaError, ValueError):
    """The package cannot be compiled faithfully: the adapter refuses to produce a flow (A-7).

    ``findings`` holds every finding of the compile run (errors and warnings), in document
    order, in the validation report format.
    """

    def __init__(self, findings: Sequence[CompileFinding]) -> None:
        self.findings: tuple[CompileFinding, ...] = tuple(findings)
        errors = [f for f in self.findings if f.severity == "error"]
        shown = "; ".join(f"{f.rule_id} {f.rendered_path}: {f.message}" for f in errors[:5])
        more = len(errors) - 5
        suffix = f" (and {more} more)" if more > 0 else ""
        super().__init__(f"cannot compile the package: {len(errors)} error(s): {shown}{suffix}")

    @property
    def errors(self) -> tuple[CompileFinding, ...]:
        """The findings of severity ``error``."""
        return tuple(f for f in self.findings if f.severity == "error")
