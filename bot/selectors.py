"""Reads about the bots' hosting (``bot.lease``): the metrics (``config.metrics``)."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Min, Sum

from bot import capacity
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


@dataclass(frozen=True, slots=True)
class StartQueue:
    """Where a session's requested examiner stands (``None`` from :func:`start_queue` once it
    runs, or when no start was requested)."""

    position: int
    """1 for the oldest start still waiting, counting every session's."""
    waited_seconds: float
    workers: int
    """Workers that reported in the last half minute (0: no examiner is running anywhere)."""
    full: bool
    """Every reported worker hosts as many exams as it may."""


def start_queue(*, session_id: uuid.UUID | str, now: datetime) -> StartQueue | None:
    """The session's place among the starts no worker has taken yet, and the cluster's state
    (``bot.capacity``); ``None`` when its bot is not waiting for a worker."""
    key = session_id if isinstance(session_id, uuid.UUID) else uuid.UUID(str(session_id))
    lease = BotLease.objects.filter(session_id=key, state=BotLease.State.STARTING).first()
    if lease is None:
        return None
    ahead = BotLease.objects.filter(
        state=BotLease.State.STARTING, requested_at__lt=lease.requested_at
    ).count()
    state = capacity.cluster()
    return StartQueue(
        position=ahead + 1,
        waited_seconds=max(0.0, (now - lease.requested_at).total_seconds()),
        workers=state.workers,
        full=state.workers > 0 and state.full,
    )
