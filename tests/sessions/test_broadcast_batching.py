"""The background sender's fan-out with the Redis layer (``sessions.broadcast``): a burst from
many sessions reaches each member channel as one ``session.events.batch`` message carrying
every session's messages in order, and a burst wider than the connection pool is delivered
completely instead of failing on "Too many connections"."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels_redis.core import RedisChannelLayer
from django.conf import settings

from sessions import broadcast

pytestmark = [pytest.mark.services("redis")]


def _layer(prefix: str, pool: int = 100) -> RedisChannelLayer:
    return RedisChannelLayer(
        hosts=[{"address": settings.REDIS_URL, "max_connections": pool}],
        prefix=prefix,
        capacity=1500,  # as config/settings.py: one process's channels share one Redis key
    )


@pytest.fixture
def prefix() -> Iterator[str]:
    name = f"test-batch-{uuid.uuid4().hex[:8]}"
    yield name
    async_to_sync(_layer(name).flush)()


def _message(after: int, through: int) -> broadcast.EventsMessage:
    events = [{"seq": seq} for seq in range(after + 1, through + 1)]
    return {"type": broadcast.MESSAGE_TYPE, "after": after, "through": through, "events": events}


def _send(layer: RedisChannelLayer, messages: list[broadcast.Message]) -> None:
    sender = broadcast._BackgroundSender(layer)
    done = asyncio.run_coroutine_threadsafe(sender._send(messages), sender._loop)
    done.result(30)


async def _drain(layer: RedisChannelLayer, channel: str) -> list[dict[str, Any]]:
    received = []
    while True:
        try:
            received.append(await asyncio.wait_for(layer.receive(channel), 0.5))
        except TimeoutError:
            return received


def test_a_burst_of_many_sessions_reaches_each_channel_as_one_ordered_batch(prefix: str) -> None:
    sessions = [str(uuid.uuid4()) for _ in range(60)]
    proctor = [broadcast.group_name(s, "proctor") for s in sessions]
    reader = _layer(prefix)

    async def join() -> tuple[str, str, str]:
        overview, single, idle = [await reader.new_channel() for _ in range(3)]
        for group in proctor:
            await reader.group_add(group, overview)
        await reader.group_add(proctor[0], single)
        await reader.group_add(broadcast.group_name(sessions[1], "candidate"), idle)
        return overview, single, idle

    overview, single, idle = async_to_sync(join)()
    messages = [(g, _message(0, 3)) for g in proctor] + [(g, _message(3, 7)) for g in proctor]
    _send(_layer(prefix), messages)

    async def receive() -> tuple[list[Any], list[Any], list[Any]]:
        return (
            await _drain(reader, overview),
            await _drain(reader, single),
            await _drain(reader, idle),
        )

    to_overview, to_single, to_idle = async_to_sync(receive)()
    assert [m["type"] for m in to_overview] == [broadcast.BATCH_TYPE]
    carried = to_overview[0]["messages"]
    assert len(carried) == 2 * len(sessions)
    assert carried == [m for _, m in messages]  # every session's messages, in order
    assert [m["type"] for m in to_single] == [broadcast.BATCH_TYPE]
    assert [(m["after"], m["through"]) for m in to_single[0]["messages"]] == [(0, 3), (3, 7)]
    assert to_idle == []


def test_a_burst_wider_than_the_pool_is_delivered_completely(prefix: str) -> None:
    """200 channels, each in its own group, through a pool of SEND_CONCURRENCY + 4
    connections: every one gets its message (unbounded concurrency would exhaust the pool)."""
    reader = _layer(prefix)
    groups = [broadcast.group_name(uuid.uuid4(), "proctor") for _ in range(200)]

    async def join() -> list[str]:
        channels = []
        for group in groups:
            channel = await reader.new_channel()
            await reader.group_add(group, channel)
            channels.append(channel)
        return channels

    channels = async_to_sync(join)()
    _send(
        _layer(prefix, pool=broadcast.SEND_CONCURRENCY + 4), [(g, _message(0, 2)) for g in groups]
    )

    async def receive() -> list[Any]:
        return [await asyncio.wait_for(reader.receive(c), 5) for c in channels]

    received = async_to_sync(receive)()
    assert all(m["messages"] == [_message(0, 2)] for m in received)
