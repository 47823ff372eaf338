"""The candidate's connection (``proctoring.presence``): the store on the configured cache (local
memory in the embedded default, Redis in services mode), what the dashboard derives from it
(status, alert), and the record of (dis)connections in the session log."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from django.core.cache import cache

from ioa.projections import session_view
from proctoring import overview, presence
from proctoring.presence import ConnectionStatus, Presence, PresenceStore
from proctoring.presence_tracking import close_code, record_transition
from proctoring.views import needs_attention
from sessions.event_store import append_events
from sessions.models import SessionEvent
from tests.sessions.factories import ExamSessionFactory, exam_started

T0 = 1_800_000_000_000


class Clock:
    """Epoch milliseconds the test moves by hand."""

    def __init__(self) -> None:
        self.ms = T0

    def __call__(self) -> int:
        return self.ms

    def advance(self, seconds: float) -> None:
        self.ms += round(seconds * 1000)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> PresenceStore:
    return PresenceStore(cache, ttl=lambda: 60, clock=clock)


def sid() -> str:
    return str(uuid.uuid4())


def test_sockets_are_counted_so_tabs_and_reloads_never_look_like_a_disconnection(
    store: PresenceStore, clock: Clock
) -> None:
    session = sid()
    first = store.opened(session, "tab-a")
    assert first.transition == "connected" and first.offline_ms is None  # the first connection
    assert (first.presence.sockets, first.presence.reconnects) == (1, 0)
    clock.advance(5)
    second = store.opened(session, "tab-b")
    assert second.transition is None and second.presence.sockets == 2
    # A reload: the new socket opens before the old one closes. Nothing changes.
    clock.advance(5)
    reload = store.opened(session, "tab-a-reloaded")
    assert reload.transition is None
    gone = store.closed(session, "tab-a", first.slot)
    assert gone.transition is None and gone.presence.sockets == 2
    assert gone.presence.status(clock(), 20_000) is ConnectionStatus.CONNECTED
    assert gone.presence.connected_ms == T0  # still the same connected period
    # The last sockets close: disconnected from that moment.
    store.closed(session, "tab-b", second.slot)
    clock.advance(2)
    last = store.closed(session, "tab-a-reloaded", reload.slot)
    assert last.transition == "disconnected" and last.presence.sockets == 0
    assert last.presence.offline_since_ms() == T0 + 12_000


def test_a_return_counts_as_a_reconnection_with_the_time_away(
    store: PresenceStore, clock: Clock
) -> None:
    session = sid()
    opened = store.opened(session, "a")
    clock.advance(30)
    store.closed(session, "a", opened.slot)
    clock.advance(8)
    back = store.opened(session, "b")
    assert back.transition == "connected"
    assert back.offline_ms == 8_000
    assert back.presence.reconnects == 1
    assert back.presence.connected_ms == T0 + 38_000
    assert back.presence.first_ms == T0


def test_statuses_over_time(store: PresenceStore, clock: Clock) -> None:
    session = sid()
    assert store.read([session])[session].status(clock(), 20_000) is (
        ConnectionStatus.NOT_CONNECTED
    )
    opened = store.opened(session, "a")
    clock.advance(60)
    left = store.closed(session, "a", opened.slot).presence
    assert left.status(clock(), 20_000) is ConnectionStatus.RECONNECTING
    assert left.status(clock() + 19_999, 20_000) is ConnectionStatus.RECONNECTING
    assert left.status(clock() + 20_000, 20_000) is ConnectionStatus.DISCONNECTED
    assert left.since_ms() == T0 + 60_000


def test_a_socket_whose_server_died_expires_after_two_heartbeats(settings: Any) -> None:
    settings.VIVA_WS_HEARTBEAT_SECONDS = 0.5
    assert presence.socket_ttl() == 1
    store = PresenceStore(cache)
    session = sid()
    kept = store.opened(session, "kept")
    crashed = store.opened(session, "crashed")
    assert crashed.presence.sockets == 2
    for _ in range(3):  # the live socket's heartbeats keep it counted; the other has none
        time.sleep(0.6)
        kept_slot = store.alive(session, "kept", kept.slot)
        assert kept_slot == kept.slot
    found = store.read([session])[session]
    assert found.sockets == 1
    store.closed(session, "kept", kept.slot)
    # Both gone; had nobody closed "kept", its slot would have expired as well:
    lonely = sid()
    store.opened(lonely, "only")
    seen = store.read([lonely])[lonely].seen_ms
    time.sleep(1.3)
    after = store.read([lonely])[lonely]
    assert after.sockets == 0 and after.left_ms is None
    assert after.offline_since_ms() == seen  # the last sign of life
    assert after.status(presence.now_ms(), 20_000) is ConnectionStatus.RECONNECTING


def test_a_heartbeat_after_expiry_claims_a_slot_again(store: PresenceStore) -> None:
    session = sid()
    opened = store.opened(session, "a")
    assert opened.slot is not None
    cache.delete(f"presence:{uuid.UUID(session).hex}:slot:{opened.slot}")  # as if expired
    assert store.read([session])[session].sockets == 0
    assert store.alive(session, "a", opened.slot) is not None
    assert store.read([session])[session].sockets == 1


def test_presence_survives_a_trip_through_a_channels_message(store: PresenceStore) -> None:
    session = sid()
    opened = store.opened(session, "a").presence
    assert Presence.from_wire(opened.to_wire()) == opened
    assert Presence.from_wire(Presence().to_wire()) == Presence()


# --- alerts -------------------------------------------------------------------------------------


def offline(since_ms: int, reconnects: int = 0) -> Presence:
    return Presence(
        sockets=0,
        first_ms=T0 - 60_000,
        connected_ms=T0 - 60_000,
        left_ms=since_ms,
        reconnects=reconnects,
    )


def test_an_alert_only_for_a_running_exam_and_only_after_the_threshold() -> None:
    gone = offline(T0)
    assert presence.disconnect_alert("s", "in_progress", gone, T0 + 19_999, 20_000) is None
    alert = presence.disconnect_alert("s", "in_progress", gone, T0 + 20_000, 20_000)
    assert alert is not None
    assert (alert["kind"], alert["severity"], alert["sessionId"]) == (
        "disconnected",
        "warning",
        "s",
    )
    assert alert["id"] == f"s:disconnected:{T0}"
    assert alert["at"] == presence.iso(T0 + 20_000) and alert["since"] == presence.iso(T0)
    assert presence.disconnect_alert("s", "paused", gone, T0 + 30_000, 20_000) is not None
    for state in ("scheduled", "scaffolding", "ready", "completed", "aborted", "expired"):
        assert presence.disconnect_alert("s", state, gone, T0 + 99_000, 20_000) is None, state
    connected = Presence(sockets=1, first_ms=T0, connected_ms=T0)
    assert presence.disconnect_alert("s", "in_progress", connected, T0 + 99_000, 20_000) is None
    never = Presence()
    assert presence.disconnect_alert("s", "in_progress", never, T0 + 99_000, 20_000) is None


def test_alerts_are_raised_once_cleared_on_return_and_due_times_reported() -> None:
    alerts = presence.DisconnectAlerts(threshold_ms=20_000)
    gone = offline(T0)
    assert alerts.update("s", "in_progress", gone, T0 + 5_000) == (None, None, T0 + 20_000)
    raised, cleared, due = alerts.update("s", "in_progress", gone, T0 + 20_000)
    assert raised is not None and cleared is None and due is None
    assert alerts.update("s", "in_progress", gone, T0 + 25_000) == (None, None, None)  # once
    # Outside an exam there is no alert, but the status still turns at the same moment.
    waiting = presence.DisconnectAlerts(threshold_ms=20_000)
    assert waiting.update("w", "scaffolding", gone, T0 + 5_000) == (None, None, T0 + 20_000)
    assert waiting.update("w", "scaffolding", gone, T0 + 21_000) == (None, None, None)
    back = Presence(sockets=1, first_ms=T0 - 60_000, connected_ms=T0 + 26_000, left_ms=T0)
    assert alerts.update("s", "in_progress", back, T0 + 26_000) == (None, raised, None)
    assert alerts.active == {}
    # A new disconnection is a new alert (a dismissed one does not hide it).
    again = offline(T0 + 40_000)
    second, _, _ = alerts.update("s", "in_progress", again, T0 + 61_000)
    assert second is not None and second["id"] != raised["id"]
    # The exam ends: the alert goes.
    assert alerts.update("s", "completed", again, T0 + 62_000) == (None, second, None)


def test_rows_show_the_candidate_connection_and_need_attention_when_alerting() -> None:
    view = session_view.SessionView(
        "00000000-0000-7000-8000-000000000001", exam_state="in_progress"
    )

    class Candidate:
        name, email = "Ada", "ada@example.test"

    class Row:
        pk = "00000000-0000-7000-8000-000000000001"
        candidate = Candidate()
        invited_at = identity_confirmed_at = None
        extra_time_multiplier, text_mode_required, slower_speech = "1.00", False, False

    bot = overview.BotHealth("running", True)
    gone = offline(T0, reconnects=0)
    early = overview.row(Row(), view, bot, T0 + 5_000, presence=gone)  # type: ignore[arg-type]
    assert early["candidateConnection"]["status"] == "reconnecting"
    assert early["candidateConnection"]["since"] == presence.iso(T0)
    assert early["candidateConnection"]["alert"] is False
    assert not needs_attention(early)
    late = overview.row(Row(), view, bot, T0 + 25_000, presence=gone)  # type: ignore[arg-type]
    assert late["candidateConnection"]["status"] == "disconnected"
    assert late["candidateConnection"]["alert"] is True
    assert needs_attention(late)
    assert presence.describe(late["candidateConnection"]).startswith("Disconnected since ")
    here = Presence(sockets=2, first_ms=T0, connected_ms=T0, reconnects=3)
    shown = overview.row(Row(), view, bot, T0, presence=here)  # type: ignore[arg-type]
    assert presence.describe(shown["candidateConnection"]) == "Connected in 2 tabs · 3 reconnects"


# --- the record --------------------------------------------------------------------------------


def start_exam(session: Any) -> None:
    append_events(session=session, events=exam_started(session))


@pytest.mark.django_db
def test_transitions_are_recorded_only_while_the_exam_runs(
    store: PresenceStore, clock: Clock
) -> None:
    session = ExamSessionFactory()
    key = str(session.pk)
    opened = store.opened(key, "a")
    assert record_transition(session.pk, opened) is False  # scheduled: the waiting room
    start_exam(session)
    clock.advance(10)
    left = store.closed(key, "a", opened.slot)
    assert record_transition(session.pk, left, 1006) is True
    clock.advance(95)
    back = store.opened(key, "b")
    assert record_transition(session.pk, back) is True
    second = store.opened(key, "c")  # a second tab: no transition, nothing recorded
    assert record_transition(session.pk, second) is False
    stored = list(
        SessionEvent.objects.filter(session=session, type="candidate_connection_changed")
        .order_by("seq")
        .values_list("source", "payload")
    )
    assert stored == [
        (
            "system",
            {
                "type": "candidate_connection_changed",
                "status": "disconnected",
                "reconnects": 0,
                "closeCode": 1006,
            },
        ),
        (
            "system",
            {
                "type": "candidate_connection_changed",
                "status": "connected",
                "reconnects": 1,
                "offlineMs": 95_000,
            },
        ),
    ]


def test_only_websocket_close_codes_are_recorded() -> None:
    assert [close_code(c) for c in (1000, 1001, 1006, 4400, 999, 5000, None, "1006")] == [
        1000,
        1001,
        1006,
        4400,
        None,
        None,
        None,
        None,
    ]
