"""Publish stored events to live clients, after commit (EVT-010: persist, then publish).

Events go to one Channels group per session and live audience (:func:`group_name`):
``exam-session.<hex>.candidate`` and ``exam-session.<hex>.proctor``. A message is::

    {"type": "session.events", "after": A, "through": B, "events": [<projected envelopes>]}

meaning: "these are all the events this audience may see with ``A < seq <= B``". Events the
audience may not see are simply left out, and a range in which it sees nothing is not sent at
all; the next message's ``after`` then reaches back over it. ``after`` only reaches back as far
as this process published the session contiguously; when another process published seqs in
between (or this process has just started), ``after`` is the run's first seq minus one, and a
consumer that has not seen that far reads the missing range from the store. Live-only events
(``transcript_delta``) travel as ``after: None, through: None``.

Delivery is best effort; the store is authoritative and reconnecting clients catch up with
``after_seq``. With the Redis layer, published events are handed to one background thread per
process that owns an event loop: it drains everything queued, coalesces it per session and
audience, skips groups known to have no member (answers cached for :data:`MEMBERSHIP_TTL`: a
client that joins later reads the committed events from the store while catching up, and its
consumer re-reads the head once shortly after joining), reads the members of the rest (one
pipelined round trip per Redis shard) and sends **one** message per member channel::

    {"type": "session.events.batch", "messages": [<session.events message>...]}

carrying every message of the batch for the groups that channel is in, each group's in order
(consumers handle it in ``session_events_batch``, one ``session_events`` after another). So a
proctor overview following 500 sessions receives one channel message per batch, not one per
session, and a burst costs a bounded number of Redis calls: at most :data:`SEND_CONCURRENCY`
are in flight at once, below the layer's connection pool (``VIVA_CHANNEL_REDIS_POOL_SIZE``,
docs/configuration.md), which refuses calls beyond its size. Batches gather for
:data:`COALESCE_SECONDS` (2 ms) before they are sent. Appenders never wait on Redis. Other
layers get one ``group_send`` per message (groups concurrently, each in order). With the
in-memory layer (embedded mode, one process), messages are sent with ``async_to_sync``, which
runs them on the ASGI server's loop when called from a request or consumer thread.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import logging
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Protocol, TypedDict, runtime_checkable

from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer
from redis.asyncio import Redis

from ioa.events import LIVE_AUDIENCES, Audience, project
from sessions import layer_outage
from web.unavailable import is_outage

logger = logging.getLogger(__name__)

MESSAGE_TYPE = "session.events"
"""Channels message type; consumers handle it in ``session_events``."""

BATCH_TYPE = "session.events.batch"
"""Channels message type of the background sender's per-channel batches (module docstring);
consumers handle it in ``session_events_batch``."""

SEND_CONCURRENCY = 16
"""The most channel-layer sends the background sender has in flight at once (the layer's
connection pool must be larger: ``VIVA_CHANNEL_REDIS_POOL_SIZE``)."""

COALESCE_SECONDS = 0.002
"""How long the background sender lets published events gather before sending a batch: a
few milliseconds of latency buy far fewer Redis round trips under load."""

MEMBERSHIP_TTL = 0.5
"""Seconds the background sender trusts its answer to "does this group have members?". A
client that joins a group believed empty reads every committed event while catching up, and
the next message it receives reaches back over anything skipped (its ``after``), so the cache
can delay, never lose, an event."""

TRACKED_SESSIONS = 10_000
"""Sessions whose publishing position a process remembers (least recently used dropped)."""


class EventsMessage(TypedDict):
    """A ``session.events`` message (module docstring): the wire envelopes an audience may see
    with ``after < seq <= through`` (both ``None`` for live-only events)."""

    type: str
    after: int | None
    through: int | None
    events: list[Mapping[str, object]]


class EventsBatch(TypedDict):
    """A ``session.events.batch`` message: ``session.events`` messages for one channel, in
    order within each group."""

    type: str
    messages: list[EventsMessage]


Message = tuple[str, EventsMessage]
"""A message and the group it goes to."""
Batch = tuple[str, Sequence[Mapping[str, object]]]
"""Wire envelopes one session published together."""


@runtime_checkable
class _RedisGroups(Protocol):
    """The internals of ``channels_redis``' layer that :meth:`_BackgroundSender._recipients`
    reads (group membership is a sorted set per group, on a consistent-hash shard, scored by
    the time of joining; members older than ``group_expiry`` seconds count as gone)."""

    group_expiry: int

    async def send(self, channel: str, message: Mapping[str, object]) -> None: ...

    def consistent_hash(self, value: str) -> int: ...

    def connection(self, index: int) -> Redis: ...

    def _group_key(self, group: str) -> bytes: ...


def event_seq(event: Mapping[str, object]) -> int:
    """A stored event's ``seq``."""
    seq = event["seq"]
    if not isinstance(seq, int):
        raise TypeError(f"a stored event's seq is an int, not {seq!r}")
    return seq


def group_name(session_id: uuid.UUID | str, audience: Audience | str) -> str:
    """The Channels group of one session and audience."""
    return _group_name(str(session_id), str(audience))


@functools.lru_cache(maxsize=4096)
def _group_name(session_id: str, audience: str) -> str:
    return f"exam-session.{uuid.UUID(session_id).hex}.{Audience(audience).value}"


class Planner:
    """Turns published events into group messages, remembering per session how far this
    process has published contiguously (see the module docstring)."""

    def __init__(self, capacity: int = TRACKED_SESSIONS) -> None:
        self._capacity = capacity
        # session -> (last seq published, {audience: `after` of its next message})
        self._positions: OrderedDict[str, tuple[int, dict[Audience, int]]] = OrderedDict()

    def plan(self, session_id: str, events: Iterable[Mapping[str, object]]) -> list[Message]:
        groups = {audience: group_name(session_id, audience) for audience in LIVE_AUDIENCES}
        messages: list[Message] = []
        live = [e for e in events if e.get("seq") is None]
        stored = sorted((e for e in events if e.get("seq") is not None), key=event_seq)
        for audience, group in groups.items():
            visible: list[Mapping[str, object]] = [
                w for w in (project(e, audience) for e in live) if w is not None
            ]
            if visible:
                messages.append((group, _message(None, None, visible)))
        if not stored:
            return messages
        last, pending = self._positions.pop(session_id, (-1, {}))
        for run in _runs(stored):
            first, through = event_seq(run[0]), event_seq(run[-1])
            if first != last + 1:  # not contiguous with what this process published
                pending = {audience: first - 1 for audience in LIVE_AUDIENCES}
            for audience, group in groups.items():
                shown: list[Mapping[str, object]] = [
                    w for w in (project(e, audience) for e in run) if w is not None
                ]
                if shown:
                    messages.append((group, _message(pending[audience], through, shown)))
                    pending[audience] = through
            last = through
        self._positions[session_id] = (last, pending)
        while len(self._positions) > self._capacity:
            self._positions.popitem(last=False)
        return messages


def _message(
    after: int | None, through: int | None, events: list[Mapping[str, object]]
) -> EventsMessage:
    return {"type": MESSAGE_TYPE, "after": after, "through": through, "events": events}


def _runs(stored: list[Mapping[str, object]]) -> list[list[Mapping[str, object]]]:
    """Split seq-ordered events into runs of consecutive seqs."""
    runs: list[list[Mapping[str, object]]] = []
    for event in stored:
        if runs and event_seq(event) == event_seq(runs[-1][-1]) + 1:
            runs[-1].append(event)
        elif runs and event_seq(event) == event_seq(runs[-1][-1]):
            continue
        else:
            runs.append([event])
    return runs


def _merge(messages: list[Message]) -> list[Message]:
    """Join consecutive messages of a group whose ranges touch (fewer sends under load)."""
    merged: dict[str, list[EventsMessage]] = {}
    order: list[Message] = []
    for group, message in messages:
        previous = merged.get(group)
        after, reached = message["after"], previous[-1]["through"] if previous else None
        if previous and after is not None and reached is not None and after <= reached:
            last = previous[-1]
            last["events"] = last["events"] + message["events"]
            last["through"] = message["through"]
            continue
        copy = message.copy()
        merged.setdefault(group, []).append(copy)
        order.append((group, copy))
    return order


class _BackgroundSender:
    """One daemon thread with its own event loop: collects published batches for
    :data:`COALESCE_SECONDS`, plans them and sends them in FIFO order."""

    def __init__(self, layer: BaseChannelLayer) -> None:
        self.layer = layer
        self._planner = Planner()
        self._members: dict[str, tuple[float, bool]] = {}
        self._loop = asyncio.new_event_loop()
        self._items: deque[Batch | Future[None]] = deque()
        self._scheduled = False
        self._wake: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="event-broadcast", daemon=True)
        self._thread.start()
        self._ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._wake = asyncio.Event()
        self._ready.set()
        self._loop.run_until_complete(self._worker())

    async def _worker(self) -> None:
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.sleep(COALESCE_SECONDS)  # let a burst gather into one batch
            self._scheduled = False
            items: list[Batch | Future[None]] = []
            while self._items:
                items.append(self._items.popleft())
            messages: list[Message] = []
            waiters: list[Future[None]] = []
            for item in items:
                if isinstance(item, Future):
                    waiters.append(item)
                else:
                    messages += self._planner.plan(*item)
            try:
                await self._send(_merge(messages))
            except Exception as exc:  # best effort: clients repair from the store
                _failed(exc, len(messages))
            else:
                _sent()
            for waiter in waiters:
                waiter.set_result(None)

    async def _send(self, messages: list[Message]) -> None:
        """One batch message per member channel (Redis layer), or one ``group_send`` per
        message (other layers); in order within each group, at most :data:`SEND_CONCURRENCY`
        calls in flight."""
        if not messages:
            return
        gate = asyncio.Semaphore(SEND_CONCURRENCY)
        layer = self.layer
        if isinstance(layer, _RedisGroups):
            members = await self._recipients({group for group, _ in messages})
            per_channel: dict[str, list[EventsMessage]] = {}
            for group, message in messages:
                for channel in members.get(group, ()):
                    per_channel.setdefault(channel, []).append(message)

            async def deliver(channel: str, batch: list[EventsMessage]) -> None:
                async with gate:
                    message = {"type": BATCH_TYPE, "messages": batch}
                    await _retried(lambda: layer.send(channel, message))

            sends = [deliver(c, b) for c, b in per_channel.items()]
        else:
            per_group: dict[str, list[EventsMessage]] = {}
            for group, message in messages:
                per_group.setdefault(group, []).append(message)

            async def send_in_order(group: str, batch: list[EventsMessage]) -> None:
                async with gate:
                    for message in batch:
                        await _retried(functools.partial(layer.group_send, group, message))

            sends = [send_in_order(g, b) for g, b in per_group.items()]
        for result in await asyncio.gather(*sends, return_exceptions=True):
            if isinstance(result, BaseException):
                if is_outage(result):
                    raise result
                logger.error("broadcast to a channel failed: %r", result)

    async def _recipients(self, groups: set[str]) -> dict[str, list[str]]:
        """The member channels of each group. Groups found empty less than
        :data:`MEMBERSHIP_TTL` ago are skipped; the rest are read with one pipelined round
        trip per Redis shard (expired members dropped first, as ``group_send`` does)."""
        layer = self.layer
        assert isinstance(layer, _RedisGroups)
        now = time.monotonic()
        by_shard: dict[int, list[str]] = {}
        for group in groups:
            known = self._members.get(group)
            if known is None or known[0] <= now or known[1]:
                by_shard.setdefault(layer.consistent_hash(group), []).append(group)
        found: dict[str, list[str]] = {}
        oldest = int(time.time()) - layer.group_expiry
        for shard, names in by_shard.items():

            async def read(shard: int = shard, names: list[str] = names) -> list[Any]:
                pipe = layer.connection(shard).pipeline(transaction=False)
                for name in names:
                    pipe.zremrangebyscore(layer._group_key(name), min=0, max=oldest)
                    pipe.zrange(layer._group_key(name), 0, -1)
                return list(await pipe.execute())

            answers = await _retried(read)
            for name, channels in zip(names, answers[1::2], strict=True):
                found[name] = [c.decode() for c in channels]
                self._members[name] = (now + MEMBERSHIP_TTL, bool(channels))
        if len(self._members) > 4 * TRACKED_SESSIONS:
            self._members = {g: v for g, v in self._members.items() if v[0] > now}
        return found

    def submit(self, item: Batch | Future[None]) -> None:
        """Queue a batch (or a flush marker); wakes the loop only if it is not already due."""
        self._items.append(item)
        if not self._scheduled:
            self._scheduled = True
            assert self._wake is not None
            self._loop.call_soon_threadsafe(self._wake.set)

    def flush(self, timeout: float) -> bool:
        done: Future[None] = Future()
        self.submit(done)
        try:
            done.result(timeout)
        except TimeoutError:
            return False
        return True


_sender: _BackgroundSender | None = None
_sender_lock = threading.Lock()
_inline_planner = Planner()


def _background_sender(layer: BaseChannelLayer) -> _BackgroundSender:
    """This process's sender for ``layer``, started on first use (a new one if the layer was
    replaced). The lock is taken only to start one: every append publishes."""
    global _sender
    sender = _sender
    if sender is not None and sender.layer is layer:
        return sender
    with _sender_lock:
        if _sender is None or _sender.layer is not layer:
            _sender = _BackgroundSender(layer)
            atexit.register(_sender.flush, 5.0)
        return _sender


def publish_events(session_id: uuid.UUID | str, events: Sequence[Mapping[str, object]]) -> None:
    """Publish wire envelopes of one session to its audience groups. Call after commit."""
    if not events:
        return
    layer = get_channel_layer()
    if layer is None:
        return
    key = str(session_id)
    if not isinstance(layer, InMemoryChannelLayer):
        _background_sender(layer).submit((key, list(events)))
        return
    with _sender_lock:
        messages = _inline_planner.plan(key, events)

    async def send_all() -> None:
        for group, message in messages:
            await layer.group_send(group, message)

    try:
        async_to_sync(send_all)()
    except Exception as exc:
        _failed(exc, len(messages))
    else:
        _sent()


async def _retried[T](call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, and once more at once when the layer could not be reached: a pooled
    connection that Redis closed while it restarted fails once, and the retry takes a fresh one
    (a Redis still down fails the retry too, at once)."""
    try:
        return await call()
    except Exception as exc:
        if not is_outage(exc):
            raise
        return await call()


def _failed(exc: BaseException, count: int) -> None:
    if is_outage(exc):  # logged once per outage (sessions.layer_outage), not per batch
        layer_outage.note_down(exc, "pages catch up from the store")
    else:
        logger.error("broadcast of %d message(s) failed", count, exc_info=exc)


def _sent() -> None:
    layer_outage.note_up()


def flush(timeout: float = 5.0) -> bool:
    """Wait until everything handed to the background sender has been sent (tests, exit)."""
    sender = _sender
    return True if sender is None else sender.flush(timeout)
