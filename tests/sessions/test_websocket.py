"""The live event socket over a real daphne server and real WebSocket clients.

The test process writes events through the append service; daphne (a separate process on the
test database) streams them. Live delivery between processes needs the Redis channel layer.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import websockets
from django.db import connection
from django.test import Client

from ioa.events import payloads as p
from sessions.consumers import JOIN_RECHECK_SECONDS
from sessions.event_store import append_event, append_events
from sessions.models import ExamSession
from tests.factories import ProctorFactory
from tests.sessions.factories import (
    ExamSessionFactory,
    SittingFactory,
    event_factory,
    evidence_signal,
    exam_completed,
    guardrail,
    node_entered,
    transcript_final,
)
from tests.support.processes import asgi_server

pytestmark = [pytest.mark.services("postgres", "redis"), pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), asgi_server() as address:
        yield address


def cookie_for(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


def url(address: str, session: ExamSession, after_seq: int | None = None) -> str:
    query = "" if after_seq is None else f"?after_seq={after_seq}"
    return f"ws://{address}/ws/sessions/{session.pk}/events/{query}"


def connect(
    address: str,
    session: ExamSession,
    cookie: str | None,
    after_seq: int | None = None,
    origin: str | None = None,
) -> Any:
    headers = {"Cookie": cookie} if cookie else {}
    return websockets.connect(
        url(address, session, after_seq),
        origin=origin or f"http://{address}",  # type: ignore[arg-type]
        additional_headers=headers,
        open_timeout=15,
    )


async def frames_until(ws: Any, done: Any, timeout: float = 20) -> list[dict[str, Any]]:
    """Frames until ``done(frame)`` is true (inclusive)."""
    received: list[dict[str, Any]] = []
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        remaining = deadline - asyncio.get_running_loop().time()
        frame = json.loads(await asyncio.wait_for(ws.recv(), max(remaining, 0.01)))
        received.append(frame)
        if done(frame):
            return received


async def quiet(ws: Any, seconds: float = 1.0) -> list[dict[str, Any]]:
    """Whatever arrives within ``seconds`` (heartbeats excluded)."""
    received = []
    try:
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), seconds))
            if not (frame["kind"] == "event" and frame["event"]["type"] == "heartbeat"):
                received.append(frame)
    except TimeoutError:
        return received


def seqs(frames: list[dict[str, Any]]) -> list[int]:
    return [f["event"]["seq"] for f in frames if f["kind"] == "event" and "seq" in f["event"]]


def is_seq(n: int) -> Any:
    return lambda f: f["kind"] == "event" and f["event"].get("seq") == n


def caught_up(f: dict[str, Any]) -> bool:
    return f["kind"] == "caught_up"


def in_thread(function: Any, **kwargs: Any) -> Any:
    """Run a database call from async code in a worker thread that closes its connection."""

    def call() -> Any:
        try:
            return function(**kwargs)
        finally:
            connection.close()

    return asyncio.to_thread(call)


def write_in_background(session: ExamSession, events: list[Any], pause: float) -> threading.Thread:
    def run() -> None:
        try:
            for event in events:
                append_event(session=session.pk, event=event)
                time.sleep(pause)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_reconnecting_client_gets_exactly_the_missed_events_then_the_live_stream(
    server: str,
) -> None:
    proctor = ProctorFactory()
    session = ExamSessionFactory(sitting=SittingFactory(proctors=[proctor]))
    cookie = cookie_for(proctor)
    make = event_factory(session)
    append_events(
        session=session,
        events=[make(node_entered())] + [make(transcript_final(turn=i)) for i in range(1, 10)],
    )  # seq 1..10

    async def first_visit() -> list[dict[str, Any]]:
        async with connect(server, session, cookie, after_seq=0) as ws:
            frames = await frames_until(ws, caught_up)
            # Past the consumer's one-off re-check after joining: what follows is live.
            await asyncio.sleep(JOIN_RECHECK_SECONDS + 0.3)
            started = time.monotonic()
            writer = write_in_background(
                session, [make(transcript_final(turn=i)) for i in range(10, 13)], 0
            )
            frames += await frames_until(ws, is_seq(13))
            assert time.monotonic() - started < 3  # not the 15 s heartbeat repair
            await asyncio.to_thread(writer.join)
            return frames

    frames = asyncio.run(first_visit())
    assert seqs(frames) == list(range(1, 14))
    assert [f["kind"] for f in frames].count("caught_up") == 1
    # The backlog, then the join's presence snapshot, then caught_up (the join is over).
    assert frames[10]["kind"] == "presence"
    assert frames[11] == {"kind": "caught_up", "lastSeq": 10, "audience": "proctor"}

    # Offline: four more events.
    for i in range(13, 17):
        append_event(session=session, event=make(transcript_final(turn=i)))  # seq 14..17

    # Reconnect from seq 13 while a writer keeps appending: no gap, no duplicate.
    more = [make(transcript_final(turn=i)) for i in range(17, 57)]  # seq 18..57

    async def second_visit() -> list[dict[str, Any]]:
        writer = write_in_background(session, more, 0.005)
        await asyncio.sleep(0.05)  # connect mid-stream
        async with connect(server, session, cookie, after_seq=13) as ws:
            frames = await frames_until(ws, is_seq(57), timeout=40)
            frames += await quiet(ws, 0.5)
        await asyncio.to_thread(writer.join)
        return frames

    frames = asyncio.run(second_visit())
    assert seqs(frames) == list(range(14, 58))
    assert sum(f["kind"] == "caught_up" for f in frames) == 1


def test_a_candidate_socket_never_receives_proctor_only_events(server: str) -> None:
    proctor = ProctorFactory()
    session = ExamSessionFactory(sitting=SittingFactory(proctors=[proctor]))
    make = event_factory(session)
    events = [
        make(node_entered()),  # 1 candidate (redacted)
        make(evidence_signal()),  # 2 proctor only
        make(guardrail()),  # 3 proctor only
        make(transcript_final()),  # 4 candidate (redacted)
        make(
            p.MisconceptionDetected(
                nodeId="q1",
                misconceptionId="m1",
                description="x",
                turnIds=["turn-1"],
                confidence=0.7,
            )
        ),  # 5 proctor only
        make(
            p.ProctorInstruction(
                instructionId="i1",
                proctorId=str(proctor.pk),
                mode="queued",
                text="Probe complexity.",
            )
        ),  # 6 proctor only
        make(exam_completed()),  # 7 candidate (redacted)
    ]
    delta = event_factory(session, source="bot")(
        p.TranscriptDelta(speaker="candidate", text="so the", stability=0.5)
    )

    candidate_cookie, proctor_cookie = cookie_for(session.candidate), cookie_for(proctor)

    async def watch() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with (
            connect(server, session, candidate_cookie) as candidate,
            connect(server, session, proctor_cookie) as supervisor,
        ):
            await frames_until(candidate, caught_up)
            await frames_until(supervisor, caught_up)
            await in_thread(append_events, session=session.pk, events=events[:4])
            await in_thread(append_event, session=session.pk, event=delta)
            for event in events[4:]:
                await in_thread(append_event, session=session.pk, event=event)
            seen_by_proctor = await frames_until(supervisor, is_seq(7))
            seen_by_candidate = await frames_until(candidate, is_seq(7))
            seen_by_candidate += await quiet(candidate, 1.0)
            return seen_by_candidate, seen_by_proctor

    live_candidate, live_proctor = asyncio.run(watch())
    assert seqs(live_proctor) == [1, 2, 3, 4, 5, 6, 7]
    assert seqs(live_candidate) == [1, 4, 7]
    delta_frames = [f for f in live_candidate if f["event"]["type"] == "transcript_delta"]
    assert len(delta_frames) == 1 and "seq" not in delta_frames[0]["event"]
    for frame in live_candidate:
        payload = frame["event"]["payload"]
        assert not {"rubricItemIds", "maxFollowUps", "confidence", "nodesVisited"} & set(payload)

    async def replay_for_candidate() -> list[dict[str, Any]]:
        async with connect(server, session, candidate_cookie, after_seq=0) as ws:
            return await frames_until(ws, caught_up)

    backlog = asyncio.run(replay_for_candidate())
    assert seqs(backlog) == [1, 4, 7]
    assert [f["event"] for f in backlog[:3]] == [
        f["event"] for f in live_candidate if "seq" in f["event"]
    ]


@pytest.mark.parametrize(
    "who", ["anonymous", "other_candidate", "other_proctor", "bad_origin", "bad_after_seq"]
)
def test_handshakes_are_refused_without_saying_why(server: str, who: str) -> None:
    session = ExamSessionFactory()
    cookie: str | None = cookie_for(session.candidate)
    origin, after_seq = None, None
    if who == "anonymous":
        cookie = None
    elif who == "other_candidate":
        cookie = cookie_for(ExamSessionFactory().candidate)
    elif who == "other_proctor":
        cookie = cookie_for(ProctorFactory())
    elif who == "bad_origin":
        origin = "https://evil.example"
    elif who == "bad_after_seq":
        after_seq = "x"  # type: ignore[assignment]

    async def attempt() -> None:
        async with connect(server, session, cookie, after_seq=after_seq, origin=origin):
            pass

    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        asyncio.run(attempt())
    assert refused.value.response.status_code == 403


def test_after_seq_beyond_the_log_is_an_error_and_ping_answers_a_heartbeat(server: str) -> None:
    session = ExamSessionFactory()
    append_event(session=session, event=event_factory(session)(node_entered()))
    cookie = cookie_for(session.candidate)

    async def talk() -> tuple[dict[str, Any], dict[str, Any], int | None]:
        async with connect(server, session, cookie, after_seq=0) as ws:
            await frames_until(ws, caught_up)
            await ws.send(json.dumps({"kind": "ping"}))
            [beat] = await frames_until(ws, lambda f: f["kind"] == "event")
        async with connect(server, session, cookie, after_seq=5) as ws:
            error = json.loads(await asyncio.wait_for(ws.recv(), 10))
            with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
            return beat, error, closed.value.rcvd.code if closed.value.rcvd else None

    beat, error, code = asyncio.run(talk())
    assert beat["event"]["type"] == "heartbeat" and beat["event"]["payload"]["lastSeq"] == 1
    assert error["kind"] == "error" and error["code"] == "after_seq"
    assert code == 4400


def test_an_idle_socket_outlives_the_redis_socket_timeout(server: str) -> None:
    session = ExamSessionFactory()
    cookie = cookie_for(session.candidate)

    async def idle_then_receive() -> list[dict[str, Any]]:
        async with connect(server, session, cookie) as ws:
            await frames_until(ws, caught_up)
            await asyncio.sleep(7)
            await in_thread(
                append_event, session=session.pk, event=event_factory(session)(node_entered())
            )
            return await frames_until(ws, is_seq(1), timeout=5)

    assert seqs(asyncio.run(idle_then_receive())) == [1]
