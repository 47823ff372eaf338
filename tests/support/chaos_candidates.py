"""Candidates of a chaos run (issue #33): each takes a whole text exam as the exam room's page
does, against the web process over HTTP and its WebSocket. The room page is loaded (it asks for
the bot), the socket is opened with ``after_seq``, every input carries an id and is sent again
until acknowledged (after a reconnect, or 4 s without an ack), and a dropped or refused socket
is reconnected with the page's back-off. What the examiner did is read from the event store
(:class:`EventFeed`), the way the page's replay would show it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
from asgiref.sync import sync_to_async
from websockets.asyncio.client import ClientConnection, connect

from tests.support.candidate_answers import ANSWERS

Events = list[dict[str, Any]]
STALL_SECONDS = 30.0
"""A candidate who sees no reply for this long reloads the room page (counted)."""


class EventFeed:
    """The stored events of the run's sessions, polled from the store every 0.1 s in one
    thread: ``events[key]`` in seq order (``seq``, ``type``, ``payload``)."""

    def __init__(self, sessions: Sequence[uuid.UUID]) -> None:
        self.sessions = list(sessions)
        self.events: dict[str, Events] = defaultdict(list)
        self.stop = asyncio.Event()
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chaos-feed")

    def _fetch(self) -> Events:
        from sessions.models import ExamSession, SessionEvent

        heads = ExamSession.objects.filter(pk__in=self.sessions).values_list("pk", "last_seq")
        moved = {str(pk): head for pk, head in heads if head > self.last_seq(str(pk))}
        if not moved:
            return []
        rows = SessionEvent.objects.filter(session_id__in=list(moved)).values(
            "session_id", "seq", "type", "payload"
        )
        out = []
        for key in moved:
            rows_of = rows.filter(session_id=key, seq__gt=self.last_seq(key)).order_by("seq")
            out += [{**r, "key": key} for r in rows_of]
        return out

    def last_seq(self, key: str) -> int:
        events = self.events[key]
        return int(events[-1]["seq"]) if events else 0

    async def query(self, function: Callable[[], Any]) -> Any:
        """Run ``function`` (database reads) on the feed's thread."""
        return await sync_to_async(function, thread_sensitive=False, executor=self.executor)()

    async def run(self) -> None:
        """Poll until :attr:`stop` is set, then close the thread's connection."""
        from django.db import connections

        try:
            while not self.stop.is_set():
                for event in await self.query(self._fetch):
                    self.events[event["key"]].append(event)
                await asyncio.sleep(0.1)
        finally:
            await self.query(connections.close_all)
            self.executor.shutdown()


def examiner_turns(events: Events) -> int:
    """Examiner utterances that are not bridges."""
    return sum(
        1
        for e in events
        if e["type"] == "examiner_utterance_final" and e["payload"].get("purpose") != "bridge"
    )


def completed(events: Events) -> bool:
    return any(e["type"] == "exam_completed" for e in events)


def node_of(events: Events) -> str:
    nodes = [e["payload"]["nodeId"] for e in events if e["type"] == "node_entered"]
    return nodes[-1] if nodes else ""


@dataclass
class Exam:
    """One candidate's exam and what happened to it on their side."""

    session_id: uuid.UUID
    cookie: str
    answers: list[tuple[float, float]] = field(default_factory=list)
    """(monotonic time the answer was sent, seconds until the examiner's next turn)."""
    acked: list[str] = field(default_factory=list)
    """Ids of the answers the server acknowledged as new (not duplicates)."""
    reconnects: int = 0
    reloads: int = 0
    ready_again: int = 0
    """How often Start was pressed again (no opening 15 s after the last press)."""
    stalls: list[str] = field(default_factory=list)
    """What the log ended with at each stall (monotonic time, last events)."""
    failure: str = ""
    seen_seq: int = 0
    """The last seq the candidate had seen when the exam ended or they gave up."""

    @property
    def key(self) -> str:
        return str(self.session_id)


class RoomSocket:
    """The room's socket: reconnects by itself; :meth:`send` returns once the input is acked."""

    def __init__(self, exam: Exam, address: str, feed: EventFeed) -> None:
        self.exam, self.address, self.feed = exam, address, feed
        self.ws: ClientConnection | None = None
        self.acks: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.ready = asyncio.Event()
        self.closed = False
        self.last_error = ""
        self.task = asyncio.create_task(self._keep_open())

    async def _keep_open(self) -> None:
        retry = 0
        while not self.closed:
            try:
                await self._session()
                retry = 0
            except Exception as exc:  # any drop or refusal: reconnect, as the page does
                self.last_error = f"{type(exc).__name__}: {exc}"
            self.ready.clear()
            if self.closed:
                return
            self.exam.reconnects += 1
            await asyncio.sleep(min(10.0, 0.5 * 2**retry))
            retry += 1

    async def _session(self) -> None:
        url = (
            f"ws://{self.address}/ws/sessions/{self.exam.session_id}/events/"
            f"?after_seq={self.feed.last_seq(self.exam.key)}"
        )
        headers = {"Cookie": self.exam.cookie}
        origin = f"http://{self.address}"
        async with connect(
            url, origin=origin, additional_headers=headers, open_timeout=10, max_size=2**22
        ) as ws:  # type: ignore[arg-type]
            self.ws = ws
            async for raw in ws:
                frame = json.loads(raw)
                if frame.get("kind") == "caught_up":
                    self.ready.set()
                elif frame.get("kind") == "ack":
                    waiting = self.acks.get(str(frame.get("id")))
                    if waiting is not None and not waiting.done():
                        waiting.set_result(frame)
        self.ws = None

    async def send(self, frame: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Send ``frame`` (given an id) until acknowledged; resent after a reconnect or 4 s."""
        input_id = frame.setdefault("id", str(uuid.uuid4()))
        ack = self.acks.setdefault(input_id, asyncio.get_running_loop().create_future())
        while time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ready.wait(), 1.0)
            ws = self.ws
            if ws is not None and self.ready.is_set():
                with contextlib.suppress(Exception):
                    await ws.send(json.dumps(frame))
                with contextlib.suppress(TimeoutError):
                    return await asyncio.wait_for(asyncio.shield(ack), 4.0)
        raise TimeoutError(f"no ack for {frame['kind']} {input_id}")

    async def close(self) -> None:
        self.closed = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await self.task


async def load_room(exam: Exam, address: str, deadline: float) -> None:
    """GET the room page until it answers 200 (a 503 or a refused connection: again in 1 s)."""
    url = f"http://{address}/exam/{exam.session_id}/room/"
    async with httpx.AsyncClient(headers={"Cookie": exam.cookie}, timeout=15) as client:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(url)).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise TimeoutError("the room page never answered 200")
            await asyncio.sleep(1.0)


async def until(
    room: RoomSocket, predicate: Callable[[Events], bool], deadline: float, what: str
) -> None:
    """Wait for ``predicate`` on the exam's events; reload the room page after each stall of
    :data:`STALL_SECONDS` (as a candidate would; counted in ``reloads``)."""
    exam, feed = room.exam, room.feed
    stalled_at = time.monotonic() + STALL_SECONDS
    while not predicate(feed.events[exam.key]):
        now = time.monotonic()
        if now > deadline:
            tail = [(e["seq"], e["type"]) for e in feed.events[exam.key][-12:]]
            raise TimeoutError(f"waited for {what}; last events {tail}")
        if now > stalled_at:
            tail = ", ".join(f"{e['seq']}:{e['type']}" for e in feed.events[exam.key][-6:])
            exam.stalls.append(f"{now:.1f}: waiting for {what}; socket {room.last_error!r}; {tail}")
            exam.reloads += 1
            await load_room(exam, room.address, deadline)
            stalled_at = now + STALL_SECONDS
        await asyncio.sleep(0.05)


def opened(events: Events) -> bool:
    return examiner_turns(events) >= 1 or completed(events)


async def start(room: RoomSocket, deadline: float) -> None:
    """As the page does: once the examiner is ready (``bot_ready``), press Start (a
    ``candidate_ready`` input); with no opening 15 s later, press it again (a new input)."""
    await until(room, lambda ev: any(e["type"] == "bot_ready" for e in ev), deadline, "bot_ready")
    while True:
        await room.send({"kind": "candidate_ready"}, deadline)
        try:
            await until(room, opened, min(deadline, time.monotonic() + 15.0), "the opening")
            return
        except TimeoutError:
            if time.monotonic() >= deadline:
                raise
            room.exam.ready_again += 1


def next_answer(events: Events, used: dict[str, int]) -> str:
    """The good candidate's next answer at the node the exam is at (the last one repeats)."""
    node = node_of(events)
    options = ANSWERS[node]
    text = options[min(used.get(node, 0), len(options) - 1)]
    used[node] = used.get(node, 0) + 1
    return text


async def take_exam(
    exam: Exam, address: str, feed: EventFeed, rng: random.Random, think: float, limit: float
) -> None:
    """The whole exam: the room page, ready, then an answer ``think`` (±50 %) seconds after each
    examiner turn until the exam completes or ``limit`` seconds pass (``exam.failure`` says
    why)."""
    deadline = time.monotonic() + limit
    room: RoomSocket | None = None
    try:
        await load_room(exam, address, deadline)
        room = RoomSocket(exam, address, feed)
        await start(room, deadline)
        used: dict[str, int] = {}
        for _ in range(40):
            events = feed.events[exam.key]
            if completed(events):
                return
            if node_of(events).startswith("end"):  # the closing words: nothing to answer
                await until(room, completed, deadline, "the end")
                return
            await asyncio.sleep(think * rng.uniform(0.5, 1.5))
            before = examiner_turns(feed.events[exam.key])
            text = next_answer(feed.events[exam.key], used)
            sent = time.monotonic()
            ack = await room.send({"kind": "answer", "text": text}, deadline)
            exam.acked.append(str(ack["id"]))  # a resent frame's ack may say duplicate
            await until(
                room,
                lambda ev, b=before: examiner_turns(ev) > b or completed(ev),
                deadline,
                f"the reply to {text[:30]!r}",
            )
            exam.answers.append((sent, time.monotonic() - sent))
        exam.failure = "no end after 40 answers"
    except Exception as exc:  # reported in the figures and asserted by the caller
        exam.failure = f"{type(exc).__name__}: {exc}"
    finally:
        exam.seen_seq = feed.last_seq(exam.key)
        if room is not None:
            await room.close()
