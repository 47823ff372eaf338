"""Small builders for test packages: copies of the cs201 example, edited by path.

Paths use the report style: ``nodes[q-dijkstra].followUpPolicy.maxFollowUps``. Inside
brackets, a number is an index; otherwise it selects the list entry whose ``nodeId``, ``id``
or ``poolId`` equals the text.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from ioa.validation import Finding, ValidationContext, ValidationReport, validate_package

FIXTURE = Path(__file__).parent / "fixtures" / "cs201-graph-algorithms.json"
NOW = datetime(2026, 11, 2, 10, 30, tzinfo=UTC)
"""The fixed validation time of the tests."""

_SEGMENT = re.compile(r"([^.\[\]]+)|\[([^\]]+)\]")
_KEYS = ("nodeId", "id", "poolId")


@cache
def _example_text() -> str:
    return FIXTURE.read_text(encoding="utf-8")


def example() -> dict[str, Any]:
    """A fresh deep copy of the cs201 example (a valid package)."""
    loaded: dict[str, Any] = json.loads(_example_text())
    return loaded


def _segments(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for key, bracket in _SEGMENT.findall(path):
        if key:
            parts.append(key)
        elif bracket.isdigit():
            parts.append(int(bracket))
        else:
            parts.append(f"@{bracket}")
    return parts


def _step(container: Any, segment: str | int) -> Any:
    if isinstance(segment, int):
        return container[segment]
    if segment.startswith("@"):
        wanted = segment[1:]
        for item in container:
            if isinstance(item, dict) and any(item.get(key) == wanted for key in _KEYS):
                return item
        raise KeyError(wanted)
    return container[segment]


def _parent(document: Any, path: str) -> tuple[Any, str | int]:
    segments = _segments(path)
    current = document
    for segment in segments[:-1]:
        current = _step(current, segment)
    last = segments[-1]
    if isinstance(last, str) and last.startswith("@"):
        wanted = last[1:]
        for index, item in enumerate(current):
            if isinstance(item, dict) and any(item.get(key) == wanted for key in _KEYS):
                return current, index
        raise KeyError(wanted)
    return current, last


def get(document: Any, path: str) -> Any:
    """The value at ``path``."""
    current = document
    for segment in _segments(path):
        current = _step(current, segment)
    return current


def put(document: Any, path: str, value: Any) -> Any:
    """Set ``path`` to ``value`` (creating the last key); returns the document."""
    parent, last = _parent(document, path)
    if isinstance(parent, list) and isinstance(last, int) and last == len(parent):
        parent.append(value)
    else:
        parent[last] = value
    return document


def delete(document: Any, path: str) -> Any:
    """Remove the key or list entry at ``path``; returns the document."""
    parent, last = _parent(document, path)
    del parent[last]
    return document


def node(document: Any, node_id: str) -> dict[str, Any]:
    """The node with ``node_id``."""
    found: dict[str, Any] = get(document, f"nodes[{node_id}]")
    return found


def question_node(node_id: str, target: str, **overrides: Any) -> dict[str, Any]:
    """A complete question node whose always transition leads to ``target``."""
    built: dict[str, Any] = {
        "nodeId": node_id,
        "kind": "question",
        "promptSeed": f"Ask question {node_id} and probe the reasoning.",
        "prompt": {"opening": f"Please answer question {node_id}."},
        "evidenceTargets": [
            {
                "id": f"tgt-{node_id}",
                "label": f"Answers {node_id}",
                "description": "Candidate explains the idea with an example.",
                "weight": 1.0,
                "dimension": "knowledge_understanding",
                "markingCriteria": ["LO2"],
            }
        ],
        "followUpPolicy": {
            "maxFollowUps": 3,
            "maxFollowUpDurationSec": 90,
            "followUpStyle": "probing",
        },
        "completionPolicy": {"requiredEvidenceTargetIds": [f"tgt-{node_id}"], "minTurns": 2},
        "timeBudget": {"maxDurationSec": 360},
        "forbiddenActions": ["reveal_answer", "reveal_rubric"],
        "candidateCommands": {"allowed": ["repeat", "clarification", "pause"]},
        "recoveryHandlers": [
            {
                "scenario": "silence",
                "maxAttempts": 2,
                "action": "gentle_reprompt",
                "escalation": "skip_node",
            },
            {
                "scenario": "stt_low_confidence",
                "maxAttempts": 2,
                "action": "gentle_reprompt",
                "escalation": "pause_session",
            },
        ],
        "transitions": [
            {"id": f"e-{node_id}", "targetNodeId": target, "condition": {"type": "always"}}
        ],
    }
    built.update(overrides)
    return built


def end_node(node_id: str, end_type: str) -> dict[str, Any]:
    """A complete end node."""
    return {
        "nodeId": node_id,
        "kind": "end",
        "endType": end_type,
        "promptSeed": "Close the examination.",
        "prompt": {"closing": "Thank you, the examination is over."},
        "transitions": [],
    }


def add_nodes(document: Any, *nodes: dict[str, Any]) -> Any:
    """Append nodes to the package; returns the document."""
    document["nodes"].extend(nodes)
    return document


def validate(document: object, context: ValidationContext | None = None) -> ValidationReport:
    """Validate at the fixed test time."""
    return validate_package(document, now=NOW, context=context)


def findings_of(report: ValidationReport, rule_id: str) -> list[Finding]:
    """The findings of one rule."""
    return [finding for finding in report.findings if finding.rule_id == rule_id]


def copy_of(document: Any) -> Any:
    """A deep copy."""
    return copy.deepcopy(document)


def grounded_node(
    node_id: str, target: str, pick: str = "choice", **grounding: Any
) -> dict[str, Any]:
    """A complete grounded question node (docs/spec/candidate-materials.md §1): no opening, a
    ``grounding`` object asking about a passage of the candidate's submission."""
    built = question_node(node_id, target)
    del built["prompt"]
    built["promptSeed"] = "Ask the candidate to justify the decision in the quoted passage."
    built["grounding"] = {
        "material": "submission",
        "pick": pick,
        "fallbackQuestion": "Tell me about one design decision you made and why.",
        **grounding,
    }
    return built
