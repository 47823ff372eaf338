"""The overview socket at fan-out (issue #16), through daphne and Redis: a burst from every
session of a sitting reaches the overview live (well before the periodic refresh could repair
it) with every session's latest seq, and a proctor who reconnects gets every session's latest
state in the snapshot."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import websockets

from ioa.events import EventFactory
from ioa.events import payloads as p
from proctoring.consumers import REFRESH_SECONDS
from sessions.event_store import append_events
from sessions.models import ExamSession
from tests.factories import ProctorFactory
from tests.proctoring.test_overview import cookie_for, in_thread
from tests.sessions.factories import ExamSessionFactory, SittingFactory, exam_started
from tests.support.processes import asgi_server

pytestmark = [pytest.mark.services("postgres", "redis"), pytest.mark.django_db(transaction=True)]

SESSIONS = 30


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), asgi_server() as address:
        yield address


def _burst(sessions: list[ExamSession]) -> None:
    """Every session starts its exam (seq 1-3)."""
    for session in sessions:
        append_events(session=session, events=exam_started(session))


def _pause(sessions: list[ExamSession]) -> None:
    """Every session pauses (seq 4)."""
    for session in sessions:
        make = EventFactory(session_id=str(session.pk))
        append_events(
            session=session,
            events=[make(p.ExamStateChanged(fromState="in_progress", toState="paused"))],
        )


async def _snapshot_rows(ws: Any) -> dict[str, dict[str, Any]]:
    """The snapshot's rows (every page) by session."""
    first = json.loads(await asyncio.wait_for(ws.recv(), 15))
    assert first["kind"] == "snapshot"
    rows = {r["sessionId"]: r for r in first["rows"]}
    while len(rows) < first["totalRows"]:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 15))
        rows.update({r["sessionId"]: r for r in frame.get("rows", [])})
    return rows


def test_a_burst_reaches_the_overview_live_and_a_reconnect_catches_up(server: str) -> None:
    proctor = ProctorFactory()
    sitting = SittingFactory(proctors=[proctor])
    sessions = [ExamSessionFactory(sitting=sitting) for _ in range(SESSIONS)]
    cookie = cookie_for(proctor)
    url = f"ws://{server}/ws/proctor/sittings/{sitting.pk}/"

    def connect() -> Any:
        return websockets.connect(
            url, origin=f"http://{server}", additional_headers={"Cookie": cookie}, open_timeout=15
        )

    async def main() -> None:
        async with connect() as ws:
            await _snapshot_rows(ws)
            await in_thread(_burst, sessions=sessions)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + REFRESH_SECONDS - 1  # live, not the refresh's repair
            seen: dict[str, int] = {}
            while any(seen.get(str(s.pk), 0) < 3 for s in sessions):
                frame = json.loads(await asyncio.wait_for(ws.recv(), deadline - loop.time()))
                if frame["kind"] == "rows":
                    for row in frame["rows"]:
                        seen[row["sessionId"]] = max(seen.get(row["sessionId"], 0), row["lastSeq"])
        await in_thread(_pause, sessions=sessions)
        async with connect() as ws:
            rows = await _snapshot_rows(ws)
            assert {k: (r["lastSeq"], r["status"]) for k, r in rows.items()} == {
                str(s.pk): (4, "paused") for s in sessions
            }

    asyncio.run(main())
