"""Channel-layer calls that wait while this process's Redis connection pool is exhausted.

redis-py's asyncio pool refuses a call beyond its size (``MaxConnectionsError``) instead of
queueing it, and ``channels_redis`` takes a pooled connection for every ``group_add``,
``group_send`` and ``send``. A burst (a hundred sockets opening at once, each joining its group
and telling the proctors of the candidate's presence) can exceed the pool for a moment: that is
not an outage, so the calls below retry after short pauses (:data:`POOL_WAIT_SECONDS`, about
1.5 s in all) and only then let the error through, which callers treat as one
(``web.unavailable.is_outage``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

from redis.exceptions import MaxConnectionsError

POOL_WAIT_SECONDS: Final = (0.05, 0.1, 0.2, 0.4, 0.8)
"""Pauses before each retry of a call refused for want of a pooled connection."""


async def waiting_for_pool[T](call: Callable[[], Awaitable[T]]) -> T:
    """Await ``call()``, calling it again after each pause while the pool is exhausted."""
    for pause in POOL_WAIT_SECONDS:
        try:
            return await call()
        except MaxConnectionsError:
            await asyncio.sleep(pause)
    return await call()
