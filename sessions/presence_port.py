"""The port through which the session socket reports the candidate's connection ("presence")
without importing the proctoring app.

``proctoring`` sits above ``sessions`` (docs/architecture.md, "Dependency direction"): it counts
the candidate's open sockets, stores ``candidate_connection_changed`` while the exam runs, tells
the session's bot (which pauses the exam after the grace period) and shows the connection to the
proctors (``proctoring.presence``, ``proctoring.presence_tracking``). The socket those facts come
from is ``sessions.consumers.SessionEventsConsumer``; it reaches the tracking through the
:class:`PresenceTracker` that ``proctoring``'s ``AppConfig.ready()`` registered here.

The tracker tells a session's proctor group with Channels messages of type ``session.presence``;
the session socket hands each to :meth:`PresenceTracker.view_of` and sends the proctor the
result as a ``presence`` frame. When no tracker is registered (a web tier without the proctoring
app) :func:`presence_tracker` returns ``None``: candidate sockets are not counted and proctor
sockets get no ``presence`` frame.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Protocol

from channels.layers import BaseChannelLayer


class SocketPresence(Protocol):
    """One candidate socket's part in its session's presence."""

    async def opened(self) -> None:
        """The socket is live: count it in (best effort, never raises)."""

    async def alive(self) -> None:
        """A heartbeat: keep the socket counted (best effort, never raises)."""

    async def closed(self, code: int | None) -> None:
        """The socket closed with ``code``: count it out (best effort, never raises)."""


class PresenceTracker(Protocol):
    """What the session socket asks of the presence tracking."""

    def socket(
        self, session_id: uuid.UUID, channel_name: str, layer: BaseChannelLayer
    ) -> SocketPresence:
        """The tracking of one candidate socket of ``session_id`` (not yet counted)."""

    def view(self, session_id: uuid.UUID) -> Mapping[str, object]:
        """The session's presence as a proctor's ``presence`` frame carries it (blocking: it
        reads the cache)."""

    def view_of(self, message: Mapping[str, object]) -> Mapping[str, object]:
        """The ``presence`` frame's value for one ``session.presence`` message."""


_registered: list[PresenceTracker] = []


def register(tracker: PresenceTracker) -> None:
    """Install the tracker (``proctoring.apps.ProctoringConfig.ready``); a second call replaces
    it."""
    _registered[:] = [tracker]


def presence_tracker() -> PresenceTracker | None:
    """The registered tracker, or ``None`` when no proctoring app is installed."""
    return _registered[0] if _registered else None
