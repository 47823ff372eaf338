"""Reads for the proctor's view of one session (docs/proctoring.md): what the session page and
``/api/v1/sessions/<id>/...`` show. Staff only: callers get the session through
``proctoring.actions.session_for_proctor`` (other people's sessions answer 404), and
everything here is the proctor audience's view of the log (``ioa.events.project``).

* :func:`package_outline` — the nodes of the session's version in order, with their evidence
  targets (id, label, weight): the frame the ledger fills in. Proctor-only (never sent to a
  candidate).
* :func:`transcript` — both speakers' final turns, in order.
* :func:`ledger` — per node and evidence target, the accepted signals (latest revision of
  each ``signalId``) and whether the target is covered (a positive or self-correction signal).
* :func:`interceptions` — guardrail interceptions (with the original and replacement text when
  a text was intercepted) and recoveries (started, attempts, resolution).
* :func:`timeline` — ``sessions.selectors.session_timeline`` for the proctor audience.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Final, NotRequired, TypedDict

from ioa.events import Audience
from ioa.ledger import COVERING_KINDS
from ioa.schema import NodeKind
from ioa.schema.loader import load_package
from sessions.exam_room import _reachable_order
from sessions.models import ExamSession
from sessions.selectors import events_after, session_timeline

COVERING: Final = frozenset(k.value for k in COVERING_KINDS)
P: Final = Audience.PROCTOR


class OutlineTarget(TypedDict):
    """An evidence target of a node in :func:`package_outline`."""

    id: str
    label: str
    weight: float | None


class OutlineNode(TypedDict):
    """A node of :func:`package_outline`."""

    nodeId: str
    kind: str
    title: str
    targets: list[OutlineTarget]


class Recovery(TypedDict):
    """A recovery in :func:`interceptions` (payload values are passed on as the log has them)."""

    recoveryId: object
    attempts: int
    resolution: object
    startedAt: object
    type: NotRequired[object]
    nodeId: NotRequired[object]
    trigger: NotRequired[object]
    action: NotRequired[object]
    durationSec: NotRequired[object]


class Interceptions(TypedDict):
    """:func:`interceptions`."""

    guardrails: list[dict[str, object]]
    recoveries: list[Recovery]


def _payload(event: Mapping[str, object]) -> Mapping[str, object]:
    payload = event["payload"]
    if not isinstance(payload, Mapping):
        raise TypeError(f"an envelope's payload is an object, not {payload!r}")
    return payload


@functools.lru_cache(maxsize=64)
def _outline(checksum: str, canonical_json: str) -> tuple[OutlineNode, ...]:
    package = load_package(json.loads(canonical_json))
    nodes = {node.nodeId: node for node in package.nodes}
    outline: list[OutlineNode] = []
    for node_id in _reachable_order(package):
        node = nodes[node_id]
        if node.kind is NodeKind.END:
            continue
        outline.append(
            {
                "nodeId": node_id,
                "kind": node.kind.value,
                "title": node.title or node_id,
                "targets": [
                    {"id": t.id, "label": t.label, "weight": t.weight} for t in node.evidenceTargets
                ],
            }
        )
    return tuple(outline)


def package_outline(session: ExamSession) -> list[OutlineNode]:
    """The version's non-end nodes in visiting order with their evidence targets."""
    version = session.sitting.version
    return [n.copy() for n in _outline(version.checksum, version.canonical_json)]


def _events(session: ExamSession, types: set[str]) -> list[Mapping[str, object]]:
    return [e for e in events_after(session_id=session.pk, audience=P) if e["type"] in types]


def transcript(session: ExamSession) -> list[dict[str, object]]:
    """Both speakers' final words in order: the candidate's ``transcript_final`` turns and the
    examiner's ``examiner_utterance_final`` texts."""
    turns: list[dict[str, object]] = []
    for event in _events(session, {"transcript_final", "examiner_utterance_final"}):
        payload = _payload(event)
        examiner = event["type"] == "examiner_utterance_final"
        turns.append(
            {
                "seq": event["seq"],
                "at": event["timestamp"],
                "speaker": "examiner" if examiner else payload.get("speaker", "candidate"),
                "text": payload.get("text", ""),
                "nodeId": payload.get("nodeId"),
                "id": payload.get("utteranceId") if examiner else payload.get("turnId"),
                "purpose": payload.get("purpose") if examiner else None,
                "confidence": None if examiner else payload.get("confidence"),
            }
        )
    return turns


def ledger(session: ExamSession) -> list[dict[str, object]]:
    """The evidence ledger per node and target (module docstring)."""
    signals: dict[object, dict[str, object]] = {}
    entered: set[object] = set()
    for event in _events(session, {"evidence_signal", "node_entered"}):
        payload = _payload(event)
        if event["type"] == "node_entered":
            entered.add(payload["nodeId"])
            continue
        signals[payload["signalId"]] = {"seq": event["seq"], "at": event["timestamp"], **payload}
    out: list[dict[str, object]] = []
    for node in package_outline(session):
        targets: list[dict[str, object]] = []
        for target in node["targets"]:
            found = [
                {
                    "signalId": s["signalId"],
                    "kind": s["signalKind"],
                    "confidence": s["confidence"],
                    "excerpt": s.get("excerpt"),
                    "rubricLevel": s.get("rubricLevel"),
                    "turnIds": s.get("turnIds", []),
                    "seq": s["seq"],
                    "at": s["at"],
                }
                for s in signals.values()
                if s["nodeId"] == node["nodeId"] and _names(s.get("targetIds", []), target["id"])
            ]
            covered = any(s["kind"] in COVERING for s in found)
            targets.append({**target, "covered": covered, "signals": found})
        out.append({**node, "entered": node["nodeId"] in entered, "targets": targets})
    return out


def _names(ids: object, target_id: str) -> bool:
    """Whether a signal's ``targetIds`` (a list in the log) include ``target_id``."""
    return isinstance(ids, list | tuple) and target_id in ids


def interceptions(session: ExamSession) -> Interceptions:
    """Guardrail interceptions and recoveries (module docstring)."""
    guardrails: list[dict[str, object]] = []
    recoveries: dict[object, Recovery] = {}
    types = {"guardrail_triggered", "recovery_started", "recovery_resolved"}
    for event in _events(session, types):
        payload = _payload(event)
        if event["type"] == "guardrail_triggered":
            guardrails.append(
                {
                    "seq": event["seq"],
                    "at": event["timestamp"],
                    "type": payload.get("guardrailType"),
                    "severity": payload.get("severity"),
                    "action": payload.get("actionTaken"),
                    "description": payload.get("description"),
                    "nodeId": payload.get("contextNodeId"),
                    "originalText": payload.get("originalText"),
                    "replacementText": payload.get("replacementText"),
                }
            )
            continue
        recovery_id = payload["recoveryId"]
        item = recoveries.setdefault(
            recovery_id,
            {"recoveryId": recovery_id, "attempts": 0, "resolution": None, "startedAt": None},
        )
        if event["type"] == "recovery_started":
            item["attempts"] += 1
            item.setdefault("type", payload.get("recoveryType"))
            item["nodeId"] = payload.get("nodeId")
            item["trigger"] = payload.get("triggerDescription")
            item["action"] = payload.get("action")
            item["startedAt"] = item["startedAt"] or event["timestamp"]
        else:
            item["resolution"] = payload.get("resolution")
            item["durationSec"] = payload.get("durationSec")
    return {"guardrails": guardrails, "recoveries": list(recoveries.values())}


def timeline(session: ExamSession) -> list[dict[str, object]]:
    """The stored events grouped by ``correlationId`` (proctor view), JSON-ready."""
    return [
        {"correlationId": entry.correlation_id, "firstSeq": entry.first_seq, "events": entry.events}
        for entry in session_timeline(session_id=session.pk, audience=P)
    ]
