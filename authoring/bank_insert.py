"""Taking a question out of a package and putting one into another (the question bank).

:func:`node_extract` takes a node out of a package document with what belongs to it: its
evidence targets and their rubric are inside the node; the learning outcomes its targets'
``markingCriteria`` name are the package's (``metadata.learningOutcomes``) and are carried
along; its transitions point at the source package's nodes and are left out.

:func:`node_insert` puts such a node into another document: ids that clash with the document's
are renamed, outcomes are mapped onto the document's (same text) or added, and the node is
spliced into the flow after an anchor node (docs/studio.md, "Question bank"). Both are pure:
they never touch the database.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ioa.compiler.types import JSONObject

END = "end"


class NodeNotFound(ValueError):
    """The document has no (non-end) node with that id."""


@dataclass(frozen=True)
class ExtractedNode:
    """A node without its transitions, and the learning outcomes ({id, text}) it names."""

    node: JSONObject
    learning_outcomes: list[dict[str, str]]


@dataclass
class InsertResult:
    """The new document and what happened on the way: ``node_id`` (after any rename),
    ``renamed`` ({old id: new id} for the node and its targets), ``outcomes_mapped`` ({the
    entry's outcome id: the document's id with the same text}), ``outcomes_added`` (ids added to
    ``metadata.learningOutcomes``) and ``after`` (the anchor node, or None when there was none)."""

    document: JSONObject
    node_id: str
    renamed: dict[str, str] = field(default_factory=dict)
    outcomes_mapped: dict[str, str] = field(default_factory=dict)
    outcomes_added: list[str] = field(default_factory=list)
    after: str | None = None


def _dicts(value: object) -> list[JSONObject]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _outcomes(document: JSONObject) -> list[JSONObject]:
    metadata = document.get("metadata")
    return _dicts(metadata.get("learningOutcomes")) if isinstance(metadata, dict) else []


def node_extract(document: object, node_id: str) -> ExtractedNode:
    """The node ``node_id`` of ``document`` (a deep copy, transitions removed) and the learning
    outcomes its targets' marking criteria name. Raises :class:`NodeNotFound` for a missing or
    end node (an end node is no question)."""
    if not isinstance(document, dict):
        raise NodeNotFound("the package is not a JSON object")
    nodes = _dicts(document.get("nodes"))
    found = next((n for n in nodes if n.get("nodeId") == node_id), None)
    if found is None or found.get("kind") == END:
        raise NodeNotFound(f"the package has no question node {node_id!r}")
    node = {key: copy.deepcopy(value) for key, value in found.items() if key != "transitions"}
    named = {
        criterion
        for target in _dicts(node.get("evidenceTargets"))
        for criterion in target.get("markingCriteria") or []
        if isinstance(criterion, str)
    }
    outcomes = [
        {"id": str(o["id"]), "text": str(o.get("text", ""))}
        for o in _outcomes(document)
        if o.get("id") in named
    ]
    return ExtractedNode(node=node, learning_outcomes=outcomes)


def _taken_ids(document: JSONObject) -> set[str]:
    """Every id of the document's namespaces: nodes, pools, transitions, evidence targets."""
    taken: set[str] = set()
    for node in _dicts(document.get("nodes")):
        taken.add(str(node.get("nodeId")))
        taken.update(str(t.get("id")) for t in _dicts(node.get("transitions")))
        taken.update(str(t.get("id")) for t in _dicts(node.get("evidenceTargets")))
    taken.update(str(p.get("poolId")) for p in _dicts(document.get("questionPools")))
    return taken


def _fresh(base: str, taken: set[str]) -> str:
    """``base``, or ``base-2``, ``base-3`` … the first not in ``taken`` (which it joins)."""
    candidate = base
    number = 2
    while candidate in taken:
        candidate = f"{base[:120]}-{number}"
        number += 1
    taken.add(candidate)
    return candidate


def _rename_ids(node: JSONObject, taken: set[str]) -> dict[str, str]:
    """Give the node and its targets ids the document does not use yet; the completion policy
    follows its targets' new ids. Returns {old: new} for what changed."""
    renamed: dict[str, str] = {}
    old_node_id = str(node.get("nodeId") or "question")
    node["nodeId"] = _fresh(old_node_id, taken)
    if node["nodeId"] != old_node_id:
        renamed[old_node_id] = node["nodeId"]
    targets: dict[str, str] = {}
    for target in _dicts(node.get("evidenceTargets")):
        old = str(target.get("id") or "target")
        target["id"] = _fresh(old, taken)
        if target["id"] != old:
            targets[old] = target["id"]
    policy = node.get("completionPolicy")
    if isinstance(policy, dict) and isinstance(policy.get("requiredEvidenceTargetIds"), list):
        policy["requiredEvidenceTargetIds"] = [
            targets.get(i, i) for i in policy["requiredEvidenceTargetIds"]
        ]
    return renamed | targets


def _same_text(a: object, b: object) -> bool:
    return " ".join(str(a).split()).casefold() == " ".join(str(b).split()).casefold()


def _map_outcomes(
    document: JSONObject, node: JSONObject, outcomes: list[dict[str, str]]
) -> tuple[dict[str, str], list[str]]:
    """Point the node's marking criteria at the document's outcomes: one with the same text is
    used as it is; otherwise the outcome is added (under a new id if the document uses its id
    for another outcome). Returns (mapped {old: document id}, added ids)."""
    present = _outcomes(document)
    mapping: dict[str, str] = {}
    added: list[str] = []
    taken_ids = {str(o.get("id")) for o in present}
    for outcome in outcomes:
        same = next((o for o in present if _same_text(o.get("text"), outcome["text"])), None)
        if same is not None:
            mapping[outcome["id"]] = str(same["id"])
            continue
        new_id = _fresh(outcome["id"], taken_ids)
        metadata = document.setdefault("metadata", {})
        metadata.setdefault("learningOutcomes", []).append({"id": new_id, "text": outcome["text"]})
        mapping[outcome["id"]] = new_id
        added.append(new_id)
    for target in _dicts(node.get("evidenceTargets")):
        if isinstance(target.get("markingCriteria"), list):
            target["markingCriteria"] = [mapping.get(c, c) for c in target["markingCriteria"]]
    return {old: new for old, new in mapping.items() if new not in added}, added


def default_anchor(document: JSONObject) -> str | None:
    """Where a question goes when the author names no place: after the last question or
    scenario node (in the document's order) that is in no pool, else after the initial node."""
    pooled = {
        member
        for pool in _dicts(document.get("questionPools"))
        for member in pool.get("nodeIds") or []
    }
    nodes = _dicts(document.get("nodes"))
    for node in reversed(nodes):
        if node.get("kind") in ("question", "scenario") and node.get("nodeId") not in pooled:
            return str(node["nodeId"])
    initial = document.get("initialNodeId")
    return str(initial) if any(n.get("nodeId") == initial for n in nodes) else None


def _splice(
    document: JSONObject, node: JSONObject, anchor_id: str | None, taken: set[str]
) -> str | None:
    """Insert ``node`` into the flow: on the way from the anchor to where its ``always``
    transition (else its first) leads, the anchor's transitions there now lead to ``node``
    and ``node`` leads on. With no anchor the node is the first one, leading to the first end
    node (added when the document has none). Returns the anchor used."""
    nodes = document.setdefault("nodes", [])
    anchor = next((n for n in _dicts(nodes) if n.get("nodeId") == anchor_id), None)
    new_id = node["nodeId"]
    if anchor is not None and anchor.get("kind") != END:
        transitions = _dicts(anchor.get("transitions"))
        chosen = next(
            (t for t in transitions if (t.get("condition") or {}).get("type") == "always"),
            transitions[0] if transitions else None,
        )
        onward = chosen.get("targetNodeId") if chosen else None
        for transition in transitions:
            if onward is not None and transition.get("targetNodeId") == onward:
                transition["targetNodeId"] = new_id
        if onward is None:
            anchor.setdefault("transitions", []).append(
                {
                    "id": _fresh(f"{anchor_id}-to-{new_id}", taken),
                    "targetNodeId": new_id,
                    "condition": {"type": "always"},
                }
            )
        else:
            node["transitions"] = [_always(new_id, str(onward), taken)]
        nodes.insert(nodes.index(anchor) + 1, node)
        return anchor_id
    end = next((n for n in _dicts(nodes) if n.get("kind") == END), None)
    if end is None:
        end = _end_node(_fresh(END, taken))
        nodes.append(end)
    node["transitions"] = [_always(new_id, str(end["nodeId"]), taken)]
    nodes.insert(0, node)
    if not document.get("initialNodeId"):
        document["initialNodeId"] = new_id
    return None


def _always(source: str, target: str, taken: set[str]) -> JSONObject:
    return {
        "id": _fresh(f"{source}-to-{target}", taken),
        "targetNodeId": target,
        "condition": {"type": "always"},
    }


def _end_node(node_id: str) -> JSONObject:
    return {
        "nodeId": node_id,
        "kind": END,
        "endType": "normal",
        "promptSeed": "Thank the candidate and close the examination.",
        "prompt": {"closing": "Thank you. That concludes the examination."},
        "transitions": [],
    }


def _check_shape(document: JSONObject) -> None:
    """Raise ValueError when the parts an insertion writes to are not of their JSON type."""
    metadata = document.get("metadata", {})
    parts = {
        "nodes": (document.get("nodes", []), list),
        "metadata": (metadata, dict),
        "metadata.learningOutcomes": (
            metadata.get("learningOutcomes", []) if isinstance(metadata, dict) else [],
            list,
        ),
    }
    for name, (value, kind) in parts.items():
        if not isinstance(value, kind):
            shape = "array" if kind is list else "object"
            raise ValueError(f"the package's {name} is not a JSON {shape}; fix it first")


def node_insert(
    document: JSONObject,
    extracted: ExtractedNode,
    *,
    after: str | None = None,
) -> InsertResult:
    """A copy of ``document`` with ``extracted``'s node added after node ``after`` (or
    :func:`default_anchor`'s choice when None). Raises :class:`NodeNotFound` when ``after``
    names no node of the document, ValueError when the document's nodes, metadata or
    learning outcomes are not of their JSON type."""
    _check_shape(document)
    result = copy.deepcopy(document)
    nodes = _dicts(result.get("nodes"))
    if after is not None and not any(n.get("nodeId") == after for n in nodes):
        raise NodeNotFound(f"the package has no node {after!r} to insert after")
    anchor = after if after is not None else default_anchor(result)
    node = copy.deepcopy(extracted.node)
    node.pop("transitions", None)
    taken = _taken_ids(result)
    renamed = _rename_ids(node, taken)
    mapped, added = _map_outcomes(result, node, extracted.learning_outcomes)
    used = _splice(result, node, anchor, taken)
    return InsertResult(
        document=result,
        node_id=node["nodeId"],
        renamed=renamed,
        outcomes_mapped=mapped,
        outcomes_added=added,
        after=used,
    )
