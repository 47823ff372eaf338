"""Bots keep their channel-layer groups across a Redis restart (issue #33).

A bot hears its session through a group of the channel layer (``sessions.bot_channel``). The
group's members live in Redis: a Redis that restarts (without persistence, or a failover to
another host) comes back without them, and redis-py reconnects the bot's pending ``receive``
silently, so the bot would wait on a channel no group send reaches (every answer then waits for
the heartbeat's inbox poll).

One :class:`LayerWatch` per event loop (one per bot host) keeps every member listening on that
loop: every :data:`CHECK_SECONDS` it asks each Redis host for its ``run_id``. Redis unreachable
is logged once per outage and process (``sessions.layer_outage``: a warning, no traceback,
shared with the event broadcaster); Redis back, or a different ``run_id`` (a restart the
watch did not see), re-adds every member to its group and calls its ``rejoined`` callback (the
bot reads its durable inbox at once, for what was sent while it was deaf), with one log line.
Layers without Redis hosts (the in-memory layer) need no watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from sessions import layer_outage

logger = logging.getLogger(__name__)

CHECK_SECONDS: Final = 0.5
"""How often each Redis host of the layer is asked for its ``run_id``."""
CHECK_TIMEOUT_SECONDS: Final = 2.0
"""A check that takes longer counts as Redis unreachable."""


@dataclass(eq=False)
class Member:
    """One channel in one group, and what to do once it has rejoined."""

    group: str
    channel: str
    rejoined: Callable[[], Awaitable[object]] | None = None


class LayerWatch:
    """See the module docstring."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.members: set[Member] = set()
        self.down = False
        self.rejoins = 0
        self._run_ids: dict[int, str] = {}
        self._task: asyncio.Task[None] | None = None

    def add(self, member: Member) -> None:
        self.members.add(member)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._watch(), name="bot-layer-watch"
            )

    def discard(self, member: Member) -> None:
        self.members.discard(member)
        if not self.members and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _watch(self) -> None:
        while self.members:
            await asyncio.sleep(CHECK_SECONDS)
            await self.check()

    async def check(self) -> None:
        """One round (module docstring)."""
        try:
            run_ids = await self._checked_run_ids()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.down = True
            layer_outage.note_down(
                exc, f"{len(self.members)} bot(s) rejoin their groups when it is back"
            )
            return
        restarted = any(self._run_ids.get(i) not in (None, run_id) for i, run_id in run_ids.items())
        was_down = self.down
        self._run_ids = run_ids
        if not (was_down or restarted):
            return
        if await self._rejoin_all():
            return  # still unreachable for some: the next round tries again (self.down stays)
        self.down = False
        self.rejoins += 1
        logged = layer_outage.note_up(
            f"{len(self.members)} bot(s) rejoined their groups"
            + (" (Redis restarted)" if restarted else "")
        )
        if restarted and not logged:  # a restart between two rounds: nothing logged yet
            logger.warning(
                "channel layer: Redis restarted; %d bot(s) rejoined their groups",
                len(self.members),
            )

    async def _checked_run_ids(self) -> dict[int, str]:
        """The run ids, asked twice at most: a pooled connection Redis closed while it
        restarted fails once, the second ask takes a fresh one."""
        try:
            return await asyncio.wait_for(self._read_run_ids(), CHECK_TIMEOUT_SECONDS)
        except asyncio.CancelledError:
            raise
        except Exception:
            return await asyncio.wait_for(self._read_run_ids(), CHECK_TIMEOUT_SECONDS)

    async def _read_run_ids(self) -> dict[int, str]:
        run_ids: dict[int, str] = {}
        for index in range(int(getattr(self.layer, "ring_size", 0))):
            info = await self.layer.connection(index).info("server")
            run_ids[index] = str(info.get("run_id", ""))
        return run_ids

    async def _rejoin_all(self) -> int:
        failed = 0
        for member in list(self.members):
            try:
                await self.layer.group_add(member.group, member.channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                failed += 1
                self.down = True
                continue
            if member.rejoined is not None:
                with contextlib.suppress(Exception):
                    await member.rejoined()
        return failed


_watches: dict[tuple[int, int], LayerWatch] = {}


def watch_for(layer: Any) -> LayerWatch | None:
    """The watch of ``layer`` on the running loop; ``None`` for a layer without Redis hosts."""
    if not hasattr(layer, "ring_size") or not hasattr(layer, "connection"):
        return None
    key = (id(layer), id(asyncio.get_running_loop()))
    watch = _watches.get(key)
    if watch is None or watch.layer is not layer:
        watch = _watches[key] = LayerWatch(layer)
    return watch
