"""The cluster's examiner capacity, as the bot hosts report it (issue #33, admission control).

Every worker process that hosts bots (``bot.hosting``) reports, at each supervisor pass
(``bot.tasks``, every ``VIVA_BOT_SUPERVISOR_SECONDS``), how many exams it may host, how many it
hosts and whether it is draining: :func:`report`, one cache entry per worker that expires after
:data:`REPORT_TTL_SECONDS` (a worker that stopped or died drops out by itself), plus an index of
the workers reported. :func:`cluster` sums the live ones. The cache is the shared Redis in the
distributed shape; in the embedded default bots run inline and nothing reports.

The room uses it to tell a waiting candidate the truth (``bot.selectors.start_queue``): every
examiner busy and their place in the queue, or no examiner running at all, instead of "taking
longer than usual" for ever.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TypedDict

from django.core.cache import cache

KEY_PREFIX: Final = "bot-host:"
INDEX_KEY: Final = "bot-hosts"
REPORT_TTL_SECONDS: Final = 30
"""How long a worker's report counts (three supervisor passes at the default 10 s)."""
INDEX_TTL_SECONDS: Final = 24 * 3600


class HostReport(TypedDict):
    capacity: int
    hosted: int
    draining: bool


@dataclass(frozen=True, slots=True)
class Cluster:
    """The live workers' capacity and load (draining ones count as no capacity)."""

    workers: int
    capacity: int
    hosted: int

    @property
    def full(self) -> bool:
        """No free place for another exam (or no worker at all)."""
        return self.hosted >= self.capacity


def report(*, worker: str, capacity: int, hosted: int, draining: bool) -> None:
    """Record this worker's capacity and load for :data:`REPORT_TTL_SECONDS`."""
    entry: HostReport = {"capacity": capacity, "hosted": hosted, "draining": draining}
    cache.set(KEY_PREFIX + worker, entry, REPORT_TTL_SECONDS)
    known = cache.get(INDEX_KEY) or []
    if worker not in known:
        cache.set(INDEX_KEY, [*known, worker][-1000:], INDEX_TTL_SECONDS)


def cluster() -> Cluster:
    """The sum over the workers whose report has not expired."""
    known: list[str] = cache.get(INDEX_KEY) or []
    reports = cache.get_many([KEY_PREFIX + w for w in known])
    live = [r for r in reports.values() if isinstance(r, dict)]
    if len(live) < len(known):  # forget the workers that stopped reporting
        alive = [w for w in known if KEY_PREFIX + w in reports]
        cache.set(INDEX_KEY, alive, INDEX_TTL_SECONDS)
    return Cluster(
        workers=len(live),
        capacity=sum(int(r["capacity"]) for r in live if not r.get("draining")),
        hosted=sum(int(r["hosted"]) for r in live),
    )
