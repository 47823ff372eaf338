"""The candidate's connection on the proctor dashboard, over real sockets: real daphne servers,
real WebSocket clients for the candidate's tabs, the sitting overview and the proctor's session
page.

The first test needs no other process than daphne, so it runs on both shapes (the embedded
default: SQLite, in-memory layer, local-memory cache; services: Postgres, Redis). The crash test
needs a cache two servers share (Redis).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
import websockets
from django.db import connection
from django.test import Client

from sessions.event_store import append_events
from sessions.models import ExamSession, SessionEvent
from tests.factories import ProctorFactory
from tests.sessions.factories import ExamSessionFactory, SittingFactory, exam_started
from tests.support.processes import asgi_server, asgi_server_process

pytestmark = pytest.mark.django_db(transaction=True)

ALERT_SECONDS = 2.0
SERVER_ENV = {
    "VIVA_CANDIDATE_DISCONNECT_ALERT_SECONDS": str(ALERT_SECONDS),
    "VIVA_WS_HEARTBEAT_SECONDS": "1",  # a socket without heartbeats expires after 2 s
}


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), asgi_server(**SERVER_ENV) as address:
        yield address


def cookie_for(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


def open_socket(address: str, path: str, cookie: str) -> Any:
    return websockets.connect(
        f"ws://{address}{path}",
        origin=f"http://{address}",  # type: ignore[arg-type]
        additional_headers={"Cookie": cookie},
        open_timeout=15,
    )


async def frame_where(ws: Any, predicate: Any, timeout: float = 15) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        remaining = deadline - asyncio.get_running_loop().time()
        frame = json.loads(await asyncio.wait_for(ws.recv(), max(remaining, 0.01)))
        if predicate(frame):
            return frame


def connection_of(frame: dict[str, Any], session: ExamSession) -> dict[str, Any] | None:
    """The candidate connection in a snapshot or rows frame's row of ``session``."""
    for row in frame.get("rows", []):
        if row["sessionId"] == str(session.pk):
            return dict(row["candidateConnection"])
    return None


def row_says(session: ExamSession, **wanted: Any) -> Any:
    def check(frame: dict[str, Any]) -> bool:
        found = connection_of(frame, session)
        return found is not None and all(found.get(k) == v for k, v in wanted.items())

    return check


def presence_says(**wanted: Any) -> Any:
    return lambda f: (
        f["kind"] == "presence" and all(f["presence"].get(k) == v for k, v in wanted.items())
    )


async def candidate_tab(address: str, session: ExamSession, cookie: str) -> Any:
    """The exam room's socket, live (after ``caught_up``)."""
    ws = await open_socket(address, f"/ws/sessions/{session.pk}/events/", cookie)
    await frame_where(ws, lambda f: f["kind"] == "caught_up")
    return ws


def start_exam(session: ExamSession) -> None:
    append_events(session=session, events=exam_started(session))


def recorded(session: ExamSession) -> list[dict[str, Any]]:
    try:
        return [
            dict(payload)
            for payload in SessionEvent.objects.filter(
                session=session, type="candidate_connection_changed"
            )
            .order_by("seq")
            .values_list("payload", flat=True)
        ]
    finally:
        connection.close()


def test_tabs_disconnection_alert_and_return_reach_the_dashboard_live(server: str) -> None:
    proctor = ProctorFactory()
    sitting = SittingFactory(proctors=[proctor])
    session = ExamSessionFactory(sitting=sitting)
    start_exam(session)
    staff, candidate = cookie_for(proctor), cookie_for(session.candidate)
    overview_path = f"/ws/proctor/sittings/{sitting.pk}/"
    page_path = f"/ws/sessions/{session.pk}/events/"

    async def main() -> None:
        async with (
            open_socket(server, overview_path, staff) as overview,
            open_socket(server, page_path, staff) as page,
        ):
            snapshot = json.loads(await asyncio.wait_for(overview.recv(), 15))
            assert snapshot["kind"] == "snapshot"
            assert connection_of(snapshot, session) == {
                "status": "not_connected",
                "since": None,
                "sockets": 0,
                "reconnects": 0,
                "alert": False,
                "reconnectingMs": ALERT_SECONDS * 1000,
            }
            await frame_where(page, presence_says(status="not_connected"))
            await frame_where(page, lambda f: f["kind"] == "caught_up")

            # Two tabs: counted as two sockets, one connection.
            tab_a = await candidate_tab(server, session, candidate)
            await frame_where(overview, row_says(session, status="connected", sockets=1))
            await frame_where(page, presence_says(status="connected", sockets=1))
            tab_b = await candidate_tab(server, session, candidate)
            await frame_where(overview, row_says(session, status="connected", sockets=2))

            # One tab closes: still connected.
            await tab_a.close()
            row = await frame_where(overview, row_says(session, sockets=1))
            assert connection_of(row, session)["status"] == "connected"  # type: ignore[index]

            # The last one closes: reconnecting at once, then disconnected with an alert.
            await tab_b.close()
            closed_at = time.monotonic()
            row = await frame_where(overview, row_says(session, status="reconnecting"))
            assert connection_of(row, session)["alert"] is False  # type: ignore[index]
            await frame_where(page, presence_says(status="reconnecting", sockets=0))
            alert = await frame_where(overview, lambda f: f["kind"] == "alert")
            assert time.monotonic() - closed_at >= ALERT_SECONDS - 0.3
            assert alert["alert"]["kind"] == "disconnected"
            assert alert["alert"]["sessionId"] == str(session.pk)
            assert alert["alert"]["severity"] == "warning"
            row = await frame_where(overview, row_says(session, status="disconnected"))
            assert connection_of(row, session)["alert"] is True  # type: ignore[index]

            # The candidate comes back: the alert is cleared, one reconnect counted.
            tab_c = await candidate_tab(server, session, candidate)
            cleared = await frame_where(overview, lambda f: f["kind"] == "alert_cleared")
            assert cleared == {
                "kind": "alert_cleared",
                "id": alert["alert"]["id"],
                "sessionId": str(session.pk),
            }
            await frame_where(overview, row_says(session, status="connected", reconnects=1))
            await frame_where(page, presence_says(status="connected", reconnects=1))
            await tab_c.close()
            await frame_where(overview, row_says(session, status="reconnecting"))

    asyncio.run(main())

    # The record: the first connection, one disconnection (not two: the first tab's close
    # changed nothing), the return with how long the room was offline, and the final close.
    log = recorded(session)
    assert [(e["status"], e["reconnects"]) for e in log] == [
        ("connected", 0),
        ("disconnected", 0),
        ("connected", 1),
        ("disconnected", 1),
    ]
    assert "offlineMs" not in log[0]  # the first connection: never offline before
    assert log[1]["closeCode"] == 1000  # the client closed normally
    assert log[2]["offlineMs"] >= ALERT_SECONDS * 1000
    assert "offlineMs" not in log[1] and "closeCode" not in log[2]


def test_a_socket_told_caught_up_has_finished_its_join(server: str) -> None:
    """``caught_up`` ends the join: a proctor's page has had its presence frame, and a
    candidate's socket is counted in (its connection recorded). Before, both came after it, so
    a burst of joins was still being worked through while the clients were told they were
    live (the first second's events reached them up to 0.4 s late in ``bench/events.py``)."""
    proctor = ProctorFactory()
    session = ExamSessionFactory(sitting=SittingFactory(proctors=[proctor]))
    start_exam(session)
    staff, candidate = cookie_for(proctor), cookie_for(session.candidate)
    path = f"/ws/sessions/{session.pk}/events/"

    async def main() -> tuple[list[str], list[dict[str, Any]]]:
        async with open_socket(server, path, staff) as page:
            kinds: list[str] = []
            while not kinds or kinds[-1] != "caught_up":
                kinds.append(json.loads(await asyncio.wait_for(page.recv(), 15))["kind"])
        async with open_socket(server, path, candidate) as tab:
            await frame_where(tab, lambda f: f["kind"] == "caught_up")
            log = await asyncio.to_thread(recorded, session)  # at once, the tab still open
        return kinds, log

    kinds, log = asyncio.run(main())
    assert kinds.count("presence") == 1
    assert kinds.index("presence") < kinds.index("caught_up")
    assert [(e["status"], e["reconnects"]) for e in log] == [("connected", 0)]


def test_the_waiting_room_is_not_recorded_but_is_shown(server: str) -> None:
    proctor = ProctorFactory()
    sitting = SittingFactory(proctors=[proctor])
    session = ExamSessionFactory(sitting=sitting)  # not started
    staff, candidate = cookie_for(proctor), cookie_for(session.candidate)

    async def main() -> None:
        async with open_socket(server, f"/ws/proctor/sittings/{sitting.pk}/", staff) as overview:
            await frame_where(overview, lambda f: f["kind"] == "snapshot")
            tab = await candidate_tab(server, session, candidate)
            await frame_where(overview, row_says(session, status="connected"))
            await tab.close()
            row = await frame_where(overview, row_says(session, status="reconnecting"))
            assert connection_of(row, session)["alert"] is False  # type: ignore[index]
            # Not in an exam: no alert, whatever the wait.
            await frame_where(overview, row_says(session, status="disconnected"), timeout=10)
            try:
                frame = await frame_where(overview, lambda f: f["kind"] == "alert", timeout=1)
            except TimeoutError:
                frame = None
            assert frame is None

    asyncio.run(main())
    assert recorded(session) == []


@pytest.mark.services("postgres", "redis")
def test_a_crashed_server_does_not_leave_the_candidate_connected(server: str) -> None:
    """The candidate's socket is on a server that dies without closing it: its slot expires
    after two heartbeats, and the other server's overview shows the candidate gone."""
    proctor = ProctorFactory()
    sitting = SittingFactory(proctors=[proctor])
    session = ExamSessionFactory(sitting=sitting)
    start_exam(session)
    staff, candidate = cookie_for(proctor), cookie_for(session.candidate)

    async def main(doomed: str, process: Any) -> None:
        async with open_socket(server, f"/ws/proctor/sittings/{sitting.pk}/", staff) as overview:
            await frame_where(overview, lambda f: f["kind"] == "snapshot")
            tab = await candidate_tab(doomed, session, candidate)
            await frame_where(overview, row_says(session, status="connected"))
            os.kill(process.pid, signal.SIGKILL)  # our own child, by its pid
            process.wait(10)
            killed_at = time.monotonic()
            # Two heartbeats (2 s) for the slot to expire, one overview refresh (5 s) to see it.
            await frame_where(overview, lambda f: f["kind"] == "alert", timeout=12)
            row = await frame_where(overview, row_says(session, status="disconnected"), 5)
            assert time.monotonic() - killed_at < 12
            assert connection_of(row, session)["sockets"] == 0  # type: ignore[index]
            with pytest.raises(websockets.ConnectionClosed):
                await tab.recv()
            # The candidate reconnects to the surviving server: the gap is recorded then.
            back = await candidate_tab(server, session, candidate)
            await frame_where(overview, lambda f: f["kind"] == "alert_cleared")
            await frame_where(overview, row_says(session, status="connected", reconnects=1))
            await back.close()
            await frame_where(overview, row_says(session, status="reconnecting"))

    with asgi_server_process(**SERVER_ENV) as (doomed, process):
        asyncio.run(main(doomed, process))
    log = recorded(session)
    # Nobody saw the first socket close, so no "disconnected" after the first "connected";
    # the return carries the gap.
    assert [(e["status"], e["reconnects"]) for e in log] == [
        ("connected", 0),
        ("connected", 1),
        ("disconnected", 1),
    ]
    assert log[1]["offlineMs"] >= 1000
