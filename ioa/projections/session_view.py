"""One session as the proctor's overview sees it: a typed fold of the proctor-visible events
(the read side of the proctor dashboard; docs/proctoring.md). Pure: no Django, no clock of its own.

:class:`SessionView` folds a session's proctor-visible events, one at a time, into what the
dashboard shows: the status (:class:`Status`), the current node, the exam and node clocks
(active time only: pauses stop them; ``time_warning``/``extend_time`` re-anchor them, as the
runtime does), follow-ups, guardrail and recovery counts, bot restarts, the last activity,
and **alerts** (:data:`ALERT_KINDS`) that need a proctor's attention. Alerts are keyed by
(session, kind) — guardrails by (session, guardrail type) — and updated in place: a repeat is
the same alert (same ``id``) with ``count`` one higher and ``at`` the latest occurrence
(``firstAt`` the first), never a new one (issue #31). :meth:`SessionView.apply` returns the
alert an event raised or updated, so the same class serves the snapshot (folded from the store,
the same alerts whatever the order of folding calls) and the live stream
(``proctoring.consumers``).

Each folded event's payload is read as its model (``ioa.events.payloads``, through
``ioa.events.reading``) and handed to the small handler :data:`_HANDLERS` names for its type; a
payload that does not validate is skipped and logged (the event still moves ``lastSeq``), never
guessed at and never a crash of the dashboard. ``proctoring.overview`` adds what is not in the
log (the session row, the bot's health, the candidate's connection) and builds the rows.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Final, Literal, NotRequired, TypedDict, overload

from ioa.events import TERMINAL_STATES
from ioa.events import payloads as p
from ioa.events.reading import on, payload_of
from ioa.schema import CandidateCommandType


class Alert(TypedDict):
    """An overview alert (JSON): a disconnection (:func:`disconnect_alert`, with ``since``) or
    one :class:`SessionView` raises from the log."""

    id: str
    sessionId: str
    kind: str
    severity: str
    label: str
    detail: str
    at: str
    """When it happened (for an alert updated in place, the latest occurrence)."""
    count: int
    """How many times it happened (issue #31: repeats update one alert, keyed by its id)."""
    firstAt: str
    """The first occurrence."""
    since: NotRequired[str | None]


logger = logging.getLogger(__name__)

RELEVANT_TYPES: Final = (
    "bot_ready",
    "exam_state_changed",
    "node_entered",
    "follow_up_used",
    "guardrail_triggered",
    "recovery_started",
    "recovery_resolved",
    "candidate_command_received",
    "system_error",
    "time_warning",
    "proctor_action",
    "exam_completed",
)
"""Stored event types the overview folds (the others only move ``lastSeq``/``lastEventAt``)."""

TERMINAL: Final = frozenset(s.value for s in TERMINAL_STATES)
GUARDRAIL_BURST: Final = 3
"""Hits of one guardrail type within :data:`GUARDRAIL_WINDOW_MS` that raise its ``guardrails``
alert; from then on every hit of that type updates it."""
GUARDRAIL_WINDOW_MS: Final = 120_000
MAX_ALERTS: Final = 20
"""Alerts kept per session (the most recently updated)."""
DETAIL_CHARS: Final = 200
"""An alert's ``detail`` is cut to this many characters."""


class Status(StrEnum):
    """A candidate's place in the sitting, as the overview shows it."""

    SCHEDULED = "scheduled"
    """Added to the sitting, no invitation sent yet."""
    INVITED = "invited"
    WAITING = "waiting"
    """On the way in: identity, briefing, set-up, the room before the start."""
    IN_PROGRESS = "in_progress"
    PAUSED = "paused"
    RECOVERING = "recovering"
    """In progress or paused with a recovery running (silence, anxiety, network...)."""
    COMPLETED = "completed"
    ABORTED = "aborted"
    EXPIRED = "expired"


STATUS_LABELS: Final = {
    Status.SCHEDULED: "Not invited",
    Status.INVITED: "Invited",
    Status.WAITING: "Waiting",
    Status.IN_PROGRESS: "In progress",
    Status.PAUSED: "Paused",
    Status.RECOVERING: "Recovering",
    Status.COMPLETED: "Completed",
    Status.ABORTED: "Aborted",
    Status.EXPIRED: "Expired",
}

ALERT_KINDS: Final = {
    "emergency_stop": ("urgent", "Emergency stop pressed"),
    "distress": ("urgent", "Candidate in distress"),
    "raise_hand": ("attention", "Hand raised"),
    "guardrails": ("warning", "Repeated guardrail hits"),
    "silence": ("warning", "Long silence"),
    "away": ("urgent", "Candidate left the exam"),
    "bot_restart": ("warning", "Examiner bot restarted"),
}
"""Alert kind → (severity, label). Severities: ``urgent``, ``warning``, ``attention``."""


def epoch_ms(timestamp: str | datetime) -> int:
    """Milliseconds since the epoch of an ISO 8601 timestamp (or an aware datetime)."""
    moment = timestamp if isinstance(timestamp, datetime) else datetime.fromisoformat(timestamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


@overload
def iso(ms: int) -> str: ...
@overload
def iso(ms: int | None) -> str | None: ...
def iso(ms: int | None) -> str | None:
    """An epoch-ms instant as ISO 8601 UTC with milliseconds (``None`` stays ``None``)."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


@dataclass
class Clock:
    """A budget and the active time spent against it (paused time does not count)."""

    budget_ms: int | None = None
    active_ms: int = 0
    since_ms: int | None = None

    def active(self, at: int) -> int:
        return self.active_ms + (max(0, at - self.since_ms) if self.since_ms is not None else 0)

    def run(self, at: int) -> None:
        if self.since_ms is None:
            self.since_ms = at

    def stop(self, at: int) -> None:
        if self.since_ms is not None:
            self.active_ms += max(0, at - self.since_ms)
            self.since_ms = None

    def remaining(self, at: int) -> int | None:
        return None if self.budget_ms is None else self.budget_ms - self.active(at)

    def reanchor(self, at: int, remaining_ms: int) -> None:
        """After this, ``remaining_ms`` is left (an extension or a time warning)."""
        self.budget_ms = self.active(at) + remaining_ms


@dataclass
class SessionView:
    """One session as the overview sees it (module docstring)."""

    session_id: str
    exam_state: str = "scheduled"
    node_id: str | None = None
    node_kind: str | None = None
    node_follow_ups: int = 0
    node_max_follow_ups: int | None = None
    started_ms: int | None = None
    ended_ms: int | None = None
    exam: Clock = field(default_factory=Clock)
    node: Clock = field(default_factory=Clock)
    follow_ups: int = 0
    guardrails: int = 0
    recoveries: set[str] = field(default_factory=set)
    open_recoveries: dict[str, str] = field(default_factory=dict)
    bot_restarts: int = 0
    last_fault_ms: int | None = None
    hand_raised_ms: int | None = None
    last_seq: int = 0
    last_event_ms: int | None = None
    _alerts: dict[str, Alert] = field(default_factory=dict)
    """Alert id → the alert, the least recently updated first."""
    _guardrail_hits: dict[str, deque[int]] = field(default_factory=dict)
    """Guardrail type → its hits' times within :data:`GUARDRAIL_WINDOW_MS`."""
    _guardrail_seen: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Guardrail type → (hits so far, the first hit's timestamp)."""

    @property
    def alerts(self) -> list[Alert]:
        """The session's alerts, one per (kind) or (guardrail type), least recently updated
        first (at most :data:`MAX_ALERTS`)."""
        return list(self._alerts.values())

    # --- folding ------------------------------------------------------------------------------

    def touch(self, seq: int | None, at: int) -> None:
        """Any stored event: the log moved (``lastSeq``, last activity)."""
        if seq is not None and seq > self.last_seq:
            self.last_seq = seq
        if self.last_event_ms is None or at > self.last_event_ms:
            self.last_event_ms = at

    def apply(self, event: Mapping[str, object]) -> list[Alert]:
        """Fold one wire envelope (proctor view); returns the alert it raised or updated (none
        or one: the new state of that alert, a fresh dict the view does not change later)."""
        timestamp = event["timestamp"]
        if not isinstance(timestamp, str):
            raise TypeError(f"an envelope's timestamp is a string, not {timestamp!r}")
        at = epoch_ms(timestamp)
        seq = event.get("seq")
        self.touch(seq if isinstance(seq, int) else None, at)
        found = _HANDLERS.get(str(event.get("type")))
        if found is None:
            return []
        model, handle = found
        payload = payload_of(model, event)
        if payload is None:
            logger.warning(
                "overview: skipped a %s event whose payload does not validate (session %s, seq %s)",
                model.__name__,
                self.session_id,
                seq,
            )
            return []
        raised = handle(self, payload, at, timestamp)
        return [raised] if raised is not None else []

    def alert(
        self,
        name: str,
        detail: str,
        timestamp: str,
        *,
        key: str | None = None,
        count: int | None = None,
        first_at: str | None = None,
    ) -> Alert:
        """Raise the ``name`` alert (:data:`ALERT_KINDS`), or update it in place when the
        session has it already (id ``<session>:<key or name>``): ``count`` (one more than
        before unless given), ``at`` = ``timestamp`` (the latest), ``firstAt`` kept. The alert
        moves to the end (most recent); the least recently updated beyond :data:`MAX_ALERTS`
        are dropped."""
        severity, label = ALERT_KINDS[name]
        alert_id = f"{self.session_id}:{key or name}"
        before = self._alerts.pop(alert_id, None)
        item: Alert = {
            "id": alert_id,
            "sessionId": self.session_id,
            "kind": name,
            "severity": severity,
            "label": label,
            "detail": detail[:DETAIL_CHARS],
            "at": timestamp,
            "count": count if count is not None else (before["count"] + 1 if before else 1),
            "firstAt": first_at or (before["firstAt"] if before else timestamp),
        }
        self._alerts[alert_id] = item
        while len(self._alerts) > MAX_ALERTS:
            del self._alerts[next(iter(self._alerts))]
        return item

    # One handler per event type, over its typed payload (:data:`_HANDLERS`):
    # (view, payload, at ms, timestamp) -> the alert raised, if any.

    def _bot_ready(self, payload: p.BotReady, at: int, ts: str) -> None:
        if payload.estimatedDurationSec:
            self.exam.budget_ms = round(float(payload.estimatedDurationSec) * 1000)

    def _exam_state_changed(self, payload: p.ExamStateChanged, at: int, ts: str) -> Alert | None:
        self._state(payload.toState.value, at)
        if payload.reason == "candidate_disconnected":
            detail = "The candidate's connection was lost: the exam paused itself"
            return self.alert("away", detail, ts)
        return None

    def _node_entered(self, payload: p.NodeEntered, at: int, ts: str) -> None:
        self.node_id = payload.nodeId
        self.node_kind = payload.nodeKind.value
        self.node_follow_ups = 0
        self.node_max_follow_ups = payload.maxFollowUps
        self.node = Clock(budget_ms=payload.timeBudgetMs or None)
        if self.exam.since_ms is not None:
            self.node.run(at)
        self.hand_raised_ms = None

    def _follow_up_used(self, payload: p.FollowUpUsed, at: int, ts: str) -> None:
        self.follow_ups += 1
        self.node_follow_ups = payload.followUpIndex

    def _guardrail_triggered(self, payload: p.GuardrailTriggered, at: int, ts: str) -> Alert | None:
        """Counted; the type's alert is raised at its :data:`GUARDRAIL_BURST`-th hit within
        :data:`GUARDRAIL_WINDOW_MS`, then updated by every later hit of that type, with the
        count of all its hits in the session."""
        self.guardrails += 1
        kind = payload.guardrailType
        count, first = self._guardrail_seen.get(kind, (0, ts))
        self._guardrail_seen[kind] = (count + 1, first)
        hits = self._guardrail_hits.setdefault(kind, deque())
        hits.append(at)
        while hits and at - hits[0] > GUARDRAIL_WINDOW_MS:
            hits.popleft()
        key = f"guardrails:{kind}"
        if len(hits) < GUARDRAIL_BURST and f"{self.session_id}:{key}" not in self._alerts:
            return None
        detail = f"{kind}: {payload.description}".rstrip(": ")
        return self.alert("guardrails", detail, ts, key=key, count=count + 1, first_at=first)

    def _recovery_started(self, payload: p.RecoveryStarted, at: int, ts: str) -> Alert | None:
        """A recovery's first attempt may alert (distress, anxiety, silence: one alert each
        kind, counted); later attempts of the same recovery do not."""
        recovery_id, kind_of = payload.recoveryId, payload.recoveryType
        first = recovery_id not in self.recoveries
        self.recoveries.add(recovery_id)
        self.open_recoveries[recovery_id] = kind_of
        if not first:
            return None
        if kind_of == "candidate_distress":
            return self.alert("distress", payload.triggerDescription, ts)
        if kind_of == "anxiety":
            detail = "Signs of anxiety: the examiner is supporting the candidate"
            return self.alert("distress", detail, ts)
        if kind_of == "silence":
            return self.alert("silence", "The candidate has been silent", ts)
        return None

    def _recovery_resolved(self, payload: p.RecoveryResolved, at: int, ts: str) -> None:
        self.open_recoveries.pop(payload.recoveryId, None)

    def _candidate_command_received(
        self, payload: p.CandidateCommandReceived, at: int, ts: str
    ) -> Alert | None:
        if payload.command == CandidateCommandType.EMERGENCY_STOP:
            return self.alert("emergency_stop", "The candidate stopped the exam", ts)
        if payload.command == CandidateCommandType.RAISE_HAND and payload.accepted:
            self.hand_raised_ms = at
            return self.alert("raise_hand", "The candidate asks for the proctor", ts)
        return None

    def _system_error(self, payload: p.SystemErrorPayload, at: int, ts: str) -> Alert | None:
        if payload.code == "bot_fault":
            self.bot_restarts += 1
            self.last_fault_ms = at
            return self.alert("bot_restart", payload.message, ts)
        if payload.code.endswith("_fault"):
            self.last_fault_ms = at
        return None

    def _time_warning(self, payload: p.TimeWarning, at: int, ts: str) -> None:
        self._reanchor(payload.scope, payload.remainingMs, at)

    def _proctor_action(self, payload: p.ProctorActionTaken, at: int, ts: str) -> None:
        """An action that records a scope and the time left (an extension) re-anchors."""
        if payload.scope is not None and payload.remainingMs is not None:
            self._reanchor(payload.scope, payload.remainingMs, at)

    def _exam_completed(self, payload: p.ExamCompleted, at: int, ts: str) -> None:
        self._stop(at)
        self.ended_ms = at
        self.open_recoveries.clear()

    def _reanchor(self, scope: Literal["exam", "node"], remaining_ms: int, at: int) -> None:
        """The clock of ``scope`` re-anchored: ``remaining_ms`` is left at ``at``."""
        (self.exam if scope == "exam" else self.node).reanchor(at, remaining_ms)

    def _state(self, to_state: str, at: int) -> None:
        self.exam_state = to_state
        if to_state == "in_progress":
            if self.started_ms is None:
                self.started_ms = at
            self.exam.run(at)
            if self.node_id is not None:
                self.node.run(at)
        else:
            self._stop(at)
            if to_state in TERMINAL:
                self.ended_ms = self.ended_ms or at
                self.open_recoveries.clear()

    def _stop(self, at: int) -> None:
        self.exam.stop(at)
        self.node.stop(at)

    # --- reading ------------------------------------------------------------------------------

    def status(self, *, invited: bool, journey_started: bool) -> Status:
        state = self.exam_state
        if state in TERMINAL:
            return Status(state)
        if state in ("in_progress", "paused"):
            if self.open_recoveries:
                return Status.RECOVERING
            return Status.IN_PROGRESS if state == "in_progress" else Status.PAUSED
        if state in ("scaffolding", "ready") or journey_started:
            return Status.WAITING
        return Status.INVITED if invited else Status.SCHEDULED


type _Handler = Callable[[SessionView, p.Payload, int, str], Alert | None]

_HANDLERS: Final[Mapping[str, tuple[type[p.Payload], _Handler]]] = dict(
    (
        on(p.BotReady, SessionView._bot_ready),
        on(p.ExamStateChanged, SessionView._exam_state_changed),
        on(p.NodeEntered, SessionView._node_entered),
        on(p.FollowUpUsed, SessionView._follow_up_used),
        on(p.GuardrailTriggered, SessionView._guardrail_triggered),
        on(p.RecoveryStarted, SessionView._recovery_started),
        on(p.RecoveryResolved, SessionView._recovery_resolved),
        on(p.CandidateCommandReceived, SessionView._candidate_command_received),
        on(p.SystemErrorPayload, SessionView._system_error),
        on(p.TimeWarning, SessionView._time_warning),
        on(p.ProctorActionTaken, SessionView._proctor_action),
        on(p.ExamCompleted, SessionView._exam_completed),
    )
)
"""Event type → its payload model and :class:`SessionView` handler (the types of
:data:`RELEVANT_TYPES`; ``ioa.events.reading``)."""


def fold(view: SessionView, events: Iterable[Mapping[str, object]]) -> list[Alert]:
    """Apply events in order; returns every alert raised or updated, once each (its state
    after the last event), in the order they were first touched."""
    raised: dict[str, Alert] = {}
    for event in events:
        for alert in view.apply(event):
            raised[alert["id"]] = alert
    return list(raised.values())
