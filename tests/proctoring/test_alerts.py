"""Alerts a proctor can read (issue #31): repeated occurrences of one kind on one session (and,
for guardrails, of one guardrail type) are one alert, updated in place with a count and the
latest time — in the read model folded from the log, over the overview socket, and in the
snapshot a reconnecting proctor (or the REST API) gets."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import websockets

from ioa.events import EventFactory
from ioa.events import payloads as p
from ioa.projections import session_view
from proctoring import overview
from sessions.event_store import append_events
from sessions.models import Sitting
from tests.factories import ProctorFactory
from tests.proctoring.test_overview import at, cookie_for, frame_where, in_thread, started, wire
from tests.sessions.factories import ExamSessionFactory, SittingFactory, exam_started
from tests.support.processes import asgi_server


def guardrail(when: float, seq: int, kind: str = "blocked_action") -> dict[str, Any]:
    """A stored ``guardrail_triggered`` (a refused completion, as the looping exam made)."""
    return wire(
        "guardrail_triggered",
        when,
        seq,
        guardrailId=f"g{seq}",
        guardrailType=kind,
        severity="block",
        description="completion refused: required evidence missing",
        actionTaken="event_only",
    )


def test_n_identical_guardrails_are_one_alert_with_a_count_and_the_latest_time() -> None:
    view = session_view.SessionView("s-1")
    started(view)
    hits = [guardrail(20 + i, 6 + i) for i in range(12)]  # one a second, as the loop did
    session_view.fold(view, hits)
    (alert,) = [a for a in view.alerts if a["kind"] == "guardrails"]
    assert alert["count"] == 12
    assert alert["at"] == at(31) and alert["firstAt"] == at(20)
    assert alert["id"] == "s-1:guardrails:blocked_action"
    assert "blocked_action" in alert["detail"]
    assert len(view.alerts) == 1


def test_each_guardrail_type_is_its_own_alert_and_a_lone_hit_none() -> None:
    view = session_view.SessionView("s-1")
    started(view)
    events = [
        guardrail(20, 6, "persona_break"),  # alone: no alert
        *(guardrail(30 + i, 7 + i) for i in range(3)),
        *(guardrail(40 + i, 10 + i, "command_refused") for i in range(4)),
        guardrail(50, 14),
    ]
    session_view.fold(view, events)
    counts = {a["id"]: a["count"] for a in view.alerts}
    assert counts == {"s-1:guardrails:blocked_action": 4, "s-1:guardrails:command_refused": 4}


def test_apply_returns_the_alert_updated_in_place_and_fold_each_alert_once() -> None:
    view = session_view.SessionView("s-1")
    started(view)
    assert session_view.fold(view, [guardrail(20, 6), guardrail(21, 7)]) == []
    (first,) = view.apply(guardrail(22, 8))
    (second,) = view.apply(guardrail(23, 9))
    assert first["id"] == second["id"] and (first["count"], second["count"]) == (3, 4)
    raised = session_view.fold(view, [guardrail(24 + i, 10 + i) for i in range(5)])
    assert [(a["id"], a["count"]) for a in raised] == [(first["id"], 9)]


def test_other_kinds_are_keyed_by_session_and_kind() -> None:
    view = session_view.SessionView("s-1")
    started(view)
    hand = {"command": "raise_hand", "commandType": "raise_hand", "accepted": True}
    session_view.fold(
        view,
        [
            wire("candidate_command_received", 20, 6, commandId="c1", **hand),
            wire("candidate_command_received", 40, 7, commandId="c2", **hand),
            wire("candidate_command_received", 60, 8, commandId="c3", **hand),
        ],
    )
    (alert,) = view.alerts
    assert (alert["id"], alert["count"], alert["at"]) == ("s-1:raise_hand", 3, at(60))


def test_the_alerts_are_rebuilt_the_same_from_the_log() -> None:
    events = [guardrail(20 + i, 6 + i) for i in range(7)]
    one, two = session_view.SessionView("s-1"), session_view.SessionView("s-1")
    started(one)
    started(two)
    session_view.fold(one, events)
    session_view.fold(two, events)
    assert list(one.alerts) == list(two.alerts)


# --- the store, the socket -----------------------------------------------------------------------


def _guardrails(session: Any, n: int) -> None:
    make = EventFactory(session_id=str(session.pk))
    for _ in range(n):  # one append each, as the bot stores them
        append_events(
            session=session,
            events=[
                make(
                    p.GuardrailTriggered(
                        guardrailId="g",
                        guardrailType="blocked_action",
                        severity="block",
                        description="completion refused: required evidence missing",
                        actionTaken="event_only",
                    )
                )
            ],
        )


@pytest.mark.django_db
def test_the_snapshot_from_the_store_has_one_alert_with_the_count() -> None:
    session = ExamSessionFactory()
    append_events(session=session, events=exam_started(session))
    _guardrails(session, 6)
    _rows, alerts = overview.sitting_snapshot(Sitting.objects.get(pk=session.sitting_id))
    assert [(a["kind"], a["count"]) for a in alerts] == [("guardrails", 6)]


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), asgi_server() as address:
        yield address


@pytest.mark.services("postgres", "redis")
@pytest.mark.django_db(transaction=True)
def test_the_overview_socket_updates_one_alert_in_place(server: str) -> None:
    proctor = ProctorFactory()
    sitting = SittingFactory(proctors=[proctor])
    session = ExamSessionFactory(sitting=sitting)
    cookie = cookie_for(proctor)
    url = f"ws://{server}/ws/proctor/sittings/{sitting.pk}/"

    def connect() -> Any:
        return websockets.connect(
            url, origin=f"http://{server}", additional_headers={"Cookie": cookie}, open_timeout=15
        )

    async def main() -> None:
        await in_thread(append_events, session=session, events=exam_started(session))
        async with connect() as ws:
            assert json.loads(await asyncio.wait_for(ws.recv(), 15))["kind"] == "snapshot"
            await in_thread(_guardrails, session=session, n=8)
            alerts: list[dict[str, Any]] = []
            while not alerts or alerts[-1]["count"] < 8:
                frame = await frame_where(ws, lambda f: f["kind"] == "alert")
                alerts.append(frame["alert"])
            assert {a["id"] for a in alerts} == {f"{session.pk}:guardrails:blocked_action"}
            counts = [a["count"] for a in alerts]
            assert counts == sorted(set(counts)) and counts[0] >= 3
        async with connect() as ws:
            snapshot = json.loads(await asyncio.wait_for(ws.recv(), 15))
            assert [(a["kind"], a["count"]) for a in snapshot["alerts"]] == [("guardrails", 8)]

    asyncio.run(main())
