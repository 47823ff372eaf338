"""The live overview of a sitting: one row per candidate, projected from the session's events
(the read side of the proctor dashboard; docs/proctoring.md).

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
guessed at and never a crash of the dashboard.

Journey facts that are not events (invited, identity confirmed) come from the session row;
the bot's health from its lease (asked of the bot: ``sessions.bot_port``); the candidate's
connection from ``proctoring.presence``. :func:`row` assembles the JSON a client gets;
:func:`sitting_views` builds every view of a sitting with two queries.
"""

from __future__ import annotations

import logging
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Final, Literal, TypedDict, overload

from django.urls import reverse
from django.utils import timezone

from ioa.events import TERMINAL_STATES
from ioa.events import payloads as p
from ioa.events.reading import on, payload_of
from ioa.schema import CandidateCommandType
from proctoring import presence as presence_
from sessions.bot_port import BotHealth as BotHealth
from sessions.bot_port import bot_health as bot_health
from sessions.models import ExamSession, SessionEvent, Sitting
from sessions.selectors import wire_from_row

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
UNSTABLE_MS: Final = 60_000
"""A bot fault this recent marks the connection unstable."""


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


class Accommodations(TypedDict):
    """A row's ``accommodations``."""

    extraTimeMultiplier: str
    textModeRequired: bool
    slowerSpeech: bool


class OverviewRow(TypedDict):
    """One session's overview row (JSON; :func:`row`)."""

    sessionId: str
    candidate: str
    email: str
    status: str
    statusLabel: str
    examState: str
    nodeId: str | None
    nodeKind: str | None
    startedAt: str | None
    endedAt: str | None
    elapsedMs: int | None
    examRemainingMs: int | None
    nodeRemainingMs: int | None
    clockRunning: bool
    asOf: str
    followUps: int
    nodeFollowUps: int
    nodeMaxFollowUps: int | None
    guardrails: int
    recoveries: int
    openRecoveries: list[str]
    botRestarts: int
    handRaised: bool
    health: str
    candidateConnection: presence_.ConnectionView
    bot: str
    lastSeq: int
    lastEventAt: str | None
    accommodations: Accommodations
    url: str


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
    _alerts: dict[str, presence_.Alert] = field(default_factory=dict)
    """Alert id → the alert, the least recently updated first."""
    _guardrail_hits: dict[str, deque[int]] = field(default_factory=dict)
    """Guardrail type → its hits' times within :data:`GUARDRAIL_WINDOW_MS`."""
    _guardrail_seen: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Guardrail type → (hits so far, the first hit's timestamp)."""

    @property
    def alerts(self) -> list[presence_.Alert]:
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

    def apply(self, event: Mapping[str, object]) -> list[presence_.Alert]:
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
    ) -> presence_.Alert:
        """Raise the ``name`` alert (:data:`ALERT_KINDS`), or update it in place when the
        session has it already (id ``<session>:<key or name>``): ``count`` (one more than
        before unless given), ``at`` = ``timestamp`` (the latest), ``firstAt`` kept. The alert
        moves to the end (most recent); the least recently updated beyond :data:`MAX_ALERTS`
        are dropped."""
        severity, label = ALERT_KINDS[name]
        alert_id = f"{self.session_id}:{key or name}"
        before = self._alerts.pop(alert_id, None)
        item: presence_.Alert = {
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

    def _exam_state_changed(
        self, payload: p.ExamStateChanged, at: int, ts: str
    ) -> presence_.Alert | None:
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

    def _guardrail_triggered(
        self, payload: p.GuardrailTriggered, at: int, ts: str
    ) -> presence_.Alert | None:
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

    def _recovery_started(
        self, payload: p.RecoveryStarted, at: int, ts: str
    ) -> presence_.Alert | None:
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
    ) -> presence_.Alert | None:
        if payload.command == CandidateCommandType.EMERGENCY_STOP:
            return self.alert("emergency_stop", "The candidate stopped the exam", ts)
        if payload.command == CandidateCommandType.RAISE_HAND and payload.accepted:
            self.hand_raised_ms = at
            return self.alert("raise_hand", "The candidate asks for the proctor", ts)
        return None

    def _system_error(
        self, payload: p.SystemErrorPayload, at: int, ts: str
    ) -> presence_.Alert | None:
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


type _Handler = Callable[[SessionView, p.Payload, int, str], presence_.Alert | None]

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


def _health(view: SessionView, status: Status, bot: BotHealth, now_ms: int) -> str:
    """``good``, ``unstable``, ``lost`` (the exam runs and no bot is live), ``idle`` (not
    started), ``ended``."""
    if status in (Status.COMPLETED, Status.ABORTED, Status.EXPIRED):
        return "ended"
    if view.exam_state not in ("in_progress", "paused", "scaffolding", "ready"):
        return "idle"
    if not bot.live:
        return "lost"
    recent_fault = view.last_fault_ms is not None and now_ms - view.last_fault_ms < UNSTABLE_MS
    if recent_fault or "network_issue" in view.open_recoveries.values():
        return "unstable"
    return "good"


def session_url(session_id: uuid.UUID | str) -> str:
    """The proctor's page of a session."""
    return reverse("exam_sessions:proctor-session", kwargs={"session_id": session_id})


def row(
    session: ExamSession,
    view: SessionView,
    bot: BotHealth,
    now_ms: int | None = None,
    url: str | None = None,
    presence: presence_.Presence | None = None,
) -> OverviewRow:
    """The overview row of one session (JSON; the client ticks the clocks from ``asOf``).
    ``url`` saves a ``reverse`` when the caller knows the session's page already;
    ``presence`` (the candidate's connection, ``candidateConnection``) a cache read when the
    caller has read it for many sessions at once."""
    now = now_ms if now_ms is not None else epoch_ms(timezone.now())
    if presence is None:
        presence = presence_.presence_for([session.pk])[str(session.pk)]
    status = view.status(
        invited=session.invited_at is not None,
        journey_started=session.identity_confirmed_at is not None,
    )
    running = view.exam.since_ms is not None
    candidate = session.candidate
    return {
        "sessionId": view.session_id,
        "candidate": candidate.name,
        "email": candidate.email,
        "status": status.value,
        "statusLabel": (
            "Ready: waiting for your start" if view.exam_state == "ready" else STATUS_LABELS[status]
        ),
        "examState": view.exam_state,
        "nodeId": view.node_id,
        "nodeKind": view.node_kind,
        "startedAt": iso(view.started_ms),
        "endedAt": iso(view.ended_ms),
        "elapsedMs": view.exam.active(now) if view.started_ms is not None else None,
        "examRemainingMs": view.exam.remaining(now) if view.started_ms is not None else None,
        "nodeRemainingMs": view.node.remaining(now) if view.node_id is not None else None,
        "clockRunning": running,
        "asOf": iso(now),
        "followUps": view.follow_ups,
        "nodeFollowUps": view.node_follow_ups,
        "nodeMaxFollowUps": view.node_max_follow_ups,
        "guardrails": view.guardrails,
        "recoveries": len(view.recoveries),
        "openRecoveries": sorted(set(view.open_recoveries.values())),
        "botRestarts": view.bot_restarts,
        "handRaised": view.hand_raised_ms is not None,
        "health": _health(view, status, bot, now),
        "candidateConnection": presence_.row_view(presence, view.exam_state, now),
        "bot": bot.state,
        "lastSeq": view.last_seq,
        "lastEventAt": iso(view.last_event_ms),
        "accommodations": {
            "extraTimeMultiplier": str(session.extra_time_multiplier),
            "textModeRequired": session.text_mode_required,
            "slowerSpeech": session.slower_speech,
        },
        "url": url or session_url(session.pk),
    }


CLOCK_FIELDS: Final = ("elapsedMs", "examRemainingMs", "nodeRemainingMs")


def signature(row: Mapping[str, object], now_ms: int | None = None) -> tuple[tuple[str, str], ...]:
    """What identifies a row's content (an :class:`OverviewRow`): every field but ``asOf``,
    with the clocks as the instant they point at while running (so a row made a second later
    compares equal). ``now_ms`` is the row's ``asOf`` when the caller has it as a number."""
    as_of = row.get("asOf")
    now = (
        now_ms
        if now_ms is not None
        else (epoch_ms(as_of) if isinstance(as_of, str) and as_of else 0)
    )
    items = []
    for key in sorted(row):
        value = row[key]
        if key == "asOf":
            continue
        if key in CLOCK_FIELDS and isinstance(value, int) and row.get("clockRunning"):
            value = value - now if key == "elapsedMs" else value + now
            value = round(value / 1000)  # whole seconds: rows a few ms apart compare equal
        items.append((key, repr(value)))
    return tuple(items)


def facts(session: ExamSession) -> tuple[object, ...]:
    """The session row's fields an overview row shows (a change means a new row)."""
    return (
        session.invited_at,
        session.identity_confirmed_at,
        session.extra_time_multiplier,
        session.text_mode_required,
        session.slower_speech,
        session.candidate.name,
        session.candidate.email,
    )


def fold(view: SessionView, events: Iterable[Mapping[str, object]]) -> list[presence_.Alert]:
    """Apply events in order; returns every alert raised or updated, once each (its state
    after the last event), in the order they were first touched."""
    raised: dict[str, presence_.Alert] = {}
    for event in events:
        for alert in view.apply(event):
            raised[alert["id"]] = alert
    return list(raised.values())


def sitting_sessions(sitting: Sitting) -> list[ExamSession]:
    """The sitting's sessions with their candidates, in roster order (oldest first)."""
    return list(
        ExamSession.objects.filter(sitting=sitting)
        .select_related("candidate")
        .order_by("created_at")
    )


def sitting_views(sessions: list[ExamSession]) -> dict[str, SessionView]:
    """A view per session, folded from the store (two queries): the relevant events of every
    session in seq order; then each view's ``lastSeq`` and activity from the session row."""
    views = {str(s.pk): SessionView(session_id=str(s.pk)) for s in sessions}
    if not sessions:
        return views
    rows = (
        SessionEvent.objects.filter(session_id__in=[s.pk for s in sessions])
        .filter(type__in=RELEVANT_TYPES)
        .order_by("session_id", "seq")
        .values(
            "session_id",
            "seq",
            "event_id",
            "type",
            "timestamp",
            "source",
            "correlation_id",
            "payload",
            "schema_version",
        )
    )
    for item in rows.iterator(chunk_size=2000):
        views[str(item["session_id"])].apply(wire_from_row(item))
    for session in sessions:
        view = views[str(session.pk)]
        view.touch(session.last_seq, epoch_ms(session.updated_at) if session.last_seq else 0)
        if not session.last_seq:
            view.last_event_ms = None
    return views


def session_rows(
    sessions: list[ExamSession],
    *,
    views: Mapping[str, SessionView] | None = None,
    present: Mapping[str, presence_.Presence] | None = None,
) -> list[OverviewRow]:
    """Overview rows of ``sessions`` (their views folded from the log and the candidates'
    presence are read unless given)."""
    views = views if views is not None else sitting_views(sessions)
    health = bot_health(s.pk for s in sessions)
    if present is None:
        present = presence_.presence_for(s.pk for s in sessions)
    return [
        row(s, views[str(s.pk)], health.get(str(s.pk), BotHealth()), presence=present[str(s.pk)])
        for s in sessions
    ]


def sitting_snapshot(sitting: Sitting) -> tuple[list[OverviewRow], list[presence_.Alert]]:
    """The sitting's overview as the dashboard and the API show it: one row per session (exam
    state from the log, bot health, the candidate's connection) and every alert, newest first
    (the sessions' own alerts and the candidates offline for too long)."""
    sessions = sitting_sessions(sitting)
    views = sitting_views(sessions)
    present = presence_.presence_for(s.pk for s in sessions)
    rows = session_rows(sessions, views=views, present=present)
    offline = presence_.disconnect_alerts(
        {k: v.exam_state for k, v in views.items()}, present, presence_.now_ms()
    )
    alerts = sorted(
        [*(a for v in views.values() for a in v.alerts), *offline],
        key=lambda a: a["at"],
        reverse=True,
    )
    return rows, alerts
