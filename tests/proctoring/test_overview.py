"""The sitting overview: the projection of events into rows and alerts
(``proctoring.overview``), and the overview socket over a real daphne server with the Redis
channel layer: rows and alerts arrive live, a candidate added to the roster appears."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import websockets
from django.db import connection
from django.test import Client

from ioa.events import EventFactory
from ioa.events import payloads as p
from ioa.projections import session_view
from proctoring import overview
from sessions.event_store import append_events
from sessions.models import ExamSession
from sessions.scheduling import candidate_add, invitations_send
from tests.factories import ProctorFactory
from tests.sessions.factories import ExamSessionFactory, SittingFactory
from tests.support.processes import asgi_server

T0 = datetime(2026, 5, 6, 9, 0, tzinfo=UTC)


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def wire(type_: str, when: float, seq: int, /, **payload: Any) -> dict[str, Any]:
    return {
        "eventId": f"e-{seq}",
        "sessionId": "s-1",
        "seq": seq,
        "timestamp": at(when),
        "source": "runtime_controller",
        "type": type_,
        "payload": {"type": type_, **payload},
    }


def started(view: session_view.SessionView) -> list[dict[str, Any]]:
    raised = session_view.fold(
        view,
        [
            wire(
                "bot_ready",
                0,
                1,
                examId="cs201",
                examVersion="v1",
                nodeCount=3,
                estimatedDurationSec=1200,
            ),
            wire("exam_state_changed", 1, 2, fromState="scheduled", toState="scaffolding"),
            wire("exam_state_changed", 10, 3, fromState="scaffolding", toState="ready"),
            wire("exam_state_changed", 10, 4, fromState="ready", toState="in_progress"),
            wire(
                "node_entered",
                10,
                5,
                nodeId="warmup",
                nodeKind="warmup",
                rubricItemIds=[],
                maxFollowUps=1,
                timeBudgetSec=120,
                timeBudgetMs=120_000,
            ),
        ],
    )
    return raised


def ms(seconds: float) -> int:
    return session_view.epoch_ms(at(seconds))


def test_clocks_count_active_time_and_follow_extensions() -> None:
    view = session_view.SessionView("s-1")
    started(view)
    assert view.status(invited=True, journey_started=True) is session_view.Status.IN_PROGRESS
    assert view.exam.remaining(ms(70)) == 1_200_000 - 60_000
    assert view.node.remaining(ms(70)) == 60_000
    view.apply(wire("exam_state_changed", 70, 6, fromState="in_progress", toState="paused"))
    assert view.status(invited=True, journey_started=True) is session_view.Status.PAUSED
    assert view.exam.remaining(ms(400)) == 1_200_000 - 60_000  # paused: the clocks stand
    view.apply(wire("exam_state_changed", 400, 7, fromState="paused", toState="in_progress"))
    view.apply(
        wire(
            "proctor_action",
            410,
            8,
            actor="user:1",
            action="extend_time",
            seconds=120,
            scope="node",
            remainingSec=170,
            remainingMs=170_000,
            nodeId="warmup",
        )
    )
    assert view.node.remaining(ms(420)) == 160_000
    assert view.exam.active(ms(420)) == 80_000


def test_statuses_before_the_exam_and_at_its_end() -> None:
    view = session_view.SessionView("s-1")
    assert view.status(invited=False, journey_started=False) is session_view.Status.SCHEDULED
    assert view.status(invited=True, journey_started=False) is session_view.Status.INVITED
    assert view.status(invited=True, journey_started=True) is session_view.Status.WAITING
    started(view)
    view.apply(
        wire(
            "recovery_started",
            20,
            6,
            recoveryId="rec-001",
            recoveryType="network_issue",
            nodeId="warmup",
            triggerDescription="llm fault",
        )
    )
    assert view.status(invited=True, journey_started=True) is session_view.Status.RECOVERING
    view.apply(
        wire(
            "recovery_resolved",
            25,
            7,
            recoveryId="rec-001",
            resolution="candidate_resumed",
            durationSec=5,
        )
    )
    assert view.status(invited=True, journey_started=True) is session_view.Status.IN_PROGRESS
    view.apply(wire("exam_state_changed", 30, 8, fromState="in_progress", toState="aborted"))
    assert view.status(invited=True, journey_started=True) is session_view.Status.ABORTED
    assert view.exam.since_ms is None and view.ended_ms == ms(30)


def test_alerts_draw_attention_to_what_needs_a_proctor() -> None:
    view = session_view.SessionView("s-1")
    started(view)
    events = [
        wire(
            "candidate_command_received",
            20,
            6,
            commandId="c1",
            command="raise_hand",
            commandType="raise_hand",
            accepted=True,
        ),
        wire(
            "recovery_started",
            30,
            7,
            recoveryId="rec-001",
            recoveryType="silence",
            nodeId="warmup",
            triggerDescription="20 s of silence",
        ),
        wire(
            "recovery_started",
            45,
            8,
            recoveryId="rec-001",
            recoveryType="silence",
            nodeId="warmup",
            triggerDescription="35 s of silence",
        ),
        *[
            wire(
                "guardrail_triggered",
                50 + i,
                9 + i,
                guardrailId=f"g{i}",
                guardrailType="persona_break",
                severity="block",
                description="d",
                actionTaken="output_replaced",
            )
            for i in range(4)
        ],
        wire(
            "system_error",
            60,
            13,
            code="bot_fault",
            message="the examiner bot restarted; resuming from the session log",
            component="bot",
            severity="error",
        ),
        wire(
            "candidate_command_received",
            70,
            14,
            commandId="c2",
            command="emergency_stop",
            commandType="emergency_stop",
            accepted=True,
        ),
        wire(
            "recovery_started",
            70,
            15,
            recoveryId="rec-002",
            recoveryType="candidate_distress",
            nodeId="warmup",
            triggerDescription="emergency stop requested by the candidate",
        ),
    ]
    raised = session_view.fold(view, events)
    assert [a["kind"] for a in raised] == [
        "raise_hand",
        "silence",  # once per recovery, not per attempt
        "guardrails",  # the third hit within two minutes (the fourth starts a new count)
        "bot_restart",
        "emergency_stop",
        "distress",
    ]
    assert {a["severity"] for a in raised if a["kind"] in ("emergency_stop", "distress")} == {
        "urgent"
    }
    assert view.hand_raised_ms is not None and view.bot_restarts == 1
    assert len({a["id"] for a in raised}) == len(raised)
    # A new part clears the raised hand.
    view.apply(
        wire(
            "node_entered",
            80,
            16,
            nodeId="q1",
            nodeKind="question",
            rubricItemIds=[],
            maxFollowUps=2,
            timeBudgetSec=0,
            timeBudgetMs=0,
        )
    )
    assert view.hand_raised_ms is None


def test_a_row_compares_equal_a_moment_later_while_its_clock_runs() -> None:
    view = session_view.SessionView("s-1")
    started(view)

    class Candidate:
        name, email = "Ada", "ada@example.test"

    class Row:
        pk = "00000000-0000-7000-8000-000000000001"
        candidate = Candidate()
        invited_at = T0
        identity_confirmed_at = T0
        extra_time_multiplier, text_mode_required, slower_speech = "1.00", False, False

    first = overview.row(Row(), view, overview.BotHealth("running", True), ms(100))  # type: ignore[arg-type]
    later = overview.row(Row(), view, overview.BotHealth("running", True), ms(100.2))  # type: ignore[arg-type]
    assert first["examRemainingMs"] != later["examRemainingMs"]
    assert overview.signature(first) == overview.signature(later)
    view.apply(wire("follow_up_used", 101, 6, nodeId="warmup", followUpIndex=1, maxFollowUps=1))
    changed = overview.row(Row(), view, overview.BotHealth("running", True), ms(101))  # type: ignore[arg-type]
    assert overview.signature(changed) != overview.signature(first)
    assert first["health"] == "good"


# --- the socket, live, through daphne and Redis ---------------------------------------------------


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), asgi_server() as address:
        yield address


def cookie_for(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


async def in_thread(function: Any, **kwargs: Any) -> Any:
    """Run ORM code in a worker thread and close that thread's connection afterwards."""

    def call() -> Any:
        try:
            return function(**kwargs)
        finally:
            connection.close()

    return await asyncio.to_thread(call)


async def frame_where(ws: Any, predicate: Any, timeout: float = 15) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        remaining = deadline - asyncio.get_running_loop().time()
        frame = json.loads(await asyncio.wait_for(ws.recv(), max(remaining, 0.01)))
        if predicate(frame):
            return frame


def row_of(frame: dict[str, Any], session: ExamSession) -> dict[str, Any] | None:
    return next((r for r in frame.get("rows", []) if r["sessionId"] == str(session.pk)), None)


@pytest.mark.services("postgres", "redis")
@pytest.mark.django_db(transaction=True)
def test_the_overview_socket_streams_rows_and_alerts_live(server: str) -> None:
    proctor = ProctorFactory()
    sitting = SittingFactory(proctors=[proctor])
    session = ExamSessionFactory(sitting=sitting)
    make = EventFactory(session_id=str(session.pk))
    cookie = cookie_for(proctor)

    async def main() -> None:
        async with websockets.connect(
            f"ws://{server}/ws/proctor/sittings/{sitting.pk}/",
            origin=f"http://{server}",  # type: ignore[arg-type]
            additional_headers={"Cookie": cookie},
            open_timeout=15,
        ) as ws:
            snapshot = json.loads(await asyncio.wait_for(ws.recv(), 15))
            assert snapshot["kind"] == "snapshot"
            assert row_of(snapshot, session)["status"] == "scheduled"

            # The exam starts: the row follows.
            await in_thread(
                append_events,
                session=session,
                events=[
                    make(p.ExamStateChanged(fromState="scheduled", toState="scaffolding")),
                    make(p.ExamStateChanged(fromState="scaffolding", toState="ready")),
                    make(p.ExamStateChanged(fromState="ready", toState="in_progress")),
                ],
            )
            frame = await frame_where(
                ws, lambda f: (row_of(f, session) or {}).get("status") == "in_progress"
            )
            assert row_of(frame, session)["clockRunning"] is True

            # The candidate raises a hand: an alert, at once.
            await in_thread(
                append_events,
                session=session,
                events=[
                    make(
                        p.CandidateCommandReceived(
                            commandId="c-hand",
                            command="raise_hand",
                            commandType="raise_hand",
                            accepted=True,
                        )
                    )
                ],
            )
            alert = await frame_where(ws, lambda f: f["kind"] == "alert")
            assert alert["alert"]["kind"] == "raise_hand"
            assert alert["alert"]["sessionId"] == str(session.pk)

            # A candidate added to the sitting appears, invited once the link is sent.
            added = await in_thread(
                candidate_add, sitting=sitting, email="late@example.test", display_name="Late"
            )
            frame = await frame_where(ws, lambda f: row_of(f, added) is not None)
            assert row_of(frame, added)["status"] == "scheduled"
            await in_thread(invitations_send, sitting=sitting, user=proctor, sessions=[added])
            frame = await frame_where(
                ws, lambda f: (row_of(f, added) or {}).get("status") == "invited"
            )
            assert row_of(frame, added)["candidate"] == "Late"

    asyncio.run(main())


def _silence(at: float, seq: int, recovery_id: str, node: str) -> dict[str, object]:
    return wire(
        "recovery_started",
        at,
        seq,
        recoveryId=recovery_id,
        recoveryType="silence",
        nodeId=node,
        triggerDescription="no candidate activity",
    )


def test_a_silent_candidate_is_one_alert_not_one_per_part() -> None:
    """Issue 15: four "Long silence" alerts in two minutes for one silent candidate."""
    view = session_view.SessionView("s-1")
    started(view)
    events = [
        _silence(30, 6, "rec-001", "warmup"),
        _silence(60, 7, "rec-002", "q1"),
        _silence(90, 8, "rec-003", "q2"),
        _silence(120, 9, "rec-004", "q3"),
    ]
    raised = session_view.fold(view, events)
    assert [a["kind"] for a in raised] == ["silence"]
    # Much later, a new silence is worth telling again.
    assert [a["kind"] for a in session_view.fold(view, [_silence(500, 10, "rec-005", "q4")])] == [
        "silence"
    ]


def test_the_exam_pausing_for_a_lost_connection_alerts_the_proctor() -> None:
    view = session_view.SessionView("s-1")
    started(view)
    raised = session_view.fold(
        view,
        [
            wire(
                "exam_state_changed",
                40,
                6,
                fromState="in_progress",
                toState="paused",
                reason="candidate_disconnected",
            )
        ],
    )
    assert [(a["kind"], a["severity"]) for a in raised] == [("away", "urgent")]
