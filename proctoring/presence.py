"""The candidate's exam room connection ("presence"), as the proctor dashboard shows it
(docs/proctoring.md, "The candidate's connection").

What counts: the open sockets of a session's *candidate* audience (``sessions.consumers``; the
exam room opens one per tab). Presence counts sockets, not events: a second tab, or a reload
whose new socket opens before the old one has closed, never makes the candidate look gone, and
the candidate is disconnected only when the last socket has closed.

Where it lives: the Django cache (Redis in services mode, so every web process sees every
socket; local memory in the embedded default, whose single process holds every socket). Keys,
under ``presence:<session hex>:``:

==============  ==============================================================================
``slot:<i>``    the channel name of one open socket (``i`` < :data:`SLOTS`); claimed with an
                atomic ``add``, expires after :func:`socket_ttl` (two heartbeats) unless the
                socket's consumer refreshes it at each heartbeat — a crashed server's sockets
                vanish by themselves
``first``       epoch ms of the candidate's first connection
``connected``   epoch ms when the current (or last) connected period began
``left``        epoch ms when the last open socket closed
``seen``        epoch ms of the last sign of life of any socket (open, heartbeat, close)
``reconnects``  returns after the first connection (an atomic counter)
==============  ==============================================================================

The counts are exact (each socket owns a slot); the period boundaries are best effort when two
tabs open or close in the same instant. More than :data:`SLOTS` sockets of one candidate are
not counted beyond that number. Meta keys expire :data:`META_TTL` after their last write.

Reading: :func:`presence_for` (one ``get_many`` for any number of sessions) gives
:class:`Presence`; :meth:`Presence.status` says ``connected``, ``reconnecting`` (no socket for
less than the alert threshold: the exam room retries with back-off up to 10 s),
``disconnected`` (longer) or ``not_connected`` (never). :func:`disconnect_alert` is the
overview's alert for a candidate gone longer than ``VIVA_CANDIDATE_DISCONNECT_ALERT_SECONDS``
(default :data:`DEFAULT_ALERT_SECONDS`) while the exam is in progress or paused;
:class:`DisconnectAlerts` tracks which are raised, so they can be cleared when the candidate
comes back.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Final, Literal, TypedDict

from django.conf import settings
from django.core.cache import BaseCache, cache
from django.utils import timezone

from ioa.projections.session_view import Alert as Alert
from ioa.projections.session_view import iso

SLOTS: Final = 8
"""Sockets of one session counted at most (tabs of one candidate)."""
META_TTL: Final = 24 * 3600
"""Seconds a session's presence history is kept after its last change."""
DEFAULT_ALERT_SECONDS: Final = 20.0
DEFAULT_HEARTBEAT_SECONDS: Final = 15.0
ALERT_STATES: Final = frozenset({"in_progress", "paused"})
"""Exam states in which a long disconnection raises an alert."""
ALERT_KIND: Final = "disconnected"
ALERT_SEVERITY: Final = "warning"
ALERT_LABEL: Final = "Candidate disconnected"

Transition = Literal["connected", "disconnected"]


class PresenceWire(TypedDict):
    """:meth:`Presence.to_wire`: a presence's raw facts (instants as ISO 8601 or ``None``)."""

    sockets: int
    firstConnectedAt: str | None
    connectedAt: str | None
    leftAt: str | None
    lastSeenAt: str | None
    reconnects: int


class ConnectionView(TypedDict):
    """:meth:`Presence.view`: the candidate's connection as the dashboard shows it."""

    status: str
    since: str | None
    sockets: int
    reconnects: int
    alert: bool
    reconnectingMs: int


class ConnectionStatus(StrEnum):
    """The candidate's exam room connection, as the dashboard names it."""

    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    """No socket, for less than the alert threshold (the exam room is retrying)."""
    DISCONNECTED = "disconnected"
    NOT_CONNECTED = "not_connected"
    """The candidate has not opened the exam room yet."""


def heartbeat_seconds() -> float:
    """``VIVA_WS_HEARTBEAT_SECONDS``: the session sockets' heartbeat interval."""
    return float(getattr(settings, "VIVA_WS_HEARTBEAT_SECONDS", DEFAULT_HEARTBEAT_SECONDS))


def socket_ttl() -> int:
    """Seconds a socket's slot lives without a refresh: two heartbeats (one may be late)."""
    return max(1, math.ceil(2 * heartbeat_seconds()))


def alert_ms() -> int:
    """``VIVA_CANDIDATE_DISCONNECT_ALERT_SECONDS`` in milliseconds: how long a candidate may be
    without a connection before the overview raises an alert (and calls it disconnected
    rather than reconnecting)."""
    seconds = float(
        getattr(settings, "VIVA_CANDIDATE_DISCONNECT_ALERT_SECONDS", DEFAULT_ALERT_SECONDS)
    )
    return max(0, round(seconds * 1000))


def now_ms() -> int:
    """The current time in epoch milliseconds."""
    return round(time.time() * 1000)


def _ms(value: str | None) -> int | None:
    if value is None:
        return None
    return round(datetime.fromisoformat(value).timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class Presence:
    """One session's candidate connection at one moment (module docstring)."""

    sockets: int = 0
    first_ms: int | None = None
    connected_ms: int | None = None
    left_ms: int | None = None
    seen_ms: int | None = None
    reconnects: int = 0

    @property
    def connected(self) -> bool:
        return self.sockets > 0

    def offline_since_ms(self) -> int | None:
        """When the exam room lost its last connection; ``None`` while connected or before
        the first connection. When the sockets expired without closing (a server crash),
        the last sign of life."""
        if self.sockets or self.first_ms is None:
            return None
        if self.left_ms is not None and (
            self.connected_ms is None or self.left_ms >= self.connected_ms
        ):
            return self.left_ms
        known = [m for m in (self.seen_ms, self.connected_ms, self.first_ms) if m is not None]
        return max(known)

    def status(self, at_ms: int, threshold_ms: int) -> ConnectionStatus:
        """Connected, reconnecting (offline for less than ``threshold_ms``), disconnected, or
        not connected yet."""
        if self.sockets:
            return ConnectionStatus.CONNECTED
        since = self.offline_since_ms()
        if since is None:
            return ConnectionStatus.NOT_CONNECTED
        if at_ms - since < threshold_ms:
            return ConnectionStatus.RECONNECTING
        return ConnectionStatus.DISCONNECTED

    def since_ms(self) -> int | None:
        """When the current status began: connected since, or offline since."""
        return self.connected_ms if self.sockets else self.offline_since_ms()

    def to_wire(self) -> PresenceWire:
        """The raw facts (for Channels messages between processes); :meth:`from_wire`."""
        return {
            "sockets": self.sockets,
            "firstConnectedAt": iso(self.first_ms),
            "connectedAt": iso(self.connected_ms),
            "leftAt": iso(self.left_ms),
            "lastSeenAt": iso(self.seen_ms),
            "reconnects": self.reconnects,
        }

    @classmethod
    def from_wire(cls, data: PresenceWire) -> Presence:
        return cls(
            sockets=int(data.get("sockets") or 0),
            first_ms=_ms(data.get("firstConnectedAt")),
            connected_ms=_ms(data.get("connectedAt")),
            left_ms=_ms(data.get("leftAt")),
            seen_ms=_ms(data.get("lastSeenAt")),
            reconnects=int(data.get("reconnects") or 0),
        )

    def view(self, at_ms: int, threshold_ms: int, *, alert: bool = False) -> ConnectionView:
        """What the dashboard shows (JSON): ``status``, ``since``, ``sockets``, ``reconnects``,
        ``alert`` (a disconnection alert is due), and ``reconnectingMs`` (how long an offline
        candidate shows as reconnecting: the page ticks the status from ``since``)."""
        return {
            "status": self.status(at_ms, threshold_ms).value,
            "since": iso(self.since_ms()),
            "sockets": self.sockets,
            "reconnects": self.reconnects,
            "alert": alert,
            "reconnectingMs": threshold_ms,
        }


def row_view(
    presence: Presence, exam_state: str, at_ms: int, threshold_ms: int | None = None
) -> ConnectionView:
    """:meth:`Presence.view` with ``alert`` set when :func:`disconnect_alert` is due."""
    threshold = alert_ms() if threshold_ms is None else threshold_ms
    due = _alert_due(exam_state, presence, at_ms, threshold)
    return presence.view(at_ms, threshold, alert=due is not None and due <= at_ms)


def describe(view: ConnectionView) -> str:
    """A row's candidate connection in words (the page without JavaScript; the scripts say the
    same with the browser's clock): "Connected · 2 reconnects", "Disconnected since 10:03:12"."""
    status = str(view["status"])
    since = view.get("since")
    when = ""
    if since:
        when = timezone.localtime(datetime.fromisoformat(since)).strftime("%H:%M:%S")
    text = {
        "connected": "Connected",
        "reconnecting": f"Reconnecting (offline since {when})",
        "disconnected": f"Disconnected since {when}",
        "not_connected": "Not connected yet",
    }.get(status, status)
    if status == "connected" and view.get("sockets", 0) > 1:
        text += f" in {view['sockets']} tabs"
    reconnects = int(view.get("reconnects") or 0)
    if reconnects:
        text += f" · {reconnects} reconnect{'' if reconnects == 1 else 's'}"
    return text


# --- alerts -----------------------------------------------------------------------------------


def _alert_due(exam_state: str, presence: Presence, at_ms: int, threshold_ms: int) -> int | None:
    """When a disconnection alert is (or will be) due, if the candidate is offline during a
    running exam; else ``None``."""
    if exam_state not in ALERT_STATES:
        return None
    since = presence.offline_since_ms()
    return None if since is None else since + threshold_ms


def disconnect_alert(
    session_id: str,
    exam_state: str,
    presence: Presence,
    at_ms: int,
    threshold_ms: int | None = None,
) -> Alert | None:
    """The overview alert for a candidate offline for ``threshold_ms`` or more while the exam
    is in progress or paused (the alerts' JSON shape of ``proctoring.overview``); its id names
    the disconnection, so a dismissed alert does not hide the next one."""
    threshold = alert_ms() if threshold_ms is None else threshold_ms
    due = _alert_due(exam_state, presence, at_ms, threshold)
    since = presence.offline_since_ms()
    if due is None or since is None or due > at_ms:
        return None
    seconds = round(threshold / 1000)
    return {
        "id": f"{session_id}:{ALERT_KIND}:{since}",
        "sessionId": session_id,
        "kind": ALERT_KIND,
        "severity": ALERT_SEVERITY,
        "label": ALERT_LABEL,
        "detail": f"No connection from the exam room for more than {seconds} s",
        "at": iso(due),
        "count": 1,
        "firstAt": iso(due),
        "since": iso(since),
    }


def disconnect_alerts(
    states: Mapping[str, str],
    presences: Mapping[str, Presence],
    at_ms: int,
    threshold_ms: int | None = None,
) -> list[Alert]:
    """The disconnection alerts due now, for sessions given as ``{id: exam state}``."""
    found = (
        disconnect_alert(key, state, presences.get(key, Presence()), at_ms, threshold_ms)
        for key, state in states.items()
    )
    return [a for a in found if a is not None]


@dataclass
class DisconnectAlerts:
    """The disconnection alerts an overview socket has raised and not yet cleared."""

    threshold_ms: int
    active: dict[str, Alert] = field(default_factory=dict)

    def update(
        self, session_id: str, exam_state: str, presence: Presence, at_ms: int
    ) -> tuple[Alert | None, Alert | None, int | None]:
        """``(raised, cleared, check_at_ms)``: a new alert to send, an alert to clear (the
        candidate came back, the exam ended, or a new disconnection replaces it), and when to
        look again — the moment an offline candidate stops being "reconnecting" (and, in a
        running exam, the alert falls due) — each ``None`` when there is none."""
        alert = disconnect_alert(session_id, exam_state, presence, at_ms, self.threshold_ms)
        since = presence.offline_since_ms()
        boundary = None if since is None else since + self.threshold_ms
        check_at = boundary if boundary is not None and boundary > at_ms else None
        current = self.active.get(session_id)
        if alert is not None and current is not None and alert["id"] == current["id"]:
            return None, None, check_at
        cleared = self.active.pop(session_id, None)
        if alert is not None:
            self.active[session_id] = alert
        return alert, cleared, check_at


# --- the store --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """What opening or closing one socket did."""

    presence: Presence
    """The session's presence afterwards."""
    slot: int | None
    """The socket's slot (``None``: closed, or more than :data:`SLOTS` sockets)."""
    transition: Transition | None = None
    """``connected`` (the first socket opened with none open), ``disconnected`` (the last one
    closed), or ``None``."""
    offline_ms: int | None = None
    """``connected``: how long the room had been without a connection (``None`` on the first
    connection)."""


def _prefix(session_id: uuid.UUID | str) -> str:
    return f"presence:{uuid.UUID(str(session_id)).hex}:"


META: Final = ("first", "connected", "left", "seen", "reconnects")
SLOT_KEYS: Final = tuple(f"slot:{i}" for i in range(SLOTS))


class PresenceStore:
    """Presence in a Django cache (module docstring). ``clock`` gives epoch milliseconds."""

    def __init__(
        self,
        backend: BaseCache | None = None,
        *,
        ttl: Callable[[], int] = socket_ttl,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self._backend = backend
        self._ttl = ttl
        self._clock = clock

    @property
    def cache(self) -> BaseCache:
        return self._backend if self._backend is not None else cache

    def opened(self, session_id: uuid.UUID | str, channel: str) -> Change:
        """A candidate socket opened: claim a slot; the first open socket starts a connected
        period (a reconnection when the candidate had been connected before)."""
        before = self.read([session_id])[str(session_id)]
        prefix, at = _prefix(session_id), self._clock()
        slot = self._claim(prefix, channel)
        sockets = self._sockets(prefix)
        store = self.cache
        store.set(prefix + "seen", at, META_TTL)
        if sockets != 1 or slot is None:
            return Change(presence=self.read([session_id])[str(session_id)], slot=slot)
        store.set(prefix + "connected", at, META_TTL)
        offline = before.offline_since_ms()
        if before.first_ms is None:
            store.set(prefix + "first", at, META_TTL)
        else:
            store.add(prefix + "reconnects", 0, META_TTL)
            store.incr(prefix + "reconnects")
            store.touch(prefix + "reconnects", META_TTL)
        return Change(
            presence=self.read([session_id])[str(session_id)],
            slot=slot,
            transition="connected",
            offline_ms=None if offline is None else max(0, at - offline),
        )

    def alive(self, session_id: uuid.UUID | str, channel: str, slot: int | None) -> int | None:
        """A heartbeat of an open socket: refresh its slot (or claim one again if it expired);
        returns the slot it holds now."""
        prefix, store = _prefix(session_id), self.cache
        store.set(prefix + "seen", self._clock(), META_TTL)
        if slot is not None and store.get(f"{prefix}slot:{slot}") == channel:
            store.touch(f"{prefix}slot:{slot}", self._ttl())
            return slot
        return self._claim(prefix, channel)

    def closed(self, session_id: uuid.UUID | str, channel: str, slot: int | None) -> Change:
        """A candidate socket closed: release its slot; the last one ends the connected
        period."""
        prefix, store, at = _prefix(session_id), self.cache, self._clock()
        if slot is not None and store.get(f"{prefix}slot:{slot}") == channel:
            store.delete(f"{prefix}slot:{slot}")
        store.set(prefix + "seen", at, META_TTL)
        if self._sockets(prefix):
            return Change(presence=self.read([session_id])[str(session_id)], slot=None)
        store.set(prefix + "left", at, META_TTL)
        return Change(
            presence=self.read([session_id])[str(session_id)],
            slot=None,
            transition="disconnected",
        )

    def read(self, session_ids: Iterable[uuid.UUID | str]) -> dict[str, Presence]:
        """Presence per session id (``str``), in one cache round trip."""
        prefixes = {str(s): _prefix(s) for s in session_ids}
        keys = [p + k for p in prefixes.values() for k in (*SLOT_KEYS, *META)]
        found = self.cache.get_many(keys) if keys else {}
        out: dict[str, Presence] = {}
        for key, prefix in prefixes.items():

            def get(name: str, prefix: str = prefix) -> int | None:
                value = found.get(prefix + name)
                return int(value) if value is not None else None

            out[key] = Presence(
                sockets=sum(1 for s in SLOT_KEYS if found.get(prefix + s) is not None),
                first_ms=get("first"),
                connected_ms=get("connected"),
                left_ms=get("left"),
                seen_ms=get("seen"),
                reconnects=get("reconnects") or 0,
            )
        return out

    def _claim(self, prefix: str, channel: str) -> int | None:
        for index, name in enumerate(SLOT_KEYS):
            if self.cache.add(prefix + name, channel, self._ttl()):
                return index
        return None

    def _sockets(self, prefix: str) -> int:
        return len(self.cache.get_many([prefix + s for s in SLOT_KEYS]))


store: Final = PresenceStore()
"""The process's store, on the default cache."""


def presence_for(session_ids: Iterable[uuid.UUID | str]) -> dict[str, Presence]:
    """Presence per session id (``str``), from the default cache."""
    return store.read(session_ids)
