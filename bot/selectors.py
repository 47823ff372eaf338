"""Reads about the bots' hosting (``bot.lease``): the metrics (``config.metrics``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Min, Sum

from bot.models import BotLease


@dataclass(frozen=True, slots=True)
class HostingSummary:
    """Where the exams' bots stand at one instant."""

    hosted_by_worker: dict[str, int]
    """Running bots per worker (``<runner>:<host>:<pid>``, the holder without its token)."""
    queued_starts: int
    """Starts requested and not yet taken by any worker."""
    oldest_queued_seconds: float
    """How long the oldest of those has waited (0 without any)."""
    restarts: int
    """Bots restarted after a lease expired (their worker died), summed over every session."""


def worker_of(holder: str) -> str:
    """The worker part of a lease holder (``<runner>:<host>:<pid>``)."""
    return holder.rsplit(":", 1)[0] if holder.count(":") >= 3 else holder


def hosting_summary(*, now: datetime) -> HostingSummary:
    """Running bots per worker, queued starts and their age, restarts (three small queries)."""
    running = BotLease.objects.filter(state=BotLease.State.RUNNING, expires_at__gt=now)
    hosted = Counter(worker_of(h) for h in running.values_list("holder", flat=True))
    queued = BotLease.objects.filter(state=BotLease.State.STARTING).aggregate(
        oldest=Min("requested_at")
    )
    count = BotLease.objects.filter(state=BotLease.State.STARTING).count()
    oldest = queued["oldest"]
    restarts = BotLease.objects.aggregate(total=Sum("restarts"))["total"] or 0
    return HostingSummary(
        hosted_by_worker=dict(hosted),
        queued_starts=count,
        oldest_queued_seconds=max(0.0, (now - oldest).total_seconds()) if oldest else 0.0,
        restarts=int(restarts),
    )
