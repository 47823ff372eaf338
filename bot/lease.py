"""One live bot per session: the lease protocol (no Pipecat; synchronous, call from a thread).

* :func:`request_start` — ``bot_start`` marks the lease ``starting`` (idempotent: a live or
  recently requested bot is left alone) and says whether a bot should be launched.
* :func:`acquire` — a bot takes the lease under ``SELECT ... FOR UPDATE``; refused while another
  holder's lease is live or when the session is over. Taking over an expired ``running`` lease
  counts a restart (the previous bot died).
* :func:`renew` — the heartbeat: one conditional ``UPDATE`` that only matches the holder's own
  generation. ``False`` means the lease was lost (expired and taken over): stop at once.
* :func:`release` — the bot stopped: ``finished`` (exam over), ``released`` (may restart) or
  ``failed``.
* :func:`claim_expired` — the supervisor: leases whose bot died, for sessions that are not over,
  are marked ``starting`` again (each claimed once) so a new bot can be launched.
* :func:`queue_start` / :func:`take_queued` — admission control (issue #33): a start that found
  its worker full waits in the database (``starting``, holder :data:`QUEUED`), never circulating
  between full workers; a worker with a free place takes the oldest waiting starts, in the order
  they were requested (the place the room shows: ``bot.selectors.start_queue``).

Two bots can never both hold a live lease: acquisition is serialised by the row lock and the
heartbeat cannot renew a generation that is no longer current. Writes to the session log are
fenced too (``append_events(expected_version=...)``), so even a bot that has not yet noticed it
lost its lease cannot write after its successor.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from bot.models import BotLease
from ioa.events import TERMINAL_STATES
from sessions.models import ExamSession

TERMINAL: frozenset[str] = frozenset(s.value for s in TERMINAL_STATES)


QUEUED = "queued"
"""The holder of a start that waits for a free place (:func:`queue_start`)."""
QUEUED_TTL = timedelta(days=1)
"""A waiting start is not a lost one: the supervisor does not relaunch it before this."""


@dataclass(frozen=True, slots=True)
class Lease:
    """A held lease: the session, who holds it and which generation."""

    session_id: uuid.UUID
    holder: str
    generation: int
    runner: str
    restarts: int = 0


class LeaseRefused(Exception):
    """Another bot holds a live lease on the session, or the session needs no bot."""

    def __init__(self, session_id: uuid.UUID | str, reason: str) -> None:
        super().__init__(f"session {session_id}: {reason}")
        self.reason = reason


def new_holder(runner: str) -> str:
    """A unique holder name: ``<runner>:<host>:<pid>:<token>``."""
    return f"{runner}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"[:200]


def _row(session_id: uuid.UUID) -> tuple[BotLease, bool]:
    """The lease row, locked, and whether it was just created. Call inside ``atomic``."""
    created = False
    try:
        with transaction.atomic():
            _, created = BotLease.objects.get_or_create(session_id=session_id)
    except IntegrityError:  # created concurrently: fine, lock it below
        created = False
    return BotLease.objects.select_for_update().get(session_id=session_id), created


def _session_state(session_id: uuid.UUID) -> str:
    state = ExamSession.objects.filter(pk=session_id).values_list("state", flat=True).first()
    if state is None:
        raise LeaseRefused(session_id, "no such session")
    return str(state)


def request_start(*, session_id: uuid.UUID, runner: str, grace_seconds: float) -> bool:
    """Record a start request; ``True`` when a bot should be launched now.

    ``False`` when the session is over, a bot holds a live lease, or a start was requested less
    than ``grace_seconds`` ago and no bot has taken it yet (so ``bot_start`` is idempotent)."""
    with transaction.atomic():
        if _session_state(session_id) in TERMINAL:
            return False
        row, created = _row(session_id)
        now = timezone.now()
        if row.state == BotLease.State.FINISHED:
            return False
        pending = row.state in (BotLease.State.RUNNING, BotLease.State.STARTING)
        if pending and row.expires_at > now and not created:
            return False
        if row.state == BotLease.State.RUNNING and row.holder:
            row.holder = f"dead:{row.holder}"[:200]  # its heartbeat stopped: the bot died
        row.state = BotLease.State.STARTING
        row.runner = runner
        row.requested_at = now
        row.expires_at = now + timedelta(seconds=grace_seconds)
        row.bot_ready_ms = None
        row.save()
        return True


def acquire(
    *, session_id: uuid.UUID, holder: str, runner: str, ttl_seconds: float, provider: str = ""
) -> Lease:
    """Take the session's lease or raise :class:`LeaseRefused`."""
    with transaction.atomic():
        state = _session_state(session_id)
        row, _ = _row(session_id)
        if state in TERMINAL or row.state == BotLease.State.FINISHED:
            if row.state != BotLease.State.FINISHED:
                row.state = BotLease.State.FINISHED
                row.ended_at = row.ended_at or timezone.now()
                row.save()
            raise LeaseRefused(session_id, "the exam is over")
        now = timezone.now()
        if row.state == BotLease.State.RUNNING and row.expires_at > now and row.holder != holder:
            raise LeaseRefused(session_id, f"a live bot holds the session ({row.holder})")
        # The previous bot died if it never released: its lease ran out while running, or the
        # supervisor (or a new start request) marked it dead.
        died = (row.state == BotLease.State.RUNNING and row.holder != holder) or (
            row.holder.startswith("dead:")
        )
        row.state = BotLease.State.RUNNING
        row.holder = holder
        row.runner = runner
        row.generation += 1
        row.restarts += 1 if died else 0
        row.acquired_at = now
        row.heartbeat_at = now
        row.expires_at = now + timedelta(seconds=ttl_seconds)
        row.provider = provider[:64]
        row.ended_at = None
        row.last_error = ""
        row.save()
        return Lease(session_id, holder, row.generation, runner, row.restarts)


_renewed: dict[tuple[uuid.UUID, int], float] = {}
"""When this process last renewed each lease it holds (monotonic seconds), so a second renewer
of the same lease (``bot.runners``' keeper beside the session's heartbeat) can skip its turn."""


def renewed_within(lease: Lease, seconds: float) -> bool:
    """Whether this process renewed ``lease`` in the last ``seconds``."""
    at = _renewed.get((lease.session_id, lease.generation))
    return at is not None and time.monotonic() - at < seconds


def renew(lease: Lease, *, ttl_seconds: float) -> bool:
    """Extend the lease (the heartbeat); ``False`` if it is no longer this bot's."""
    now = timezone.now()
    updated = BotLease.objects.filter(
        session_id=lease.session_id,
        holder=lease.holder,
        generation=lease.generation,
        state=BotLease.State.RUNNING,
    ).update(
        heartbeat_at=now,
        expires_at=now + timedelta(seconds=ttl_seconds),
        beats=F("beats") + 1,
    )
    if updated == 1:
        _renewed[(lease.session_id, lease.generation)] = time.monotonic()
    return updated == 1


def holds(lease: Lease) -> bool:
    """Whether ``lease`` is still the session's live lease."""
    return BotLease.objects.filter(
        session_id=lease.session_id,
        holder=lease.holder,
        generation=lease.generation,
        state=BotLease.State.RUNNING,
        expires_at__gt=timezone.now(),
    ).exists()


def record_ready(lease: Lease) -> None:
    """Store the time from the start request to now (the bot is ready), once per request."""
    row = BotLease.objects.filter(
        session_id=lease.session_id, holder=lease.holder, generation=lease.generation
    ).first()
    if row is None or row.bot_ready_ms is not None:
        return
    elapsed = timezone.now() - row.requested_at
    BotLease.objects.filter(pk=row.pk, generation=lease.generation).update(
        bot_ready_ms=max(0, int(elapsed.total_seconds() * 1000))
    )


def release(lease: Lease, *, state: str, error: str = "") -> bool:
    """Give the lease up with its final ``state``; ``False`` if it was not held any more."""
    _renewed.pop((lease.session_id, lease.generation), None)
    updated = BotLease.objects.filter(
        session_id=lease.session_id, holder=lease.holder, generation=lease.generation
    ).update(
        state=state,
        expires_at=timezone.now(),
        ended_at=timezone.now(),
        last_error=error[:4000],
    )
    return updated == 1


def queue_start(session_id: uuid.UUID) -> bool:
    """The session's start found no free place: it waits (``starting``, holder
    :data:`QUEUED`) and keeps its place. ``False`` when it needs no bot any more (a bot took
    the lease, or the exam is over)."""
    with transaction.atomic():
        row = BotLease.objects.select_for_update().filter(session_id=session_id).first()
        if row is None or row.state != BotLease.State.STARTING:
            return False
        if _session_state(session_id) in TERMINAL:
            return False
        row.holder = QUEUED
        row.expires_at = timezone.now() + QUEUED_TTL
        row.save(update_fields=["holder", "expires_at"])
        return True


def take_queued(*, limit: int, grace_seconds: float) -> list[uuid.UUID]:
    """Up to ``limit`` waiting starts, oldest request first, for the caller to host now: each
    is taken once (its holder cleared, ``grace_seconds`` to be acquired before the supervisor
    counts it lost). Starts of exams that are over are left out."""
    if limit <= 0:
        return []
    now = timezone.now()
    with transaction.atomic():
        rows = list(
            BotLease.objects.select_for_update(skip_locked=True)
            .filter(state=BotLease.State.STARTING, holder=QUEUED)
            .exclude(session__state__in=sorted(TERMINAL))
            .order_by("requested_at")[:limit]
        )
        for row in rows:
            row.holder = ""
            row.expires_at = now + timedelta(seconds=grace_seconds)
            row.save(update_fields=["holder", "expires_at"])
    return [row.session_id for row in rows]


def claim_expired(*, grace_seconds: float, limit: int = 100) -> list[uuid.UUID]:
    """Sessions whose bot died (lease ``running`` or ``starting`` and expired) and that are not
    over: each is marked ``starting`` again and returned once, for the caller to launch."""
    now = timezone.now()
    claimed: list[uuid.UUID] = []
    with transaction.atomic():
        rows = (
            BotLease.objects.select_for_update(skip_locked=True)
            .filter(
                state__in=[BotLease.State.RUNNING, BotLease.State.STARTING],
                expires_at__lte=now,
            )
            .exclude(session__state__in=sorted(TERMINAL))
            .order_by("expires_at")[:limit]
        )
        for row in rows:
            # Only a running bot whose heartbeat stopped died; a ``starting`` lease is a start
            # no bot took up yet (or one a draining host handed back): no restart is counted.
            died = row.state == BotLease.State.RUNNING
            if died:
                row.requested_at = now  # a lost start keeps its place in the queue
            row.state = BotLease.State.STARTING
            row.expires_at = now + timedelta(seconds=grace_seconds)
            if died and row.holder and not row.holder.startswith("dead:"):
                row.holder = f"dead:{row.holder}"[:200]
            row.save()
            claimed.append(row.session_id)
    return claimed
