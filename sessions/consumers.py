"""The live event socket: ``ws/sessions/<session_id>/events/?after_seq=N``.

Authentication is the HTTP session (``AuthMiddlewareStack``); the Origin is checked at the
handshake (``AllowedHostsOriginValidator``, config/asgi.py). The handshake is refused (403)
for anonymous users and for sessions the user may not see (``ExamSession.objects.visible_to``:
a candidate only their own, a proctor the sittings they proctor...), without saying which.

Server → client frames (JSON text)::

    {"kind": "event", "event": <envelope projected for the audience>}
    {"kind": "caught_up", "lastSeq": N, "audience": "candidate" | "proctor"}
    {"kind": "error", "code": "...", "message": "..."}
    {"kind": "ack", "id": "<input id>", "duplicate": bool}   (a candidate input was stored)

On connect the client first receives every stored event after ``after_seq`` that its audience
may see (in seq order), then ``caught_up``, then the live stream: no gap and no duplicate. The
consumer tracks the last seq it has accounted for; live messages cover a range
``(after, through]`` (``sessions.broadcast``): events at or below the tracked seq are dropped,
and a message whose range starts beyond it first triggers a read of the missing range from the
store. Live-only events (``transcript_delta``) carry no seq. Heartbeats are ``heartbeat``
events (``payload.lastSeq``, ``payload.intervalSec``) sent every ``VIVA_WS_HEARTBEAT_SECONDS``
(default 15) and in answer to a client ``{"kind": "ping"}``. Shortly after joining
(:data:`JOIN_RECHECK_SECONDS`) and before each periodic heartbeat, the consumer reads the
session's head and sends anything the live stream did not bring (publishing after commit is
best effort, the store is authoritative).

Presence (``sessions.presence_port``; the tracking is ``proctoring``'s): a candidate's socket is
counted in the session's presence once it is live, kept counted at each heartbeat and counted out
when it closes. A proctor's socket gets ``{"kind": "presence", "presence": {...}}`` after
``caught_up`` and whenever the candidate's connection changes.

Client → server frames: ``ping``; a candidate's ``candidate_ready``, ``answer``, ``correction``
and ``command``
(stored in the durable inbox, acknowledged, then forwarded to the bot: ``sessions.inbox``); and
``{"kind": "composing", "active": bool}``, the exam room's throttled typing signal, forwarded to
the bot as ``candidate_activity`` and never stored (a signal, not an input: issue 15).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Mapping
from urllib.parse import parse_qs

from asgiref.sync import sync_to_async
from asgiref.typing import WebSocketScope
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError

from ioa.events import Audience, EventFactory, EventSource
from ioa.events.payloads import Heartbeat
from sessions.bot_channel import send_to_bot
from sessions.broadcast import (
    COALESCE_SECONDS,
    MEMBERSHIP_TTL,
    EventsBatch,
    EventsMessage,
    event_seq,
    group_name,
)
from sessions.layer_pool import waiting_for_pool
from sessions.models import ExamSession
from sessions.presence_port import SocketPresence, presence_tracker
from sessions.previews import preview_session
from sessions.selectors import audience_for, events_after, session_for_user
from sessions.windows import may_start
from web.unavailable import is_outage
from web.ws_input import BoundedJsonConsumerMixin

JOIN_RECHECK_SECONDS = MEMBERSHIP_TTL + COALESCE_SECONDS + 0.25
"""When a new connection re-reads the head once: after any publisher's "group is empty"
answer from before it joined has expired."""


TRY_AGAIN_LATER = 4013
"""The close code after an ``unavailable`` error frame: 1013's meaning ("try again later") in
the application range, since the server (daphne, through autobahn) refuses an application's
close code outside 1000 and 3000-4999; 1013 raised inside the consumer and reached the client
as 1011 with a traceback in the log."""

CANDIDATE_FRAMES = ("candidate_ready", "answer", "correction", "command")
"""Frames a candidate's client may send besides ``ping``; forwarded to the session's bot."""
COMPOSING_FRAME = "composing"
"""``{"kind": "composing", "active": bool}``: the candidate is typing (or stopped); forwarded
to the bot as ``candidate_activity``, never stored (issue 15)."""
COMPOSING_MIN_SECONDS = 2.0
"""A repeated "still typing" is forwarded at most this often per socket."""


def _after_seq(scope: WebSocketScope) -> int | None:
    """``after_seq`` from the query string (default 0); ``None`` if malformed."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    raw = query.get("after_seq", ["0"])[-1]
    if not raw.isdigit() or len(raw) > 18:
        return None
    return int(raw)


def _head(session_id: uuid.UUID) -> int:
    return int(ExamSession.objects.filter(pk=session_id).values_list("last_seq", flat=True)[0])


class SessionEventsConsumer(BoundedJsonConsumerMixin, AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """Streams one session's events to one authorised client (module docstring)."""

    session_id: uuid.UUID
    audience: Audience
    group: str | None = None
    last_seq: int = 0
    _heartbeat: asyncio.Task[None] | None = None
    _presence: SocketPresence | None = None
    _composing_state: bool = False
    _composing_at: float = 0.0

    @property
    def heartbeat_seconds(self) -> float:
        return float(getattr(settings, "VIVA_WS_HEARTBEAT_SECONDS", 15))

    async def connect(self) -> None:
        user = self.scope.get("user")
        after_seq = _after_seq(self.scope)
        if user is None or not user.is_authenticated or after_seq is None:
            await self.close()
            return
        session_id = self.scope["url_route"]["kwargs"]["session_id"]
        session = await database_sync_to_async(session_for_user)(user=user, session_id=session_id)
        # An author in their own preview (``sessions.previews``) is its candidate here.
        preview = None
        if session is None:
            preview = await database_sync_to_async(preview_session)(
                user=user, session_id=session_id
            )
        if session is None and preview is None:
            await self.close()
            return
        session = session or preview
        assert session is not None
        self.session_id = session.pk
        self.audience = Audience.CANDIDATE if preview is not None else audience_for(user)
        self.group = group_name(self.session_id, self.audience)
        self._make = EventFactory(session_id=str(self.session_id), source=EventSource.SYSTEM)
        self._lock = asyncio.Lock()
        # Join the live stream before reading the backlog, so nothing falls between them.
        try:
            group, channel = self.group, self.channel_name
            await waiting_for_pool(lambda: self.channel_layer.group_add(group, channel))
        except Exception as exc:  # the channel layer (Redis) is down: say so, never a 500
            if not is_outage(exc):
                raise
            self.group = None
            await self.accept()
            await self._error("unavailable", "The live service is briefly unavailable.")
            await self.close(code=TRY_AGAIN_LATER)  # the page reconnects by itself
            return
        await self.accept()
        head = await database_sync_to_async(_head)(self.session_id)
        if after_seq > head:
            await self._error("after_seq", f"after_seq {after_seq} is beyond the log ({head})")
            await self.close(code=4400)
            return
        self.last_seq = after_seq
        await self._catch_up(until=head)
        # The join ends with presence (the candidate counted in, a proctor's snapshot sent), and
        # only then ``caught_up``: a client told it is live has nothing of its join left pending.
        await self._join_presence()
        await self.send_json(
            {"kind": "caught_up", "lastSeq": self.last_seq, "audience": self.audience.value}
        )
        self._heartbeat = asyncio.create_task(self._beat())

    async def _join_presence(self) -> None:
        """Count a candidate's socket in (recording a reconnection), or send a proctor the
        session's presence now; nothing without a presence tracker."""
        tracker = presence_tracker()
        if tracker is None:
            return
        if self.audience is Audience.CANDIDATE:
            self._presence = tracker.socket(self.session_id, self.channel_name, self.channel_layer)
            await self._presence.opened()
        else:
            view = await sync_to_async(tracker.view, thread_sensitive=False)(self.session_id)
            await self.send_json({"kind": "presence", "presence": view})

    async def disconnect(self, code: int) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
        if self._presence is not None:
            await self._presence.closed(code)
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: object, **kwargs: object) -> None:
        if isinstance(content, dict) and content.get("kind") == "ping":
            await self._send_heartbeat()
            return
        if (
            isinstance(content, dict)
            and self.audience is Audience.CANDIDATE
            and content.get("kind") == COMPOSING_FRAME
        ):
            await self._composing(content.get("active") is True)
            return
        if (
            isinstance(content, dict)
            and self.audience is Audience.CANDIDATE
            and content.get("kind") in CANDIDATE_FRAMES
        ):
            await self._to_bot(content)
            return
        frames = ", ".join((*CANDIDATE_FRAMES, COMPOSING_FRAME))
        await self._error("unsupported", f"client frames: ping, {frames}")

    async def _composing(self, active: bool) -> None:
        """The candidate's typing signal (``bot.activity``): a signal, not an input, so not
        stored; a change goes to the bot at once, a repeated "still typing" at most every
        :data:`COMPOSING_MIN_SECONDS`."""
        now = time.monotonic()
        if active == self._composing_state and now - self._composing_at < COMPOSING_MIN_SECONDS:
            return
        self._composing_state, self._composing_at = active, now
        await send_to_bot(
            self.session_id, "candidate_activity", activity="composing", active=active
        )

    async def _to_bot(self, content: Mapping[str, object]) -> None:
        """Store a candidate frame in the durable inbox, acknowledge it, then forward it to the
        session's bot (``sessions.inbox``). Not stored: an error frame and no ack, so the
        client sends it again."""
        from sessions.inbox import InvalidInput, receive_frame

        if content["kind"] == "candidate_ready" and not await database_sync_to_async(_may_start)(
            self.session_id
        ):
            await self._error(
                "window_closed", "The exam cannot start now: it is outside its start window."
            )
            return
        try:
            receipt = await receive_frame(self.session_id, content)
        except InvalidInput as exc:
            await self._error("invalid", str(exc))
            return
        except DatabaseError:
            await self._error("unavailable", "Not stored yet: it will be sent again.")
            return
        await self.send_json(
            {"kind": "ack", "id": receipt.input_id, "duplicate": not receipt.created}
        )

    async def session_events_batch(self, message: EventsBatch) -> None:
        """The background sender's batch for this channel (``sessions.broadcast``): its
        ``session.events`` messages, handled in order."""
        for item in message["messages"]:
            await self.session_events(item)

    async def session_events(self, message: EventsMessage) -> None:
        """A message from ``sessions.broadcast``: every event this audience may see with
        ``after < seq <= through`` (or live-only events when both are ``None``)."""
        after, through, events = message["after"], message["through"], message["events"]
        if through is None:  # live-only: no seq, no ordering to keep
            for event in events:
                await self.send_json({"kind": "event", "event": event})
            return
        async with self._lock:
            if through <= self.last_seq:
                return  # already delivered from the backlog or a repaired gap
            if after is not None and after > self.last_seq:
                await self._catch_up(until=after)  # a range this message does not cover
            for event in events:
                if event_seq(event) > self.last_seq:
                    await self.send_json({"kind": "event", "event": event})
            self.last_seq = through

    async def session_presence(self, message: Mapping[str, object]) -> None:
        """The candidate's connection changed (``sessions.presence_port``; proctor group only):
        a ``presence`` frame."""
        tracker = presence_tracker()
        if self.audience is Audience.CANDIDATE or tracker is None:
            return
        await self.send_json({"kind": "presence", "presence": tracker.view_of(message)})

    async def _catch_up(self, *, until: int) -> None:
        """Send stored events in ``(last_seq, until]`` this audience may see; all of them are
        committed, because ``until`` is a committed head or precedes a published seq. Callers
        hold ``_lock`` once the connection is live."""
        if until <= self.last_seq:
            return
        events = await database_sync_to_async(events_after)(
            session_id=self.session_id,
            after_seq=self.last_seq,
            until_seq=until,
            audience=self.audience,
        )
        for event in events:
            await self.send_json({"kind": "event", "event": event})
        self.last_seq = until

    async def _send_heartbeat(self) -> None:
        beat = self._make(Heartbeat(lastSeq=self.last_seq, intervalSec=self.heartbeat_seconds))
        await self.send_json({"kind": "event", "event": beat.to_wire()})

    async def _beat(self) -> None:
        """Once, shortly after joining, and then before every heartbeat: repair from the store
        anything the live stream did not bring (publishers may skip a group they believed
        empty for up to ``MEMBERSHIP_TTL`` after this client joined, and publishing is best
        effort anyway; the store is authoritative)."""
        await asyncio.sleep(JOIN_RECHECK_SECONDS)
        await self._repair()
        while True:
            await asyncio.sleep(self.heartbeat_seconds)
            if self._presence is not None:
                await self._presence.alive()
            await self._repair()
            await self._send_heartbeat()

    async def _repair(self) -> None:
        head = await database_sync_to_async(_head)(self.session_id)
        async with self._lock:
            await self._catch_up(until=head)

    async def _error(self, code: str, message: str) -> None:
        await self.send_json({"kind": "error", "code": code, "message": message})


def _may_start(session_id: uuid.UUID) -> bool:
    """Whether the session's candidate may start now (``sessions.windows``)."""
    session = ExamSession.objects.select_related("sitting").filter(pk=session_id).first()
    return session is not None and may_start(session)
