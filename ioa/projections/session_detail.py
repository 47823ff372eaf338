"""The proctor's session page as typed folds of the proctor's view of a log (no database; the
reads are ``proctoring.session_detail``; docs/proctoring.md).

* :func:`transcript_of` — both speakers' final turns, in order.
* :func:`ledger_of` — per node and evidence target of a package outline, the accepted signals
  (latest revision of each ``signalId``) and whether the target is covered (a positive or
  self-correction signal, ``ioa.ledger.COVERING_KINDS``).
* :func:`interceptions_of` — guardrail interceptions (with the original and replacement text
  when a text was intercepted) and recoveries (started, attempts, resolution).

Each payload is read as its model (``ioa.events.payloads``, through ``ioa.events.reading``); a
payload that does not validate is skipped and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Final, NotRequired, TypedDict

from ioa.events import payloads as p
from ioa.events.payloads import Payload
from ioa.events.reading import on, payload_of, type_name
from ioa.ledger import COVERING_KINDS

COVERING: Final = frozenset(k.value for k in COVERING_KINDS)
TURN: Final = type_name(p.TranscriptFinal)
UTTERANCE: Final = type_name(p.ExaminerUtteranceFinal)
SIGNAL: Final = type_name(p.EvidenceSignal)
ENTERED: Final = type_name(p.NodeEntered)

logger = logging.getLogger(__name__)


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
    """A recovery in :func:`interceptions` (values as the typed payloads have them)."""

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


def _read[M: Payload](model: type[M], event: Mapping[str, object]) -> M | None:
    """The event's payload as ``model``; ``None`` (logged: the caller skips the event) when it
    does not validate."""
    payload = payload_of(model, event)
    if payload is None:
        logger.warning(
            "session detail: skipped a %s event whose payload does not validate (seq %s)",
            model.__name__,
            event.get("seq"),
        )
    return payload


def transcript_of(events: Iterable[Mapping[str, object]]) -> list[dict[str, object]]:
    """The transcript of the proctor's view of a log (other types and unreadable payloads
    are skipped)."""
    turns: list[dict[str, object]] = []
    for event in events:
        if event["type"] == UTTERANCE:
            said = _read(p.ExaminerUtteranceFinal, event)
            if said is not None:
                turn_id, purpose = said.utteranceId, said.purpose
                turns.append(_turn(event, "examiner", said.text, said.nodeId, turn_id, purpose))
        elif event["type"] == TURN:
            turn = _read(p.TranscriptFinal, event)
            if turn is not None:
                said_as = turn.speaker, turn.text, turn.nodeId, turn.turnId
                turns.append(_turn(event, *said_as, confidence=turn.confidence))
    return turns


def _turn(
    event: Mapping[str, object],
    speaker: str,
    text: str,
    node_id: str,
    turn_id: str,
    purpose: str | None = None,
    confidence: float | None = None,
) -> dict[str, object]:
    return {
        "seq": event["seq"],
        "at": event["timestamp"],
        "speaker": speaker,
        "text": text,
        "nodeId": node_id,
        "id": turn_id,
        "purpose": purpose,
        "confidence": confidence,
    }


def ledger_of(
    events: Iterable[Mapping[str, object]], outline: list[OutlineNode]
) -> list[dict[str, object]]:
    """The ledger of the proctor's view of a log over the package's ``outline``."""
    signals: dict[str, tuple[object, object, p.EvidenceSignal]] = {}
    entered: set[str] = set()
    for event in events:
        if event["type"] == ENTERED:
            visit = _read(p.NodeEntered, event)
            if visit is not None:
                entered.add(visit.nodeId)
        elif event["type"] == SIGNAL:
            signal = _read(p.EvidenceSignal, event)
            if signal is not None:  # the latest revision of a signal counts
                signals[signal.signalId] = (event["seq"], event["timestamp"], signal)
    out: list[dict[str, object]] = []
    for node in outline:
        targets: list[dict[str, object]] = []
        for target in node["targets"]:
            found = [
                _signal_row(seq, at, s)
                for seq, at, s in signals.values()
                if s.nodeId == node["nodeId"] and target["id"] in s.targetIds
            ]
            covered = any(s["kind"] in COVERING for s in found)
            targets.append({**target, "covered": covered, "signals": found})
        out.append({**node, "entered": node["nodeId"] in entered, "targets": targets})
    return out


def _signal_row(seq: object, at: object, signal: p.EvidenceSignal) -> dict[str, object]:
    return {
        "signalId": signal.signalId,
        "kind": signal.signalKind.value,
        "confidence": signal.confidence,
        "excerpt": signal.excerpt,
        "rubricLevel": signal.rubricLevel,
        "turnIds": list(signal.turnIds),
        "seq": seq,
        "at": at,
    }


def interceptions_of(events: Iterable[Mapping[str, object]]) -> Interceptions:
    """The interceptions of the proctor's view of a log."""
    found: Interceptions = {"guardrails": [], "recoveries": []}
    recoveries: dict[str, Recovery] = {}
    for event in events:
        entry = INTERCEPTING.get(str(event["type"]))
        if entry is None:
            continue
        model, handle = entry
        payload = _read(model, event)
        if payload is not None:
            handle(found, payload, event, recoveries)
    found["recoveries"] = list(recoveries.values())
    return found


def _guardrail(
    found: Interceptions,
    g: p.GuardrailTriggered,
    event: Mapping[str, object],
    recoveries: dict[str, Recovery],
) -> None:
    found["guardrails"].append(
        {
            "seq": event["seq"],
            "at": event["timestamp"],
            "type": g.guardrailType,
            "severity": g.severity,
            "action": g.actionTaken,
            "description": g.description,
            "nodeId": g.contextNodeId,
            "originalText": g.originalText,
            "replacementText": g.replacementText,
        }
    )


def _recovery(recoveries: dict[str, Recovery], recovery_id: str) -> Recovery:
    return recoveries.setdefault(
        recovery_id,
        {"recoveryId": recovery_id, "attempts": 0, "resolution": None, "startedAt": None},
    )


def _recovery_started(
    found: Interceptions,
    r: p.RecoveryStarted,
    event: Mapping[str, object],
    recoveries: dict[str, Recovery],
) -> None:
    item = _recovery(recoveries, r.recoveryId)
    item["attempts"] += 1
    item.setdefault("type", r.recoveryType)
    item["nodeId"] = r.nodeId
    item["trigger"] = r.triggerDescription
    item["action"] = r.action.value if r.action is not None else None
    item["startedAt"] = item["startedAt"] or event["timestamp"]


def _recovery_resolved(
    found: Interceptions,
    r: p.RecoveryResolved,
    event: Mapping[str, object],
    recoveries: dict[str, Recovery],
) -> None:
    item = _recovery(recoveries, r.recoveryId)
    item["resolution"] = r.resolution
    item["durationSec"] = r.durationSec


type _Intercepting = Callable[
    [Interceptions, Payload, Mapping[str, object], dict[str, Recovery]], None
]

INTERCEPTING: Final[Mapping[str, tuple[type[Payload], _Intercepting]]] = dict(
    (
        on(p.GuardrailTriggered, _guardrail),
        on(p.RecoveryStarted, _recovery_started),
        on(p.RecoveryResolved, _recovery_resolved),
    )
)
"""The types :func:`interceptions_of` reads: event type → payload model and handler."""
