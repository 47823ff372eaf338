"""The difference between two package documents by meaning, not by text.

:func:`semantic_diff` compares the parts an author thinks in: the metadata fields, the nodes
(by ``nodeId``), each node's evidence targets (by ``id``) and transitions (by ``id``), and the
question pools (by ``poolId``). Each :class:`Change` says what was added, removed or changed,
and for a change which fields differ. Works on any two JSON documents (missing or malformed
parts count as empty); pure and deterministic, in document order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["metadata", "node", "target", "transition", "pool", "package"]
ChangeType = Literal["added", "removed", "changed"]


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: ``kind`` ``key`` was ``change``d (``fields`` lists what differs)."""

    kind: Kind
    key: str
    change: ChangeType
    fields: tuple[str, ...] = ()
    node_id: str | None = None
    """The node a target or a transition belongs to."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "change": self.change,
            "fields": list(self.fields),
            "nodeId": self.node_id,
        }


def _items(value: Any, key: str) -> dict[str, Mapping[str, Any]]:
    """The objects of a list, by their ``key`` field (in order; unkeyed items skipped)."""
    if not isinstance(value, list):
        return {}
    return {
        str(item[key]): item
        for item in value
        if isinstance(item, Mapping) and isinstance(item.get(key), str)
    }


def _differing(
    old: Mapping[str, Any], new: Mapping[str, Any], skip: Iterable[str] = ()
) -> tuple[str, ...]:
    ignored = set(skip)
    keys = [k for k in old if k not in ignored] + [
        k for k in new if k not in old and k not in ignored
    ]
    return tuple(k for k in keys if old.get(k) != new.get(k))


def _keyed(
    kind: Kind,
    old: dict[str, Mapping[str, Any]],
    new: dict[str, Mapping[str, Any]],
    *,
    node_id: str | None = None,
    skip: Iterable[str] = (),
) -> list[Change]:
    changes = [Change(kind, key, "removed", node_id=node_id) for key in old if key not in new]
    for key, item in new.items():
        if key not in old:
            changes.append(Change(kind, key, "added", node_id=node_id))
        else:
            fields = _differing(old[key], item, skip)
            if fields:
                changes.append(Change(kind, key, "changed", fields, node_id=node_id))
    return changes


def _node_parts(old: Mapping[str, Any], new: Mapping[str, Any], node_id: str) -> list[Change]:
    return _keyed(
        "target",
        _items(old.get("evidenceTargets"), "id"),
        _items(new.get("evidenceTargets"), "id"),
        node_id=node_id,
    ) + _keyed(
        "transition",
        _items(old.get("transitions"), "id"),
        _items(new.get("transitions"), "id"),
        node_id=node_id,
    )


def semantic_diff(old: Any, new: Any) -> list[Change]:
    """Every difference by meaning from ``old`` to ``new`` (module docstring)."""
    old = old if isinstance(old, Mapping) else {}
    new = new if isinstance(new, Mapping) else {}
    changes: list[Change] = []
    top = _differing(old, new, skip=("metadata", "nodes", "questionPools"))
    if top:
        changes.append(Change("package", "package", "changed", top))
    old_meta, new_meta = old.get("metadata"), new.get("metadata")
    if isinstance(old_meta, Mapping) and isinstance(new_meta, Mapping):
        fields = _differing(old_meta, new_meta)
        if fields:
            changes.append(Change("metadata", "metadata", "changed", fields))
    old_nodes, new_nodes = _items(old.get("nodes"), "nodeId"), _items(new.get("nodes"), "nodeId")
    changes += _keyed("node", old_nodes, new_nodes, skip=("evidenceTargets", "transitions"))
    for node_id, node in new_nodes.items():
        changes += (
            _node_parts(old_nodes.get(node_id, {}), node, node_id) if node_id in old_nodes else []
        )
    changes += _keyed(
        "pool",
        _items(old.get("questionPools"), "poolId"),
        _items(new.get("questionPools"), "poolId"),
    )
    return changes
