"""A tolerant, read-only view of a raw package document.

The rules read the raw JSON through this view, never through the pydantic model, so they
still run on a malformed document: a value of the wrong type reads as "absent" (``None``,
empty) and the schema phase reports the type error. Nothing here raises on bad input.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from ioa.schema.enums import (
    EVIDENCE_SUFFICIENT_ALIAS,
    QUESTION_LIKE_KINDS,
    ConditionType,
    NodeKind,
)
from ioa.schema.paths import JsonPath, render_path, usable_node_labels
from ioa.validation.findings import Issue

EMPTY: Final[Mapping[str, object]] = {}
_END: Final = NodeKind.END.value
_QUESTION_LIKE: Final = frozenset(kind.value for kind in QUESTION_LIKE_KINDS)
_EVIDENCE_SATISFIED: Final = ConditionType.EVIDENCE_SATISFIED.value


def as_mapping(value: object) -> Mapping[str, object] | None:
    """``value`` if it is a JSON object, else None."""
    return value if isinstance(value, dict) else None


def as_list(value: object) -> list[object] | None:
    """``value`` if it is a JSON array, else None."""
    return value if isinstance(value, list) else None


def as_str(value: object) -> str | None:
    """``value`` if it is a string, else None."""
    return value if isinstance(value, str) else None


def as_text(value: object) -> str | None:
    """``value`` if it is a string with a non-whitespace character, else None."""
    return value if isinstance(value, str) and value.strip() else None


def as_int(value: object) -> int | None:
    """``value`` if it is an integer (booleans excluded), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_number(value: object) -> float | None:
    """``value`` as a float if it is a finite JSON number (booleans excluded), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def is_one_of(value: object, options: Collection[str]) -> bool:
    """True if ``value`` is a string among ``options`` (safe for unhashable values)."""
    return isinstance(value, str) and value in options


def strings_in(value: object) -> list[str]:
    """The string entries of ``value`` if it is an array (other entries skipped)."""
    items = as_list(value)
    return [item for item in items if isinstance(item, str)] if items is not None else []


def describe(value: object) -> str:
    """A short description of a value for messages (``-1``, ``'abc'``, ``an object``)."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class TransitionView:
    """One entry of a node's ``transitions`` array (fields read once, at construction)."""

    __slots__ = (
        "condition",
        "condition_type",
        "effective_type",
        "index",
        "is_object",
        "raw",
        "target",
    )

    def __init__(self, index: int, value: object) -> None:
        raw = as_mapping(value)
        self.index = index
        self.is_object = raw is not None
        self.raw: Mapping[str, object] = raw if raw is not None else EMPTY
        self.target: str | None = as_str(self.raw.get("targetNodeId"))
        """``targetNodeId`` if it is a string."""
        self.condition: Mapping[str, object] | None = as_mapping(self.raw.get("condition"))
        """``condition`` if it is an object."""
        written = as_str(self.condition.get("type")) if self.condition is not None else None
        self.condition_type: str | None = written
        """``condition.type`` as written, if it is a string."""
        self.effective_type: str | None = (
            _EVIDENCE_SATISFIED if written == EVIDENCE_SUFFICIENT_ALIAS else written
        )
        """The condition type with the deprecated alias read as ``evidence_satisfied``."""


@dataclass(frozen=True, slots=True)
class TargetView:
    """One entry of a node's ``evidenceTargets`` array (fields read once, at construction)."""

    index: int
    raw: Mapping[str, object]
    is_object: bool
    target_id: str | None = field(init=False)
    """``id`` if it is a string."""
    weight: float | None = field(init=False)
    """``weight`` if it is a finite number."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "target_id", as_str(self.raw.get("id")))
        object.__setattr__(self, "weight", as_number(self.raw.get("weight")))


class NodeView:
    """One entry of the ``nodes`` array, whatever its shape (fields read once)."""

    __slots__ = (
        "evidence_targets",
        "index",
        "is_end",
        "is_object",
        "is_question_like",
        "kind",
        "node_id",
        "raw",
        "target_ids",
        "transitions",
        "value",
    )

    def __init__(self, index: int, value: object) -> None:
        raw = as_mapping(value)
        self.value = value
        """The entry as written (any JSON value)."""
        self.index = index
        self.is_object = raw is not None
        self.raw: Mapping[str, object] = raw if raw is not None else EMPTY
        self.node_id = as_str(self.raw.get("nodeId"))
        self.kind = as_str(self.raw.get("kind"))
        self.is_end: bool = self.kind == _END
        """True if ``kind`` is ``end``."""
        self.is_question_like: bool = self.kind in _QUESTION_LIKE
        """True for question and scenario nodes."""
        transitions = as_list(self.raw.get("transitions")) or []
        self.transitions = tuple(
            TransitionView(position, item) for position, item in enumerate(transitions)
        )
        targets = as_list(self.raw.get("evidenceTargets")) or []
        self.evidence_targets = tuple(
            TargetView(position, as_mapping(item) or EMPTY, isinstance(item, dict))
            for position, item in enumerate(targets)
        )
        self.target_ids = frozenset(
            target_id
            for target_id in (target.target_id for target in self.evidence_targets)
            if target_id is not None
        )

    def get(self, key: str) -> object:
        """The raw value of ``key`` (None if absent or the node is not an object)."""
        return self.raw.get(key)

    def mapping(self, key: str) -> Mapping[str, object] | None:
        """The value of ``key`` if it is an object."""
        return as_mapping(self.raw.get(key))

    def path(self, *segments: str | int) -> JsonPath:
        """A path inside this node."""
        return ("nodes", self.index, *segments)

    def issue(self, message: str, *segments: str | int) -> Issue:
        """An issue located inside this node."""
        return Issue(self.path(*segments), message, self.node_id or None)

    @property
    def name(self) -> str:
        """How messages refer to the node: its id, or its index."""
        return f"'{self.node_id}'" if self.node_id else f"nodes[{self.index}]"

    @property
    def time_budget_seconds(self) -> float | None:
        """The node's time budget in seconds from either spelling, if it is a positive number."""
        budget = self.mapping("timeBudget")
        if budget is not None:
            seconds = as_number(budget.get("maxDurationSec"))
            if seconds is not None and seconds > 0:
                return seconds
        milliseconds = as_int(self.raw.get("timeBudgetMs"))
        if milliseconds is not None and milliseconds > 0:
            return milliseconds / 1000
        return None


@dataclass(frozen=True, slots=True)
class PoolView:
    """One entry of the ``questionPools`` array."""

    index: int
    raw: Mapping[str, object]
    is_object: bool

    @property
    def pool_id(self) -> str | None:
        """``poolId`` if it is a string."""
        return as_str(self.raw.get("poolId"))

    @property
    def member_ids(self) -> list[str]:
        """The string entries of ``nodeIds``."""
        return strings_in(self.raw.get("nodeIds"))

    def path(self, *segments: str | int) -> JsonPath:
        """A path inside this pool."""
        return ("questionPools", self.index, *segments)


class PackageDocument:
    """The whole document, with lookups the rules share. Built once per validation."""

    def __init__(self, document: object) -> None:
        self.raw = document
        root = as_mapping(document)
        self.is_object = root is not None
        self.root: Mapping[str, object] = root if root is not None else EMPTY
        self.metadata: Mapping[str, object] = as_mapping(self.root.get("metadata")) or EMPTY
        self.global_policies: Mapping[str, object] = (
            as_mapping(self.root.get("globalPolicies")) or EMPTY
        )
        nodes = as_list(self.root.get("nodes"))
        self.nodes_is_list = nodes is not None
        self.nodes = tuple(NodeView(index, value) for index, value in enumerate(nodes or []))
        pools = as_list(self.root.get("questionPools")) or []
        self.pools = tuple(
            PoolView(index, as_mapping(value) or EMPTY, isinstance(value, dict))
            for index, value in enumerate(pools)
        )
        self.node_by_id: dict[str, NodeView] = {}
        for node in self.nodes:
            if node.node_id is not None:
                self.node_by_id.setdefault(node.node_id, node)
        self.pool_by_id: dict[str, PoolView] = {}
        for pool in self.pools:
            pool_id = pool.pool_id
            if pool_id is not None:
                self.pool_by_id.setdefault(pool_id, pool)
        self._labels = usable_node_labels(document)

    @property
    def initial_node_id(self) -> str | None:
        """``initialNodeId`` if it is a string."""
        return as_str(self.root.get("initialNodeId"))

    @property
    def package_id(self) -> str | None:
        """``metadata.packageId`` if it is a string."""
        return as_str(self.metadata.get("packageId"))

    @property
    def ir_version(self) -> str | None:
        """``irVersion`` if it is a string."""
        return as_str(self.root.get("irVersion"))

    @property
    def transition_count(self) -> int:
        """Entries in all nodes' ``transitions`` arrays."""
        return sum(len(node.transitions) for node in self.nodes)

    @cached_property
    def question_nodes(self) -> tuple[NodeView, ...]:
        """Question and scenario nodes."""
        return tuple(node for node in self.nodes if node.is_question_like)

    def render(self, path: JsonPath) -> str:
        """Render ``path`` in report style."""
        return render_path(path, self._labels)

    def justification(self, key: str) -> str | None:
        """``metadata.<key>`` if it is a non-blank string (the justifications some rules
        accept instead of compliance)."""
        return as_text(self.metadata.get(key))

    def command_policy(self, node: NodeView) -> Mapping[str, object] | None:
        """The node's candidate command policy: its own, else the package default."""
        own = node.mapping("candidateCommands")
        if own is not None or "candidateCommands" in node.raw:
            return own
        return as_mapping(self.global_policies.get("defaultCandidateCommands"))

    @cached_property
    def global_forbidden_actions(self) -> dict[str, str]:
        """Actions forbidden by ``globalPolicies.forbiddenActions``."""
        return {
            action: "globalPolicies.forbiddenActions"
            for action in strings_in(self.global_policies.get("forbiddenActions"))
        }

    def forbidden_actions(self, node: NodeView) -> dict[str, str]:
        """Forbidden action -> where it is declared (``node`` or ``globalPolicies``)."""
        declared = dict(self.global_forbidden_actions)
        for action in strings_in(node.get("forbiddenActions")):
            declared.setdefault(action, "the node's forbiddenActions")
        return declared

    def resolve_target(self, target: str) -> tuple[NodeView, ...]:
        """The nodes a ``targetNodeId`` leads to: the node, every member of a pool, or none.

        A node id wins over a pool id with the same value (POOL-001 reports the clash).
        """
        node = self.node_by_id.get(target)
        if node is not None:
            return (node,)
        pool = self.pool_by_id.get(target)
        if pool is None:
            return ()
        members = (self.node_by_id.get(member) for member in pool.member_ids)
        return tuple(member for member in members if member is not None)
