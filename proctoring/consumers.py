"""The sitting overview socket: ``ws/proctor/sittings/<sitting_id>/`` (docs/proctoring.md).

Who: a signed-in proctor, author or admin who may see the sitting
(``Sitting.objects.visible_to``); everyone else — candidates, anonymous users, proctors of
other sittings — is refused at the handshake (403), without saying why. The Origin is checked
exactly (scheme, host, port) by ``config.ws_origin`` (config/asgi.py).

What: the consumer joins the sitting's group (roster changes, ``sessions.scheduling``) and the
proctor audience group of every session of the sitting (``sessions.broadcast``), then sends::

    {"kind": "snapshot", "rows": [<row>...], "alerts": [<alert>...], "totalRows": n,
     "totalAlerts": m, "asOf": iso}
    {"kind": "rows", ...} and {"kind": "alerts", "alerts": [...]} pages of the rest of the
                                                   snapshot (no frame over 256 KiB of rows)
    {"kind": "rows", "rows": [<row>...]}          rows that changed (at most every 25 ms)
    {"kind": "alert", "alert": <alert>}            at once, as it happens; a repeat of an alert
                                                   already sent has the same id, a higher
                                                   "count" and the latest "at" (issue #31)
    {"kind": "error", "code": "...", "message": "..."}

Rows and alerts are ``proctoring.overview``'s. Each session's view is folded from the store at
connect and then from the live stream; like the session socket, a message whose range starts
beyond what a view has folded first reads the missing range from the store, and a periodic
refresh (every :data:`REFRESH_SECONDS`) re-reads the roster, the journey facts, the bots'
leases and any events the live stream did not bring (publishing is best effort; the store is
authoritative; a gap still there at the next refresh is read from the store). The only client
frame is ``{"kind": "ping"}``, answered with
``{"kind": "pong", "asOf"}``.

The candidate's connection (``proctoring.presence``) is read with the roster and updated by the
``session.presence`` messages of ``proctoring.presence_tracking``; a candidate offline too long
during a running exam raises a ``disconnected`` alert, at the moment it is due (a timer per
session), and when they come back (or the exam ends)::

    {"kind": "alert_cleared", "id": "...", "sessionId": "..."}
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Final

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.utils import timezone

from accounts.models import Requester
from ioa.events import Audience
from ioa.projections import session_view
from proctoring import overview, presence
from proctoring.presence_tracking import PresenceMessage
from sessions.broadcast import EventsBatch, EventsMessage, event_seq, group_name
from sessions.models import ExamSession, Sitting
from sessions.scheduling import sitting_group
from sessions.selectors import events_after
from web.ws_input import BoundedJsonConsumerMixin

FLUSH_SECONDS: Final = 0.025
"""Changed rows are gathered this long before they are sent (alerts go at once)."""
REFRESH_SECONDS: Final = 5.0


SNAPSHOT_PAGE_BYTES: Final = 256 * 1024
"""The most JSON of rows (or alerts) one snapshot frame carries (daphne refuses 1 MiB)."""


def pages[T](items: Sequence[T], budget: int = SNAPSHOT_PAGE_BYTES) -> list[list[T]]:
    """``items`` cut into consecutive pages of at most ``budget`` bytes of JSON (a single larger
    item gets a page of its own); always at least one (possibly empty) page."""
    out: list[list[T]] = [[]]
    size = 0
    for item in items:
        length = len(json.dumps(item, separators=(",", ":"))) + 1
        if out[-1] and size + length > budget:
            out.append([])
            size = 0
        out[-1].append(item)
        size += length
    return out


def _visible_sitting(user: Requester, sitting_id: uuid.UUID) -> Sitting | None:
    if getattr(user, "role", None) == "candidate":
        return None
    return Sitting.objects.visible_to(user).filter(pk=sitting_id).first()


def _roster(sitting_id: uuid.UUID) -> list[ExamSession]:
    return list(
        ExamSession.objects.filter(sitting_id=sitting_id)
        .select_related("candidate")
        .order_by("created_at")
    )


def _missing(session_id: str, after: int, until: int | None) -> Sequence[Mapping[str, object]]:
    return events_after(
        session_id=session_id, after_seq=after, until_seq=until, audience=Audience.PROCTOR
    )


class SittingOverviewConsumer(BoundedJsonConsumerMixin, AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """Streams a sitting's overview rows and alerts (module docstring)."""

    sitting_id: uuid.UUID
    sessions: dict[str, ExamSession]
    views: dict[str, session_view.SessionView]
    health: dict[str, overview.BotHealth]
    _joined: set[str]
    _dirty: set[str]
    _flush: asyncio.Task[None] | None = None
    _refresh: asyncio.Task[None] | None = None
    presences: dict[str, presence.Presence]
    _offline: presence.DisconnectAlerts
    _checks: dict[str, asyncio.Task[None]]
    _told: dict[str, int]
    """Presence messages received per session (a roster read older than one is not applied)."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close()
            return
        sitting = await database_sync_to_async(_visible_sitting)(
            user, self.scope["url_route"]["kwargs"]["sitting_id"]
        )
        if sitting is None:
            await self.close()
            return
        self.sitting_id = sitting.pk
        self.sessions, self.views, self.health = {}, {}, {}
        self._joined, self._dirty = set(), set()
        self._sent: dict[str, tuple[tuple[str, str], ...]] = {}
        self._urls: dict[str, str] = {}
        self._behind: dict[str, int] = {}
        self.presences, self._checks, self._told = {}, {}, {}
        self._offline = presence.DisconnectAlerts(presence.alert_ms())
        self._lock = asyncio.Lock()
        await self.channel_layer.group_add(sitting_group(self.sitting_id), self.channel_name)
        await self.accept()
        await self._load_roster(send=False)
        now = session_view.epoch_ms(timezone.now())
        rows = [self._row(sid, now) for sid in self.sessions]
        for row in rows:
            self._changed(row, now)
        alerts = sorted(
            [*(a for v in self.views.values() for a in v.alerts), *self._offline.active.values()],
            key=lambda a: str(a["at"]),
            reverse=True,
        )
        await self._send_snapshot(rows, alerts)
        self._refresh = asyncio.create_task(self._refresher())

    async def _send_snapshot(
        self, rows: list[overview.OverviewRow], alerts: list[presence.Alert]
    ) -> None:
        """The snapshot, paged so no frame nears daphne's 1 MiB limit: the first page of rows
        and alerts in the ``snapshot`` frame (with ``totalRows``/``totalAlerts``), the rest as
        ``rows`` and ``alerts`` frames, each at most :data:`SNAPSHOT_PAGE_BYTES` of JSON."""
        row_pages, alert_pages = pages(rows), pages(alerts)
        await self.send_json(
            {
                "kind": "snapshot",
                "rows": row_pages[0],
                "alerts": alert_pages[0],
                "totalRows": len(rows),
                "totalAlerts": len(alerts),
                "asOf": session_view.iso(session_view.epoch_ms(timezone.now())),
            }
        )
        for row_page in row_pages[1:]:
            await self.send_json({"kind": "rows", "rows": row_page})
        for alert_page in alert_pages[1:]:
            await self.send_json({"kind": "alerts", "alerts": alert_page})

    async def disconnect(self, code: int) -> None:
        for task in (self._refresh, self._flush, *getattr(self, "_checks", {}).values()):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if not hasattr(self, "sitting_id"):
            return
        await self.channel_layer.group_discard(sitting_group(self.sitting_id), self.channel_name)
        for session_id in getattr(self, "_joined", ()):
            await self.channel_layer.group_discard(
                group_name(session_id, Audience.PROCTOR), self.channel_name
            )

    async def receive_json(self, content: object, **kwargs: object) -> None:
        if isinstance(content, dict) and content.get("kind") == "ping":
            await self.send_json(
                {"kind": "pong", "asOf": session_view.iso(session_view.epoch_ms(timezone.now()))}
            )
            return
        await self.send_json({"kind": "error", "code": "unsupported", "message": "ping only"})

    # --- the roster --------------------------------------------------------------------------

    async def _load_roster(self, *, send: bool) -> None:
        """(Re)read the roster, the journey facts and the bots' leases, join new sessions'
        groups and fold them, and repair any view the live stream left behind. The database
        is read outside the lock, so live events are not held up by a refresh."""
        roster = await database_sync_to_async(_roster)(self.sitting_id)
        health = await database_sync_to_async(overview.bot_health)([s.pk for s in roster])
        told = dict(self._told)
        present = await sync_to_async(presence.presence_for, thread_sensitive=False)(
            [s.pk for s in roster]
        )
        new = [s for s in roster if str(s.pk) not in self._joined]
        for session in new:  # join before reading, so nothing falls between them
            await self.channel_layer.group_add(
                group_name(session.pk, Audience.PROCTOR), self.channel_name
            )
            self._joined.add(str(session.pk))
        folded = await database_sync_to_async(overview.sitting_views)(new) if new else {}
        async with self._lock:
            for key, view in folded.items():
                self.views.setdefault(key, view)
            for session in roster:
                key = str(session.pk)
                before = self.sessions.get(key)
                self.sessions[key] = session
                self._urls.setdefault(key, overview.session_url(session.pk))
                if before is None or overview.facts(before) != overview.facts(session):
                    self._dirty.add(key)
                if health.get(key) != self.health.get(key):
                    self._dirty.add(key)
                if self._told.get(key) != told.get(key):  # a message came during the read
                    present[key] = self.presences.get(key, present[key])
                if present.get(key) != self.presences.get(key):
                    self._dirty.add(key)
                await self._repair(key, session)
            self.health = health
            self.presences = present
            now = session_view.epoch_ms(timezone.now())
            for session in roster:
                await self._check_offline(str(session.pk), now, send=send)
            if send:
                self._schedule_flush()
            else:
                self._dirty.clear()

    async def _repair(self, key: str, session: ExamSession) -> None:
        """Read from the store what the live stream has not brought since the last refresh
        (publishing is best effort; a gap younger than one refresh is left to it)."""
        view = self.views[key]
        behind = self._behind.pop(key, None)
        if session.last_seq <= view.last_seq:
            return
        if behind is None or view.last_seq >= behind:
            self._behind[key] = session.last_seq  # give the live stream one refresh
            return
        events = await database_sync_to_async(_missing)(key, view.last_seq, session.last_seq)
        await self._fold(view, events)
        view.touch(session.last_seq, session_view.epoch_ms(session.updated_at))
        self._dirty.add(key)

    async def _refresher(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            await self._load_roster(send=True)

    async def sitting_changed(self, message: Mapping[str, object]) -> None:
        """The roster changed (``sessions.scheduling.notify_sitting_changed``)."""
        await self._load_roster(send=True)

    # --- the live stream ---------------------------------------------------------------------

    async def session_events_batch(self, message: EventsBatch) -> None:
        """The background sender's batch for this channel (``sessions.broadcast``): its
        ``session.events`` messages, handled in order."""
        for item in message["messages"]:
            await self.session_events(item)

    async def session_events(self, message: EventsMessage) -> None:
        """A ``sessions.broadcast`` message for one of the sitting's sessions: every proctor
        event with ``after < seq <= through`` (live-only events, without a seq, are skipped)."""
        after, through, events = message["after"], message["through"], message["events"]
        if through is None or not events:
            return
        key = str(events[0]["sessionId"])
        async with self._lock:
            view = self.views.get(key)
            if view is None or through <= view.last_seq:
                return
            state = view.exam_state
            if after is not None and after > view.last_seq:  # a range this message misses
                missing = await database_sync_to_async(_missing)(key, view.last_seq, after)
                await self._fold(view, missing)
            await self._fold(view, [e for e in events if event_seq(e) > view.last_seq])
            view.last_seq = max(view.last_seq, through)
            if view.exam_state != state and not self.health.get(key, overview.BotHealth()).live:
                # the exam moved on, so a bot runs it now: read its lease at once
                found = await database_sync_to_async(overview.bot_health)([key])
                self.health[key] = found.get(key, overview.BotHealth())
            await self._check_offline(key, session_view.epoch_ms(timezone.now()), send=True)
            self._dirty.add(key)
            self._schedule_flush()

    async def _fold(
        self, view: session_view.SessionView, events: Sequence[Mapping[str, object]]
    ) -> None:
        """Fold ``events``; send each alert they raised or updated once, as it stands after
        them (a repeat is the same alert id with a higher ``count``: the client updates it in
        place)."""
        for alert in session_view.fold(view, events):
            await self.send_json({"kind": "alert", "alert": alert})

    # --- the candidate's connection ----------------------------------------------------------

    async def session_presence(self, message: PresenceMessage) -> None:
        """The candidate's connection changed (``proctoring.presence_tracking``)."""
        key = str(message["sessionId"])
        async with self._lock:
            if key not in self.sessions:
                return
            self.presences[key] = presence.Presence.from_wire(message["presence"])
            self._told[key] = self._told.get(key, 0) + 1
            await self._check_offline(key, session_view.epoch_ms(timezone.now()), send=True)
            self._dirty.add(key)
            self._schedule_flush()

    async def _check_offline(self, key: str, now: int, *, send: bool) -> None:
        """Raise or clear the session's disconnection alert; look again when one falls due.
        Callers hold ``_lock`` (or run before the socket is live)."""
        view = self.views.get(key)
        if view is None:
            return
        found = self.presences.get(key, presence.Presence())
        raised, cleared, check_at = self._offline.update(key, view.exam_state, found, now)
        if send and cleared is not None:
            await self.send_json({"kind": "alert_cleared", "id": cleared["id"], "sessionId": key})
        if send and raised is not None:
            await self.send_json({"kind": "alert", "alert": raised})
        pending = self._checks.pop(key, None)
        if pending is not None and pending is not asyncio.current_task():
            pending.cancel()
        if check_at is not None:
            delay = max(0.0, (check_at - now) / 1000) + 0.01
            self._checks[key] = asyncio.create_task(self._check_later(key, delay))

    async def _check_later(self, key: str, delay: float) -> None:
        """When a disconnection alert falls due: the row turns "disconnected", the alert goes
        out."""
        await asyncio.sleep(delay)
        async with self._lock:
            if self._checks.get(key) is asyncio.current_task():
                del self._checks[key]
            await self._check_offline(key, session_view.epoch_ms(timezone.now()), send=True)
            self._dirty.add(key)
            self._schedule_flush()

    # --- sending -----------------------------------------------------------------------------

    def _row(self, key: str, now: int) -> overview.OverviewRow:
        return overview.row(
            self.sessions[key],
            self.views[key],
            self.health.get(key, overview.BotHealth()),
            now,
            self._urls.get(key),
            presence=self.presences.get(key, presence.Presence()),
        )

    def _changed(self, row: overview.OverviewRow, now: int) -> bool:
        """Whether ``row`` differs from the last one sent for its session (the clocks
        compared by where they point, not by the moment the row was made)."""
        signature = overview.signature(row, now)
        if self._sent.get(row["sessionId"]) == signature:
            return False
        self._sent[row["sessionId"]] = signature
        return True

    def _schedule_flush(self) -> None:
        if self._flush is None or self._flush.done():
            self._flush = asyncio.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(FLUSH_SECONDS)
        async with self._lock:
            keys, self._dirty = self._dirty, set()
            now = session_view.epoch_ms(timezone.now())
            made = (self._row(k, now) for k in keys if k in self.sessions)
            rows = [r for r in made if self._changed(r, now)]
        if rows:
            await self.send_json({"kind": "rows", "rows": rows})
