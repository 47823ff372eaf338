"""Step 4: transition rules (TRN-001..007, 010, 011, plus TRN-101/102 of this project).

Transitions of end nodes are not checked here (NOD-E101 reports that they exist at all).
TRN-008/009 (reachability) run in step 8, see ``reachability.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Final, cast

from ioa.schema.enums import (
    EVIDENCE_SUFFICIENT_ALIAS,
    CandidateCommandType,
    ConditionType,
    RecoveryEscalation,
)
from ioa.schema.fields import IDENTIFIER_RE
from ioa.schema.transitions import CONDITION_PARAMETERS
from ioa.validation.document import (
    NodeView,
    TransitionView,
    as_int,
    as_list,
    as_number,
    as_str,
    describe,
    is_one_of,
)
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.graph import exam_graph
from ioa.validation.registry import PUBLISH_AND_RUNTIME, RuleInput, rule
from ioa.validation.rules.package import listing

_TYPES: Final = ", ".join(member.value for member in ConditionType)
_ALWAYS: Final = ConditionType.ALWAYS.value
_EVIDENCE_SATISFIED: Final = ConditionType.EVIDENCE_SATISFIED.value
_TURN_COUNT_REACHED: Final = ConditionType.TURN_COUNT_REACHED.value
_TIME_ELAPSED: Final = ConditionType.TIME_ELAPSED.value
_CANDIDATE_COMMAND: Final = ConditionType.CANDIDATE_COMMAND.value
_POLICY_ESCALATION: Final = ConditionType.POLICY_ESCALATION.value
_VALID_TYPES: Final = frozenset(member.value for member in ConditionType)
_COMMANDS: Final = frozenset(member.value for member in CandidateCommandType)
_ESCALATIONS: Final = frozenset(member.value for member in RecoveryEscalation)
ESCAPE_CONDITIONS: Final = frozenset({_TIME_ELAPSED, _TURN_COUNT_REACHED})
"""Condition types that bound a stay in a cycle (TRN-007)."""


def source_transitions(inp: RuleInput) -> Iterator[tuple[NodeView, TransitionView]]:
    """Every transition object of every non-end node, in document order."""
    for node in inp.doc.nodes:
        if not node.is_object or node.is_end:
            continue
        for transition in node.transitions:
            if transition.is_object:
                yield node, transition


def transition_name(transition: TransitionView) -> str:
    """How messages refer to a transition: its id, or its index."""
    transition_id = as_str(transition.raw.get("id"))
    return f"'{transition_id}'" if transition_id else f"transitions[{transition.index}]"


def _at(node: NodeView, transition: TransitionView, message: str, *segments: str | int) -> Issue:
    return node.issue(message, "transitions", transition.index, *segments)


@rule(
    "TRN-001",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary=(
        "Every transition MUST have a targetNodeId that names an existing node (or question pool)."
    ),
    stages=PUBLISH_AND_RUNTIME,
)
def target_exists(inp: RuleInput) -> Iterator[Issue]:
    """targetNodeId resolves to a node or a pool."""
    doc = inp.doc
    for node, transition in source_transitions(inp):
        value = transition.raw.get("targetNodeId")
        if "targetNodeId" not in transition.raw:
            yield _at(
                node,
                transition,
                f"transition {transition_name(transition)} of node {node.name} has no "
                "targetNodeId; add the id of the node (or pool) it leads to",
                "targetNodeId",
            )
        elif not isinstance(value, str):
            yield _at(
                node,
                transition,
                f"targetNodeId must be a node id (a string), got {describe(value)}",
                "targetNodeId",
            )
        elif value not in doc.node_by_id and value not in doc.pool_by_id:
            known = [item.node_id for item in doc.nodes if item.node_id] + list(doc.pool_by_id)
            yield _at(
                node,
                transition,
                f"transition {transition_name(transition)} targets '{value}', which is neither a "
                f"nodeId nor a poolId (known ids: {listing(known)}); fix the id or add the node",
                "targetNodeId",
            )


@rule(
    "TRN-002",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary="Every transition MUST have a condition object with a type.",
)
def condition_present(inp: RuleInput) -> Iterator[Issue]:
    """condition is an object with a string type."""
    for node, transition in source_transitions(inp):
        raw = transition.raw
        if "condition" not in raw:
            yield _at(
                node,
                transition,
                f"transition {transition_name(transition)} has no condition; add one, e.g. "
                '{"type": "always"}',
                "condition",
            )
            continue
        condition = transition.condition
        if condition is None:
            yield _at(
                node,
                transition,
                f"condition must be an object with a type, got {describe(raw.get('condition'))}",
                "condition",
            )
        elif "type" not in condition:
            yield _at(
                node,
                transition,
                f"condition of transition {transition_name(transition)} has no type; add one of "
                f"{_TYPES}",
                "condition",
                "type",
            )
        elif not isinstance(condition.get("type"), str):
            yield _at(
                node,
                transition,
                f"condition.type must be a string, one of {_TYPES}, got "
                f"{describe(condition.get('type'))}",
                "condition",
                "type",
            )


@rule(
    "TRN-003",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary=(
        "condition.type MUST be one of always, evidence_satisfied, turn_count_reached, "
        "time_elapsed, candidate_command, policy_escalation."
    ),
)
def condition_type_known(inp: RuleInput) -> Iterator[Issue]:
    """The condition type is known (evidence_sufficient is an accepted deprecated alias)."""
    for node, transition in source_transitions(inp):
        written = transition.condition_type
        if written is None or written in _VALID_TYPES or written == EVIDENCE_SUFFICIENT_ALIAS:
            continue
        yield _at(
            node,
            transition,
            f"condition.type must be one of {_TYPES}, got {written!r}",
            "condition",
            "type",
        )


@rule(
    "TRN-004",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary="evidence_satisfied conditions MUST specify targetIds as an array of target ids.",
)
def evidence_condition_lists_targets(inp: RuleInput) -> Iterator[Issue]:
    """evidence_satisfied has a targetIds array of strings."""
    for node, transition in source_transitions(inp):
        if transition.condition_type != _EVIDENCE_SATISFIED:
            continue
        condition = transition.condition or {}
        value = condition.get("targetIds")
        if "targetIds" not in condition:
            yield _at(
                node,
                transition,
                "evidence_satisfied needs targetIds, the evidence targets of this node that must "
                f"be satisfied (this node has: {listing(sorted(node.target_ids)) or 'none'})",
                "condition",
                "targetIds",
            )
        elif not isinstance(value, list):
            yield _at(
                node,
                transition,
                f"targetIds must be an array of evidence target ids, got {describe(value)}",
                "condition",
                "targetIds",
            )
        else:
            for position, item in enumerate(value):
                if not isinstance(item, str):
                    yield _at(
                        node,
                        transition,
                        f"targetIds[{position}] must be an evidence target id (a string), got "
                        f"{describe(item)}",
                        "condition",
                        "targetIds",
                        position,
                    )


@rule(
    "TRN-005",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary=(
        "evidence_sufficient conditions MAY specify requiredEvidence; every id listed MUST "
        "exist on the source node."
    ),
)
def required_evidence_exists(inp: RuleInput) -> Iterator[Issue]:
    """requiredEvidence of the deprecated evidence_sufficient spelling resolves on the node."""
    for node, transition in source_transitions(inp):
        if transition.condition_type != EVIDENCE_SUFFICIENT_ALIAS:
            continue
        condition = transition.condition or {}
        value = condition.get("requiredEvidence")
        if value is None:
            continue
        if not isinstance(value, list):
            yield _at(
                node,
                transition,
                f"requiredEvidence must be an array of evidence target ids, got {describe(value)}",
                "condition",
                "requiredEvidence",
            )
            continue
        for position, item in enumerate(value):
            if isinstance(item, str) and item in node.target_ids:
                continue
            yield _at(
                node,
                transition,
                f"requiredEvidence lists {describe(item)}, which is not an evidence target of "
                f"node {node.name} (its targets: {listing(sorted(node.target_ids)) or 'none'})",
                "condition",
                "requiredEvidence",
                position,
            )


@rule(
    "TRN-006",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary="A node MUST NOT have multiple always transitions.",
)
def single_always(inp: RuleInput) -> Iterator[Issue]:
    """At most one always transition per node; later ones are reported."""
    first: dict[int, TransitionView] = {}
    for node, transition in source_transitions(inp):
        if transition.condition_type != _ALWAYS:
            continue
        if node.index in first:
            yield _at(
                node,
                transition,
                f"node {node.name} already has an always transition "
                f"({transition_name(first[node.index])}); only the first could ever be taken, so "
                "remove this one or give it an explicit condition",
                "condition",
            )
        else:
            first[node.index] = transition


@rule(
    "TRN-007",
    phase=Phase.TRANSITION,
    severity=Severity.WARNING,
    summary=(
        "Transitions SHOULD NOT form cycles without an escape (a time_elapsed or "
        "turn_count_reached exit, or a forced exit that leaves the cycle)."
    ),
)
def cycles_have_escape(inp: RuleInput) -> Iterator[Issue]:
    """Every cycle has a bounded way out."""
    doc = inp.doc
    graph = exam_graph(doc)
    for component in graph.cycles:
        if _has_escape(inp, component):
            continue
        members = [doc.nodes[index] for index in sorted(component)]
        first = members[0]
        yield first.issue(
            f"nodes {', '.join(node.name for node in members[:6])}"
            f"{' and more' if len(members) > 6 else ''} form a cycle with no escape: no "
            "time_elapsed or turn_count_reached transition and no forced exit (always, else "
            "first transition) leaves it, so a session could loop until the exam times out; add "
            "such an exit",
            "transitions",
        )


def _has_escape(inp: RuleInput, component: frozenset[int]) -> bool:
    doc = inp.doc
    graph = exam_graph(doc)
    for index in component:
        node = doc.nodes[index]
        forced = graph.forced_exit(node)
        if forced is not None and any(t not in component for t in graph.targets_of(forced)):
            return True
        for transition in node.transitions:
            if transition.effective_type in ESCAPE_CONDITIONS and any(
                target not in component for target in graph.targets_of(transition)
            ):
                return True
    return False


ConditionSignature = tuple[object, tuple[tuple[str, str], ...]]


def condition_signature(condition: Mapping[str, object]) -> ConditionSignature:
    """Type and parameters of a condition, normalised for comparison (TRN-010).

    The deprecated alias is read as evidence_satisfied, and target id lists are compared as
    sets (their order does not change the meaning).
    """
    kind = condition.get("type")
    parameters = {key: value for key, value in condition.items() if key != "type"}
    if kind == EVIDENCE_SUFFICIENT_ALIAS:
        kind = _EVIDENCE_SATISFIED
        parameters = {"targetIds": parameters.pop("requiredEvidence", None) or [], **parameters}
    targets = parameters.get("targetIds")
    if isinstance(targets, list):
        parameters["targetIds"] = sorted({repr(item) for item in targets})
    return (
        kind if isinstance(kind, str) else repr(kind),
        tuple(sorted((str(key), repr(value)) for key, value in parameters.items())),
    )


def describe_condition(condition: Mapping[str, object]) -> str:
    """The condition as compact JSON, for messages."""
    return json.dumps(condition, sort_keys=True, default=repr)


@rule(
    "TRN-010",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary=("Transition conditions on the same node MUST NOT have identical type and parameters."),
)
def conditions_distinct(inp: RuleInput) -> Iterator[Issue]:
    """No two conditions of a node are the same (duplicate always is TRN-006)."""
    seen: dict[tuple[int, ConditionSignature], TransitionView] = {}
    for node, transition in source_transitions(inp):
        condition = transition.condition
        if condition is None or transition.condition_type in (None, _ALWAYS):
            continue
        signature = condition_signature(condition)
        key = (node.index, signature)
        if key in seen:
            yield _at(
                node,
                transition,
                f"transition {transition_name(transition)} has the same condition as "
                f"{transition_name(seen[key])} ({describe_condition(condition)}); the first one "
                "always wins, so change or remove this one",
                "condition",
            )
        else:
            seen[key] = transition


@rule(
    "TRN-011",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary="Conditions MUST NOT reference evidence targets that do not exist on the source node.",
    stages=PUBLISH_AND_RUNTIME,
)
def condition_targets_exist(inp: RuleInput) -> Iterator[Issue]:
    """evidence_satisfied targetIds name targets of the source node."""
    for node, transition in source_transitions(inp):
        if transition.condition_type != _EVIDENCE_SATISFIED:
            continue
        targets = as_list((transition.condition or {}).get("targetIds"))
        for position, item in enumerate(targets or []):
            if isinstance(item, str) and item not in node.target_ids:
                yield _at(
                    node,
                    transition,
                    f"targetIds lists '{item}', which is not an evidence target of node "
                    f"{node.name} (its targets: {listing(sorted(node.target_ids)) or 'none'}); "
                    "conditions can only test the node's own targets",
                    "condition",
                    "targetIds",
                    position,
                )


def _parameter_problem(kind: str, value: object) -> str | None:
    """Why a condition parameter value is invalid, or None."""
    if kind == _TURN_COUNT_REACHED:
        count = as_int(value)
        if count is None or count < 1:
            return f"count must be a whole number of turns >= 1, got {describe(value)}"
    elif kind == _TIME_ELAPSED:
        seconds = as_number(value)
        if seconds is None or seconds <= 0:
            return f"seconds must be a positive number of seconds, got {describe(value)}"
    elif kind == _CANDIDATE_COMMAND:
        if not is_one_of(value, _COMMANDS):
            return (
                f"command must be a candidate command ({', '.join(sorted(_COMMANDS))}), got "
                f"{describe(value)}"
            )
    elif kind == _POLICY_ESCALATION and not is_one_of(value, _ESCALATIONS):
        return f"escalation must be one of {', '.join(sorted(_ESCALATIONS))}, got {describe(value)}"
    return None


@rule(
    "TRN-101",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary=(
        "Each condition type MUST carry exactly its parameters: turn_count_reached.count, "
        "time_elapsed.seconds, candidate_command.command, policy_escalation.escalation."
    ),
)
def condition_parameters_valid(inp: RuleInput) -> Iterator[Issue]:
    """Parameters are present, valid, and no other parameter is given."""
    for node, transition in source_transitions(inp):
        written = transition.condition_type
        if written is None or written not in _VALID_TYPES:
            continue
        condition = transition.condition or {}
        # A StrEnum member hashes and compares as its value: no ConditionType(written) needed.
        expected = CONDITION_PARAMETERS[cast(ConditionType, written)]
        for name in expected:
            if name == "targetIds":
                continue  # TRN-004
            if name not in condition:
                yield _at(
                    node,
                    transition,
                    f"a {written} condition needs '{name}'; add it",
                    "condition",
                    name,
                )
                continue
            problem = _parameter_problem(written, condition[name])
            if problem is not None:
                yield _at(node, transition, problem, "condition", name)
        for name in condition:
            if name != "type" and name not in expected:
                takes = ", ".join(expected) if expected else "no parameters"
                yield _at(
                    node,
                    transition,
                    f"a {written} condition takes {takes}; remove '{name}'",
                    "condition",
                    name,
                )


@rule(
    "TRN-102",
    phase=Phase.TRANSITION,
    severity=Severity.ERROR,
    summary="Every transition MUST have an id, unique within the package.",
)
def transition_ids_unique(inp: RuleInput) -> Iterator[Issue]:
    """Transition ids exist, are well-formed, and are unique (events reference them)."""
    seen: dict[str, str] = {}
    for node, transition in source_transitions(inp):
        value = transition.raw.get("id")
        if "id" not in transition.raw:
            yield _at(
                node,
                transition,
                f"transitions[{transition.index}] of node {node.name} has no id; add a unique id "
                'such as "e-<from>-<to>" (transition_decision events record it)',
                "id",
            )
        elif not isinstance(value, str) or IDENTIFIER_RE.fullmatch(value) is None:
            yield _at(
                node,
                transition,
                f"transition id must be 1-128 characters from a-z, A-Z, 0-9, '_' and '-', got "
                f"{describe(value)}",
                "id",
            )
        elif value in seen:
            yield _at(
                node,
                transition,
                f"transition id '{value}' is already used in node {seen[value]}; transition ids "
                "must be unique in the package",
                "id",
            )
        else:
            seen[value] = node.name
