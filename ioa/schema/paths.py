"""Paths into a package document, written the way validation reports write them.

A path is a tuple of segments: object keys (``str``) and array indexes (``int``). It is
rendered as ``nodes[q-dijkstra].followUpPolicy.maxFollowUps``:

* an entry of the top-level ``nodes`` array is addressed by its ``nodeId`` when that id is
  usable (matches the id pattern, is unique in the package and is not all digits, so it cannot
  be mistaken for an index), otherwise by its index: ``nodes[3]``;
* other array entries are addressed by index: ``evidenceTargets[0]``;
* keys that are not plain identifiers are quoted: ``extensions["my key"]``;
* the document itself is ``$``; paths into the compiled flow (adapter output) start with
  ``$compiled``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Final

from ioa.schema.enums import EVIDENCE_SUFFICIENT_ALIAS, ConditionType
from ioa.schema.fields import IDENTIFIER_RE

JsonPath = tuple[str | int, ...]
"""A location in a document: keys and indexes from the root."""

ROOT: Final[JsonPath] = ()

_PLAIN_KEY: Final = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_]*")
_CONDITION_TAGS: Final = frozenset(member.value for member in ConditionType)


def usable_node_labels(document: object) -> dict[int, str]:
    """Map each index of ``document["nodes"]`` whose nodeId is usable to that nodeId."""
    if not isinstance(document, Mapping):
        return {}
    nodes = document.get("nodes")
    if not isinstance(nodes, list):
        return {}
    counts: dict[str, int] = {}
    ids: dict[int, str] = {}
    for index, node in enumerate(nodes):
        if not isinstance(node, Mapping):
            continue
        node_id = node.get("nodeId")
        if isinstance(node_id, str):
            ids[index] = node_id
            counts[node_id] = counts.get(node_id, 0) + 1
    return {
        index: node_id
        for index, node_id in ids.items()
        if counts[node_id] == 1 and IDENTIFIER_RE.fullmatch(node_id) and not node_id.isdigit()
    }


def render_path(path: Sequence[str | int], node_labels: Mapping[int, str]) -> str:
    """Render ``path`` in report style (see the module docstring)."""
    if not path:
        return "$"
    parts: list[str] = []
    for position, segment in enumerate(path):
        if isinstance(segment, int):
            if position == 1 and path[0] == "nodes":
                parts.append(f"[{node_labels.get(segment, str(segment))}]")
            else:
                parts.append(f"[{segment}]")
        elif _PLAIN_KEY.fullmatch(segment):
            parts.append(segment if position == 0 else f".{segment}")
        else:
            parts.append(f"[{json.dumps(segment, ensure_ascii=False)}]")
    return "".join(parts)


def path_from_schema_location(location: Sequence[object], document: object) -> JsonPath:
    """Turn a pydantic error location into a document path.

    Pydantic adds labels that are not part of the document (the tag of a discriminated
    union, ``[key]`` for dictionary keys); they are dropped. The deprecated
    ``evidence_sufficient`` condition is validated after conversion, so its ``targetIds`` is
    reported as the ``requiredEvidence`` the author wrote.
    """
    path: list[str | int] = []
    current: object = document
    last = len(location) - 1
    for position, element in enumerate(location):
        if element == "[key]":
            continue
        if isinstance(current, Mapping):
            if element in current:
                path.append(element if isinstance(element, str) else str(element))
                current = current[element]
                continue
            if element in _CONDITION_TAGS and position < last:
                continue  # the tag of the condition union
            if element == "targetIds" and current.get("type") == EVIDENCE_SUFFICIENT_ALIAS:
                path.append("requiredEvidence")
                current = None
                continue
            path.append(element if isinstance(element, str) else str(element))
            current = None
            continue
        if isinstance(element, int) and not isinstance(element, bool):
            path.append(element)
            current = (
                current[element]
                if isinstance(current, list) and 0 <= element < len(current)
                else None
            )
            continue
        if isinstance(element, str):
            if element in _CONDITION_TAGS and position < last:
                continue
            path.append(element)
            current = None
            continue
        path.append(str(element))
        current = None
    return tuple(path)
