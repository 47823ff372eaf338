"""The live overview of a sitting: one row per candidate (the read side of the proctor
dashboard; docs/proctoring.md).

The fold of a session's events is the domain core's typed projection
(``ioa.projections.session_view.SessionView``: status, clocks, counts, alerts). This module adds
what is not in the log: journey facts from the session row (invited, identity confirmed), the
bot's health from its lease (asked of the bot: ``sessions.bot_port``) and the candidate's
connection from ``proctoring.presence``. :func:`row` assembles the JSON a client gets;
:func:`sitting_views` builds every view of a sitting with two queries.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Final, TypedDict

from django.urls import reverse
from django.utils import timezone

from ioa.projections.session_view import (
    RELEVANT_TYPES,
    STATUS_LABELS,
    SessionView,
    Status,
    epoch_ms,
    iso,
)
from proctoring import presence as presence_
from sessions.bot_port import BotHealth as BotHealth
from sessions.bot_port import bot_health as bot_health
from sessions.models import ExamSession, SessionEvent, Sitting
from sessions.selectors import wire_from_row

UNSTABLE_MS: Final = 60_000
"""A bot fault this recent marks the connection unstable."""


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
