"""The consumer's catch-up and gap repair, in-process (any channel layer, any database)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import connection

from ioa.events import project
from sessions import broadcast
from sessions.broadcast import MESSAGE_TYPE, group_name
from sessions.event_store import append_events
from sessions.routing import websocket_urlpatterns
from tests.factories import ProctorFactory
from tests.sessions.factories import (
    ExamSessionFactory,
    SittingFactory,
    event_factory,
    evidence_signal,
    node_entered,
    transcript_final,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def open_socket(user: Any, session: Any, after_seq: int = 0) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/sessions/{session.pk}/events/?after_seq={after_seq}"
    )
    communicator.scope["user"] = user
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    return communicator


async def close_thread_connection() -> None:
    """Close the connection of the thread the consumer's database calls ran in."""

    def close() -> None:
        connection.close()

    await sync_to_async(close, thread_sensitive=True)()


async def drain(communicator: WebsocketCommunicator, seconds: float = 0.5) -> list[dict[str, Any]]:
    """Every frame until the socket stays quiet for ``seconds``."""
    frames = []
    while not await communicator.receive_nothing(timeout=seconds):
        frames.append(await communicator.receive_json_from(timeout=5))
    return frames


def test_backlog_then_gap_repair_then_duplicates_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    proctor = ProctorFactory()
    session = ExamSessionFactory(sitting=SittingFactory(proctors=[proctor]))
    make = event_factory(session)
    monkeypatch.setattr(broadcast, "publish_events", lambda *a, **k: None)  # nothing goes live
    append_events(
        session=session,
        events=[make(node_entered()), make(evidence_signal()), make(transcript_final())],
    )

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        socket = await open_socket(session.candidate, session)
        backlog = await drain(socket)
        # Two events are stored but their publication is lost; the third is published.
        stored = await database_sync_to_async(append_events)(
            session=session.pk,
            events=[
                make(transcript_final(turn=2)),
                make(evidence_signal(signal="s2")),
                make(transcript_final(turn=3)),
            ],
        )
        last = stored.events[-1].wire
        layer = get_channel_layer()
        group = group_name(session.pk, "candidate")
        message = {
            "type": MESSAGE_TYPE,
            "after": 5,
            "through": 6,
            "events": [project(last, "candidate")],
        }
        await layer.group_send(group, message)
        live = await drain(socket)
        await layer.group_send(group, message)  # a duplicate delivery
        live += await drain(socket)
        await socket.disconnect()
        await close_thread_connection()
        return backlog, live

    backlog, live = asyncio.run(scenario())
    assert [f["event"]["seq"] for f in backlog if f["kind"] == "event"] == [1, 3]
    assert backlog[-1] == {"kind": "caught_up", "lastSeq": 3, "audience": "candidate"}
    assert [f["event"]["seq"] for f in live] == [4, 6]  # 4 repaired from the store, 5 hidden


def test_a_user_who_may_not_see_the_session_is_refused() -> None:
    session = ExamSessionFactory()
    stranger = ExamSessionFactory().candidate

    async def attempt() -> bool:
        communicator = WebsocketCommunicator(
            URLRouter(websocket_urlpatterns), f"/ws/sessions/{session.pk}/events/"
        )
        communicator.scope["user"] = stranger
        connected, _ = await communicator.connect(timeout=10)
        await close_thread_connection()
        return connected

    assert asyncio.run(attempt()) is False


def test_candidate_ready_outside_the_start_window_is_refused_and_reaches_no_bot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    sent: list[str] = []

    async def record(session_id: Any, kind: str, **kwargs: Any) -> None:
        sent.append(kind)

    monkeypatch.setattr("sessions.bot_channel.send_to_bot", record)
    later = timezone.now() + timedelta(hours=3)
    session = ExamSessionFactory(sitting=SittingFactory(scheduled_for=later))

    async def scenario() -> list[dict[str, Any]]:
        communicator = await open_socket(session.candidate, session)
        await drain(communicator)
        await communicator.send_json_to({"kind": "candidate_ready"})
        frames = await drain(communicator)
        await communicator.disconnect()
        await close_thread_connection()
        return frames

    frames = asyncio.run(scenario())
    errors = [f for f in frames if f.get("kind") == "error"]
    assert errors and errors[0]["code"] == "window_closed"
    assert sent == []
