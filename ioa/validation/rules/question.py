"""Step 3: question node rules (NOD-Q001..012).

"Question nodes" are question and scenario nodes (``QUESTION_LIKE_KINDS``). The evidence target
and follow-up policy checks apply to every non-end node that has them. Some rules repeat an
EVD-* or POL-F* rule of chapter 08 word for word; both ids are reported so tools keyed on either
see the problem, and the message names the twin.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Final

from ioa.schema.enums import ALWAYS_ALLOWED_COMMANDS, MINIMUM_QUESTION_COMMANDS, FollowUpStyle
from ioa.validation.document import (
    NodeView,
    PackageDocument,
    as_int,
    as_number,
    as_str,
    as_text,
    describe,
    is_one_of,
    strings_in,
)
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import RuleInput, rule

WEIGHT_SUM_TOLERANCE: Final = 0.05
"""NOD-Q005 / EVD-005: node weights must sum to 1 within this tolerance."""

FOLLOW_UP_SOFT_LIMIT: Final = 10
"""NOD-Q008: more follow-ups than this is unusual."""

_ALWAYS_ALLOWED_VALUES: Final = frozenset(command.value for command in ALWAYS_ALLOWED_COMMANDS)
_MINIMUM_QUESTION_VALUES: Final = tuple(command.value for command in MINIMUM_QUESTION_COMMANDS)


def follow_up_policy(node: NodeView) -> Mapping[str, object] | None:
    """The node's followUpPolicy object (None if absent or not an object, or an end node)."""
    return None if node.is_end else node.mapping("followUpPolicy")


def duplicate_target_ids(node: NodeView, twin: str) -> Iterator[Issue]:
    """Issues for every evidence target id that repeats an earlier one in the node."""
    seen: dict[str, int] = {}
    for target in node.evidence_targets:
        target_id = target.target_id
        if target_id is None:
            continue
        if target_id in seen:
            yield node.issue(
                f"evidence target id '{target_id}' is already used by evidenceTargets"
                f"[{seen[target_id]}] of this node; give each target a unique id (also reported "
                f"as {twin})",
                "evidenceTargets",
                target.index,
                "id",
            )
        else:
            seen[target_id] = target.index


def blank_labels(node: NodeView, twin: str) -> Iterator[Issue]:
    """Issues for evidence targets whose label is missing or blank."""
    for target in node.evidence_targets:
        if not target.is_object:
            continue
        if as_text(target.raw.get("label")) is None:
            name = (
                f"'{target.target_id}'" if target.target_id else f"evidenceTargets[{target.index}]"
            )
            yield node.issue(
                f"evidence target {name} needs a non-empty, human-readable label (got "
                f"{describe(target.raw.get('label'))}); markers and reports show it (also reported "
                f"as {twin})",
                "evidenceTargets",
                target.index,
                "label",
            )


def weight_sum_issue(node: NodeView, twin: str) -> Issue | None:
    """An issue if every target has a weight and they do not sum to 1 (±0.05)."""
    targets = [target for target in node.evidence_targets if target.is_object]
    if not targets:
        return None
    weights = [target.weight for target in targets]
    if any(weight is None for weight in weights):
        return None
    total = sum(weight for weight in weights if weight is not None)
    if abs(total - 1.0) <= WEIGHT_SUM_TOLERANCE:
        return None
    return node.issue(
        f"evidence target weights of node {node.name} sum to {total:.2f}, not 1.0 (tolerance "
        f"±{WEIGHT_SUM_TOLERANCE}); rescale them so they add up to 1 (also reported as {twin})",
        "evidenceTargets",
    )


@rule(
    "NOD-Q001",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary="Question nodes SHOULD have at least one evidenceTarget.",
)
def question_has_targets(inp: RuleInput) -> Iterator[Issue]:
    """Question and scenario nodes name what they assess."""
    for node in inp.doc.question_nodes:
        if not node.evidence_targets:
            yield node.issue(
                f"question node {node.name} has no evidenceTargets, so nothing it hears can be "
                "recorded as evidence; add at least one target with an id, label and weight",
                "evidenceTargets",
            )


@rule(
    "NOD-Q002",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="Each evidenceTarget MUST have a unique id within the node (twin of EVD-001).",
)
def target_ids_unique_in_node(inp: RuleInput) -> Iterator[Issue]:
    """Evidence target ids do not repeat within a node."""
    for node in inp.doc.nodes:
        yield from duplicate_target_ids(node, "EVD-001")


@rule(
    "NOD-Q003",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="Each evidenceTarget MUST have a non-empty label (twin of EVD-003).",
)
def target_labels_present(inp: RuleInput) -> Iterator[Issue]:
    """Evidence targets have labels."""
    for node in inp.doc.nodes:
        yield from blank_labels(node, "EVD-003")


@rule(
    "NOD-Q004",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary="Each evidenceTarget SHOULD have a weight between 0 and 1.",
)
def target_weight_recommended(inp: RuleInput) -> Iterator[Issue]:
    """Evidence targets have a weight, in [0, 1] (out of range is also an EVD-004 error)."""
    for node in inp.doc.nodes:
        for target in node.evidence_targets:
            if not target.is_object:
                continue
            name = (
                f"'{target.target_id}'" if target.target_id else f"evidenceTargets[{target.index}]"
            )
            if "weight" not in target.raw:
                yield node.issue(
                    f"evidence target {name} has no weight; add a weight between 0 and 1 so "
                    "marking knows its share of the node",
                    "evidenceTargets",
                    target.index,
                    "weight",
                )
                continue
            weight = target.weight
            if weight is None or not 0.0 <= weight <= 1.0:
                yield node.issue(
                    f"evidence target {name} has weight {describe(target.raw.get('weight'))}; "
                    "use a number between 0 and 1",
                    "evidenceTargets",
                    target.index,
                    "weight",
                )


@rule(
    "NOD-Q005",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary="evidenceTarget weights within a node SHOULD sum to 1.0 ±0.05 (twin of EVD-005).",
)
def target_weights_sum_to_one(inp: RuleInput) -> Iterator[Issue]:
    """Node weights add up to 1."""
    for node in inp.doc.nodes:
        issue = weight_sum_issue(node, "EVD-005")
        if issue is not None:
            yield issue


@rule(
    "NOD-Q006",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary="Question nodes SHOULD have a followUpPolicy object.",
)
def question_has_follow_up_policy(inp: RuleInput) -> Iterator[Issue]:
    """Question and scenario nodes say how far the examiner may probe."""
    for node in inp.doc.question_nodes:
        if "followUpPolicy" not in node.raw or node.get("followUpPolicy") is None:
            yield node.issue(
                f"question node {node.name} has no followUpPolicy, so it allows no follow-ups "
                '(the default); add one, e.g. {"maxFollowUps": 2, "maxFollowUpDurationSec": '
                '90, "followUpStyle": "probing"}',
                "followUpPolicy",
            )


def max_follow_ups_negative(doc: PackageDocument, twin: str) -> Iterator[Issue]:
    """Issues for negative maxFollowUps (shared by NOD-Q007 and POL-F001)."""
    for node in doc.nodes:
        policy = follow_up_policy(node)
        if policy is None:
            continue
        count = as_int(policy.get("maxFollowUps"))
        if count is not None and count < 0:
            yield node.issue(
                f"followUpPolicy.maxFollowUps must be >= 0, got {count}; set it to 0 for no "
                f"follow-ups (also reported as {twin})",
                "followUpPolicy",
                "maxFollowUps",
            )


@rule(
    "NOD-Q007",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="followUpPolicy.maxFollowUps MUST be >= 0 (twin of POL-F001).",
)
def max_follow_ups_not_negative(inp: RuleInput) -> Iterator[Issue]:
    """maxFollowUps is not negative."""
    yield from max_follow_ups_negative(inp.doc, "POL-F001")


@rule(
    "NOD-Q008",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary=f"followUpPolicy.maxFollowUps SHOULD be <= {FOLLOW_UP_SOFT_LIMIT}.",
)
def max_follow_ups_reasonable(inp: RuleInput) -> Iterator[Issue]:
    """maxFollowUps stays within a humane number."""
    for node in inp.doc.nodes:
        policy = follow_up_policy(node)
        count = as_int(policy.get("maxFollowUps")) if policy is not None else None
        if count is not None and count > FOLLOW_UP_SOFT_LIMIT:
            yield node.issue(
                f"followUpPolicy.maxFollowUps is {count}, more than {FOLLOW_UP_SOFT_LIMIT}; that "
                "many follow-ups tires the candidate and skews the time budget, so lower it",
                "followUpPolicy",
                "maxFollowUps",
            )


@rule(
    "NOD-Q009",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="followUpPolicy.maxFollowUpDurationSec MUST be > 0 when specified.",
)
def follow_up_duration_positive(inp: RuleInput) -> Iterator[Issue]:
    """maxFollowUpDurationSec, when present, is a positive number."""
    for node in inp.doc.nodes:
        policy = follow_up_policy(node)
        if policy is None or policy.get("maxFollowUpDurationSec") is None:
            continue
        value = policy.get("maxFollowUpDurationSec")
        seconds = as_number(value)
        if seconds is None or seconds <= 0:
            yield node.issue(
                f"followUpPolicy.maxFollowUpDurationSec must be a positive number of seconds, got "
                f"{describe(value)}; e.g. 90",
                "followUpPolicy",
                "maxFollowUpDurationSec",
            )


_STYLES: Final = ", ".join(style.value for style in FollowUpStyle)
_STYLE_VALUES: Final = frozenset(style.value for style in FollowUpStyle)


@rule(
    "NOD-Q010",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary=(
        "followUpPolicy.followUpStyle MUST be one of probing, scaffolding, clarifying, "
        "redirecting, free when specified."
    ),
)
def follow_up_style_valid(inp: RuleInput) -> Iterator[Issue]:
    """followUpStyle, when present, is a known style."""
    for node in inp.doc.nodes:
        policy = follow_up_policy(node)
        if policy is None or policy.get("followUpStyle") is None:
            continue
        style = policy.get("followUpStyle")
        if not is_one_of(style, _STYLE_VALUES):
            yield node.issue(
                f"followUpPolicy.followUpStyle must be one of {_STYLES}, got {describe(style)}",
                "followUpPolicy",
                "followUpStyle",
            )


@rule(
    "NOD-Q011",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary=(
        "Question nodes SHOULD allow at least repeat, clarification and pause, or the package "
        "MUST give metadata.commandJustification."
    ),
)
def question_minimum_commands(inp: RuleInput) -> Iterator[Issue]:
    """Question nodes allow the accessibility minimum (welfare commands count as allowed)."""
    doc = inp.doc
    if doc.justification("commandJustification") is not None:
        return
    for node in doc.question_nodes:
        policy = doc.command_policy(node)
        allowed = set(strings_in(policy.get("allowed"))) if policy is not None else set()
        allowed |= _ALWAYS_ALLOWED_VALUES
        missing = [command for command in _MINIMUM_QUESTION_VALUES if command not in allowed]
        if missing:
            yield node.issue(
                f"question node {node.name} does not allow {', '.join(missing)}, which candidates "
                "need for accessibility and anxiety management; add them to "
                "candidateCommands.allowed, or explain why in metadata.commandJustification",
                "candidateCommands",
                "allowed",
            )


@rule(
    "NOD-Q012",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary=(
        "followUpStyle SHOULD be the same on all question nodes, or the package MUST give "
        "metadata.structureJustification."
    ),
)
def follow_up_style_consistent(inp: RuleInput) -> Iterator[Issue]:
    """Question nodes share one follow-up style (the most common one is the reference)."""
    doc = inp.doc
    if doc.justification("structureJustification") is not None:
        return
    styles: list[tuple[NodeView, str]] = []
    for node in doc.question_nodes:
        policy = follow_up_policy(node)
        style = as_str(policy.get("followUpStyle")) if policy is not None else None
        if style in _STYLE_VALUES:
            styles.append((node, style))
    counts = Counter(style for _, style in styles)
    if len(counts) < 2:
        return
    top = max(counts.values())
    reference = next(style for _, style in styles if counts[style] == top)
    for node, style in styles:
        if style != reference:
            yield node.issue(
                f"followUpStyle '{style}' differs from '{reference}' used by the other question "
                "nodes; inconsistent questioning threatens reliability, so use one style or "
                "explain the variation in metadata.structureJustification",
                "followUpPolicy",
                "followUpStyle",
            )
