"""Replay: rebuild state by folding a session's stored envelopes in seq order.

:func:`fold` is the generic left fold over wire envelopes with any reducer; it refuses
out-of-order input and skips live-only events (no seq). :func:`summarise` is a ready reducer
that rebuilds a :class:`SessionSummary` (state, current node, counts); the runtime controller
rebuilds its own state with its own reducer through the same fold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ioa.events.errors import EventProtocolError
from ioa.events.types import EventType, ExamState

type Reducer[S] = Callable[[S, Mapping[str, Any]], S]
"""``reducer(state, envelope) -> state``."""


class ReplayOrderError(EventProtocolError):
    """Events were given to :func:`fold` out of seq order."""


def fold[S](events: Iterable[Mapping[str, Any]], reducer: Reducer[S], initial: S) -> S:
    """Apply ``reducer`` to every stored envelope in order, starting from ``initial``.

    Raises :class:`ReplayOrderError` if seqs do not strictly increase. Events without a seq
    (live-only types) are skipped: replay uses persisted facts only (chapter 05 §6.3).
    """
    state = initial
    last = 0
    for event in events:
        seq = event.get("seq")
        if not isinstance(seq, int):
            continue
        if seq <= last:
            raise ReplayOrderError(f"seq {seq} after {last}: replay needs events in seq order")
        last = seq
        state = reducer(state, event)
    return state


@dataclass
class SessionSummary:
    """What a session's log says, rebuilt by :func:`summarise`."""

    last_seq: int = 0
    state: ExamState = ExamState.SCHEDULED
    current_node_id: str | None = None
    nodes_entered: list[str] = field(default_factory=list)
    event_counts: dict[str, int] = field(default_factory=dict)
    follow_ups_by_node: dict[str, int] = field(default_factory=dict)
    evidence_signals: int = 0
    open_recoveries: dict[str, str] = field(default_factory=dict)
    """recoveryId → recoveryType of recoveries started and not yet resolved."""
    commands_accepted: int = 0
    commands_refused: int = 0
    guardrails_triggered: int = 0
    completed: bool = False
    completion_reason: str | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None


def summarise(summary: SessionSummary, event: Mapping[str, Any]) -> SessionSummary:
    """Reducer for :class:`SessionSummary` (mutates and returns ``summary``)."""
    kind = event["type"]
    payload: Mapping[str, Any] = event.get("payload", {})
    summary.last_seq = event["seq"]
    summary.event_counts[kind] = summary.event_counts.get(kind, 0) + 1
    summary.first_timestamp = summary.first_timestamp or event.get("timestamp")
    summary.last_timestamp = event.get("timestamp")
    if kind == EventType.NODE_ENTERED:
        summary.current_node_id = payload["nodeId"]
        summary.nodes_entered.append(payload["nodeId"])
    elif kind == EventType.NODE_EXITED:
        if summary.current_node_id == payload["nodeId"]:
            summary.current_node_id = None
    elif kind == EventType.EXAM_STATE_CHANGED:
        summary.state = ExamState(payload["toState"])
    elif kind == EventType.EVIDENCE_SIGNAL:
        summary.evidence_signals += 1
    elif kind == EventType.FOLLOW_UP_USED:
        node = payload["nodeId"]
        summary.follow_ups_by_node[node] = summary.follow_ups_by_node.get(node, 0) + 1
    elif kind == EventType.RECOVERY_STARTED:
        summary.open_recoveries[payload["recoveryId"]] = payload["recoveryType"]
    elif kind == EventType.RECOVERY_RESOLVED:
        summary.open_recoveries.pop(payload["recoveryId"], None)
    elif kind == EventType.CANDIDATE_COMMAND_RECEIVED:
        if payload["accepted"]:
            summary.commands_accepted += 1
        else:
            summary.commands_refused += 1
    elif kind == EventType.GUARDRAIL_TRIGGERED:
        summary.guardrails_triggered += 1
    elif kind == EventType.EXAM_COMPLETED:
        summary.completed = True
        summary.completion_reason = payload["reason"]
    return summary


def replay_summary(events: Iterable[Mapping[str, Any]]) -> SessionSummary:
    """Fold a session's stored envelopes into a fresh :class:`SessionSummary`."""
    return fold(events, summarise, SessionSummary())
