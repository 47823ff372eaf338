"""Presence from the candidate's sockets, told to the proctors (docs/proctoring.md).

:class:`CandidateSocket` is one candidate socket's part in its session's presence
(``proctoring.presence``), driven by ``sessions.consumers.SessionEventsConsumer`` through the port
:class:`CandidatePresence` fills (``sessions.presence_port``, registered by ``proctoring.apps``):
:meth:`~CandidateSocket.opened` once the socket is live, :meth:`~CandidateSocket.alive` at each
heartbeat, :meth:`~CandidateSocket.closed` when it closes. The cache is used from a worker thread,
the database through ``database_sync_to_async``. After a socket opens or closes:

* the session's proctor group (``sessions.broadcast.group_name(id, "proctor")``) gets
  ``{"type": "session.presence", "sessionId", "presence": Presence.to_wire()}``: the sitting
  overview sockets update the row and the alerts, the proctors' session sockets send a
  ``presence`` frame (the candidate's group never gets it);
* when the candidate's first socket opened or the last one closed while the exam runs
  (:data:`RECORDED_STATES`), a ``candidate_connection_changed`` event is stored (source
  ``system``) and the session's bot is told (``presence_changed``): it folds the event in,
  and the controller pauses the exam after the grace period and resumes it on the
  candidate's return (``ioa.runtime.absence``).

Presence is best effort: a cache or database failure is logged and never closes the socket.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Final, TypedDict, cast

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.layers import BaseChannelLayer

from ioa.events import Audience, EventFactory, EventSource
from ioa.events.payloads import CandidateConnectionChanged
from proctoring.presence import (
    Change,
    ConnectionView,
    Presence,
    PresenceStore,
    PresenceWire,
    alert_ms,
    now_ms,
    store,
)
from sessions.bot_channel import send_to_bot
from sessions.broadcast import group_name
from sessions.event_store import append_events
from sessions.layer_pool import waiting_for_pool
from sessions.models import ExamSession

logger = logging.getLogger(__name__)

PRESENCE_MESSAGE: Final = "session.presence"
"""Channels message type; consumers handle it in ``session_presence``."""


class PresenceMessage(TypedDict):
    """A ``session.presence`` message (:func:`presence_message`)."""

    type: str
    sessionId: str
    presence: PresenceWire


RECORDED_STATES: Final = frozenset({"ready", "in_progress", "paused"})
"""Exam states in which connections and disconnections go into the session log."""


def close_code(code: object) -> int | None:
    """A WebSocket close code worth recording (1000-4999), else ``None``."""
    return code if isinstance(code, int) and 1000 <= code <= 4999 else None


def record_transition(session_id: uuid.UUID | str, change: Change, code: int | None = None) -> bool:
    """Store ``change``'s transition as ``candidate_connection_changed`` if the exam runs
    (:data:`RECORDED_STATES`); returns whether an event was stored."""
    if change.transition is None:
        return False
    state = ExamSession.objects.filter(pk=session_id).values_list("state", flat=True).first()
    if state not in RECORDED_STATES:
        return False
    connected = change.transition == "connected"
    payload = CandidateConnectionChanged(
        status=change.transition,
        reconnects=change.presence.reconnects,
        offlineMs=change.offline_ms if connected else None,
        closeCode=None if connected else close_code(code),
    )
    event = EventFactory(session_id=str(session_id), source=EventSource.SYSTEM)(payload)
    append_events(session=session_id, events=[event])
    return True


def presence_view(session_id: uuid.UUID | str) -> ConnectionView:
    """The session's presence as the proctor's session page shows it (``presence`` frame)."""
    found = store.read([session_id])[str(session_id)]
    return found.view(now_ms(), alert_ms())


def presence_message(session_id: uuid.UUID | str, presence: Presence) -> PresenceMessage:
    """The Channels message that tells a session's proctors its presence changed."""
    return {
        "type": PRESENCE_MESSAGE,
        "sessionId": str(session_id),
        "presence": presence.to_wire(),
    }


class CandidateSocket:
    """One candidate socket's presence (module docstring)."""

    def __init__(
        self,
        session_id: uuid.UUID,
        channel_name: str,
        layer: BaseChannelLayer,
        presence_store: PresenceStore = store,
    ) -> None:
        self.session_id = session_id
        self.channel_name = channel_name
        self.layer = layer
        self.store = presence_store
        self.slot: int | None = None
        self.open = False

    async def opened(self) -> None:
        """Count this socket in; record and announce a (re)connection."""
        try:
            change = await sync_to_async(self.store.opened, thread_sensitive=False)(
                self.session_id, self.channel_name
            )
        except Exception:
            logger.exception("presence of session %s: could not count a socket", self.session_id)
            return
        self.slot, self.open = change.slot, True
        await self._after(change, None)

    async def alive(self) -> None:
        """A heartbeat: keep this socket counted (a crashed server's sockets are not)."""
        if not self.open:
            return
        try:
            self.slot = await sync_to_async(self.store.alive, thread_sensitive=False)(
                self.session_id, self.channel_name, self.slot
            )
        except Exception:
            logger.exception("presence of session %s: heartbeat not kept", self.session_id)

    async def closed(self, code: int | None) -> None:
        """Count this socket out; record and announce a disconnection if it was the last."""
        if not self.open:
            return
        self.open = False
        try:
            change = await sync_to_async(self.store.closed, thread_sensitive=False)(
                self.session_id, self.channel_name, self.slot
            )
        except Exception:
            logger.exception("presence of session %s: could not release a socket", self.session_id)
            return
        await self._after(change, code)

    async def _after(self, change: Change, code: int | None) -> None:
        if change.transition is not None:
            try:
                stored = await database_sync_to_async(record_transition)(
                    self.session_id, change, code
                )
                if stored:
                    # The bot folds it in: the controller pauses after the grace period and
                    # resumes on the candidate's return (ioa.runtime.absence).
                    await send_to_bot(self.session_id, "presence_changed")
            except Exception:
                logger.exception(
                    "presence of session %s: %s not recorded", self.session_id, change.transition
                )
        try:
            group = group_name(self.session_id, Audience.PROCTOR)
            message = presence_message(self.session_id, change.presence)
            await waiting_for_pool(lambda: self.layer.group_send(group, message))
        except Exception:  # best effort: the overview re-reads presence periodically
            logger.exception("presence of session %s: proctors not told", self.session_id)


class CandidatePresence:
    """``sessions.presence_port.PresenceTracker``: the session socket's way into the tracking."""

    def socket(
        self, session_id: uuid.UUID, channel_name: str, layer: BaseChannelLayer
    ) -> CandidateSocket:
        """A :class:`CandidateSocket` for one candidate socket (counted once ``opened``)."""
        return CandidateSocket(session_id, channel_name, layer)

    def view(self, session_id: uuid.UUID) -> ConnectionView:
        """:func:`presence_view`: the proctor's ``presence`` frame now."""
        return presence_view(session_id)

    def view_of(self, message: Mapping[str, object]) -> ConnectionView:
        """The ``presence`` frame for a :class:`PresenceMessage` (:func:`presence_message`)."""
        found = Presence.from_wire(cast(PresenceWire, message["presence"]))
        return found.view(now_ms(), alert_ms())
