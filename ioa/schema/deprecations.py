"""Finding deprecated spellings in a raw document (CMP-006, CMP-008).

Works on any value (tolerant): entries of the wrong type are skipped, never an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ioa.schema.enums import EVIDENCE_SUFFICIENT_ALIAS
from ioa.schema.paths import JsonPath
from ioa.versioning import DEPRECATIONS, Deprecation

TIME_BUDGET_MS, EVIDENCE_SUFFICIENT = DEPRECATIONS


@dataclass(frozen=True)
class DeprecatedUsage:
    """One use of a deprecated spelling in a document."""

    path: JsonPath
    deprecation: Deprecation
    message: str


def find_deprecated_usages(document: object) -> Iterator[DeprecatedUsage]:
    """Yield every deprecated spelling in ``document``, in document order."""
    if not isinstance(document, Mapping):
        return
    nodes = document.get("nodes")
    if not isinstance(nodes, list):
        return
    for index, node in enumerate(nodes):
        if not isinstance(node, Mapping):
            continue
        if "timeBudgetMs" in node:
            milliseconds = node["timeBudgetMs"]
            shown = (
                f"{milliseconds / 1000:g}"
                if isinstance(milliseconds, int | float) and not isinstance(milliseconds, bool)
                else "<ms>/1000"
            )
            yield DeprecatedUsage(
                ("nodes", index, "timeBudgetMs"),
                TIME_BUDGET_MS,
                "timeBudgetMs is deprecated since ioa-orm/0.2 and converted to "
                f'timeBudget.maxDurationSec; write "timeBudget": {{"maxDurationSec": {shown}}} '
                "instead (it may be removed in ioa-orm/1.0)",
            )
        transitions = node.get("transitions")
        if not isinstance(transitions, list):
            continue
        for position, transition in enumerate(transitions):
            if not isinstance(transition, Mapping):
                continue
            condition = transition.get("condition")
            if (
                isinstance(condition, Mapping)
                and condition.get("type") == EVIDENCE_SUFFICIENT_ALIAS
            ):
                yield DeprecatedUsage(
                    ("nodes", index, "transitions", position, "condition", "type"),
                    EVIDENCE_SUFFICIENT,
                    "condition type evidence_sufficient is deprecated since ioa-orm/0.2 and "
                    "converted to evidence_satisfied; write "
                    '{"type": "evidence_satisfied", "targetIds": [...]} instead of '
                    "requiredEvidence (it may be removed in ioa-orm/1.0)",
                )
