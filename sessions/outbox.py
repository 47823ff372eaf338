"""The transactional outbox: the side effects of stored facts, never lost (issue #33;
docs/operations.md "Side effects").

A fact (an ``exam_completed`` event, marks locked, a result released, a proctor's irregularity
report) has consequences that leave the transaction that stored it: marking the exam, posting
the grade to the LMS, telling integrators by webhook. Each consequence is one
:class:`~sessions.models.OutboxMessage`, written **in the same transaction as the fact**
(:func:`enqueue`), so the fact never exists without it and a rolled-back fact leaves none.

* **Topics.** The app that carries a consequence out registers one handler per topic in its
  ``AppConfig.ready()`` (:func:`register`): ``marking.mark_session``, ``lti.post_grade``,
  ``webhooks.emit``... A handler takes the message's JSON payload, does its work in the
  relay's transaction and must be idempotent (it may run again after a crash between its
  work and the message's mark; the key below keeps one message per consequence).
* **Keys.** ``(topic, key)`` is unique: the idempotency key of the consequence (the session for
  marking, the event id for a report, the audit entry for a grade post), so a fact told twice
  (a re-delivered append, a receiver run again) is one message.
* **Event facts.** The event store cannot know its readers: an app asks to hear of event types
  (:func:`watch`); an append with such an event runs in a transaction and calls the watchers
  with the new events, inside it (:func:`record_facts`), where they :func:`enqueue`.
* **Delivery.** Once the transaction commits, the relay task is asked to deliver the message
  (``sessions.tasks.deliver_outbox_message``, on the queue its topic was registered with;
  inline in the embedded default, where Celery is eager). If the broker is down at that moment
  nothing is lost: the message waits, and :func:`relay_due` (``manage.py relay_outbox``, run
  every few seconds by the operator's scheduler, or ``--loop``) delivers every message that is
  due. A failed handler is tried again
  after :func:`retry_delay` (5 s doubling to 1 h); after :data:`MAX_ATTEMPTS` the message is
  ``dead``: kept, visible in the admin with its last error, sent again by the admin action.
  Delivered messages are deleted after :data:`KEEP_DELIVERED`.
* **Reconciliation.** Apps register sweeps (:func:`register_sweep`) that find facts without
  their consequence (a completed exam without a marking request, from before the outbox or
  from a lost message) and enqueue it; :func:`relay_due` runs them first.

Lock order: the message row is locked (``SELECT ... FOR UPDATE SKIP LOCKED``) before anything a
handler writes; two relays never run one message at once.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
from django.db.models import Count
from django.utils import timezone

from sessions.models import OutboxMessage

logger = logging.getLogger(__name__)

Handler = Callable[[Mapping[str, object]], None]
"""Carries one message's consequence out, from its payload; raises to be tried again."""
FactWriter = Callable[[uuid.UUID, Sequence[Mapping[str, object]]], None]
"""Enqueues the consequences of newly stored events (their wire form, with ``seq``)."""
Sweep = Callable[[datetime], int]
"""Finds facts without their consequence and enqueues it; returns how many."""
Kick = Callable[[int, str], None]
"""Asks the relay to deliver one message now on a queue (``sessions.tasks``); may raise (broker
down)."""

MAX_ATTEMPTS: Final = 12
"""Attempts before a message is ``dead`` (about 8 hours of back-off)."""
FIRST_RETRY_SECONDS: Final = 5
LONGEST_RETRY_SECONDS: Final = 3600
RELAY_BATCH: Final = 200
"""The most messages one :func:`relay_due` pass delivers."""
KEEP_DELIVERED: Final = timedelta(days=30)
"""How long a delivered message is kept (for the admin and the audit) before a relay pass
deletes it; pending and dead ones are never deleted."""


@dataclass(frozen=True, slots=True)
class _Watch:
    types: frozenset[str]
    writer: FactWriter


_handlers: dict[str, Handler] = {}
_queues: dict[str, str] = {}
_watches: dict[str, _Watch] = {}
_watched_types: list[frozenset[str]] = [frozenset()]
"""Every type some app watches (kept with :func:`watch`: :func:`watched` runs on every append)."""
_sweeps: dict[str, Sweep] = {}
_kick: list[Kick] = []


class UnknownTopic(LookupError):
    """A message whose topic no app registered a handler for (a removed app, a typo)."""


def register(topic: str, handler: Handler, *, queue: str = "default") -> None:
    """``handler`` carries out the messages of ``topic`` (called from ``AppConfig.ready()``),
    on the workers of Celery ``queue`` (marking's on ``marking``, the rest on ``default``)."""
    _handlers[topic] = handler
    _queues[topic] = queue


def watch(name: str, types: Iterable[str], writer: FactWriter) -> None:
    """Call ``writer`` inside the transaction of every append that stores an event of one of
    ``types``, with those new events (``name`` keeps one registration per caller)."""
    _watches[name] = _Watch(frozenset(types), writer)
    _watched_types[0] = frozenset().union(*(w.types for w in _watches.values()))


def register_sweep(name: str, sweep: Sweep) -> None:
    """Run ``sweep`` at the start of every :func:`relay_due` pass."""
    _sweeps[name] = sweep


def set_kick(kick: Kick | None) -> Kick | None:
    """How a committed message is handed to the relay (``sessions.apps`` sets
    ``sessions.tasks.hand_over``; ``None``: not handed over, the messages wait for
    :func:`relay_due`); returns the previous one."""
    previous = _kick[0] if _kick else None
    _kick[:] = [kick] if kick is not None else []
    return previous


def watched(types: Iterable[str]) -> bool:
    """Whether any app hears of one of these event types (the event store then appends in a
    transaction and calls :func:`record_facts`)."""
    heard = _watched_types[0]
    return any(t in heard for t in types)


def record_facts(session_id: uuid.UUID, events: Sequence[Mapping[str, object]]) -> None:
    """Tell each watcher of the new events of its types (inside the append's transaction)."""
    for watch_ in _watches.values():
        mine = [e for e in events if e.get("type") in watch_.types]
        if mine:
            watch_.writer(session_id, mine)


def enqueue(*, topic: str, key: str, payload: Mapping[str, object]) -> bool:
    """Write the message for ``(topic, key)`` in the current transaction (a no-op if it exists:
    ``False``); once the transaction commits, the relay is asked to deliver it. Raises
    ``TransactionManagementError`` outside a transaction: a consequence is written with its
    fact, never after it."""
    if not connections[DEFAULT_DB_ALIAS].in_atomic_block:
        raise transaction.TransactionManagementError(
            f"outbox message {topic} {key}: enqueue inside the transaction that stores its fact"
        )
    try:
        with transaction.atomic():
            message = OutboxMessage.objects.create(topic=topic, key=key, payload=dict(payload))
    except IntegrityError:
        return False
    transaction.on_commit(lambda: _hand_over(message.pk, topic), robust=True)
    return True


def _hand_over(message_id: int, topic: str) -> None:
    if not _kick:
        return
    try:
        _kick[0](message_id, _queues.get(topic, "default"))
    except Exception as exc:  # the broker is down: the message waits for relay_due
        logger.warning("outbox message %s waits for the relay: %s", message_id, exc)


def retry_delay(attempts: int) -> timedelta:
    """How long after its ``attempts``-th failure a message is tried again."""
    seconds = FIRST_RETRY_SECONDS * 2 ** max(0, attempts - 1)
    return timedelta(seconds=min(seconds, LONGEST_RETRY_SECONDS))


def deliver(message_id: int, *, now: datetime | None = None) -> str:
    """Carry one pending message out; returns ``delivered``, ``retry``, ``dead``, or ``skipped``
    (delivered already, dead, or being delivered by another relay)."""
    moment = now or timezone.now()
    with transaction.atomic():
        message = (
            OutboxMessage.objects.select_for_update(skip_locked=True)
            .filter(pk=message_id, status=OutboxMessage.Status.PENDING)
            .first()
        )
        if message is None:
            return "skipped"
        message.attempts += 1
        try:
            with transaction.atomic():
                handler = _handlers.get(message.topic)
                if handler is None:
                    raise UnknownTopic(f"no handler for topic {message.topic!r}")
                handler(message.payload)
        except Exception as exc:
            return _failed(message, exc, moment)
        message.status = OutboxMessage.Status.DELIVERED
        message.delivered_at = moment
        message.last_error = ""
        message.save(update_fields=["status", "delivered_at", "attempts", "last_error"])
        return "delivered"


def _failed(message: OutboxMessage, exc: Exception, now: datetime) -> str:
    message.last_error = f"{type(exc).__name__}: {exc}"[:2000]
    if message.attempts >= MAX_ATTEMPTS:
        message.status = OutboxMessage.Status.DEAD
        logger.error("outbox message %s (%s) is dead: %s", message.pk, message.topic, exc)
    else:
        message.next_attempt_at = now + retry_delay(message.attempts)
        logger.warning(
            "outbox message %s (%s) failed (attempt %s): %s",
            message.pk,
            message.topic,
            message.attempts,
            exc,
        )
    message.save(update_fields=["status", "attempts", "last_error", "next_attempt_at"])
    return "dead" if message.status == OutboxMessage.Status.DEAD else "retry"


@dataclass(frozen=True, slots=True)
class RelayPass:
    """What one :func:`relay_due` pass did."""

    swept: int
    outcomes: dict[str, int]
    pruned: int = 0
    """Delivered messages older than :data:`KEEP_DELIVERED` deleted."""


def relay_due(*, now: datetime | None = None) -> RelayPass:
    """Run the sweeps, then deliver every pending message that is due: first attempts whose
    hand-over was lost (the broker was down) or has not run yet, and retries whose time has
    come. A message a worker is delivering at that moment is locked and skipped; one it
    delivered meanwhile is no longer pending: nothing runs twice."""
    moment = now or timezone.now()
    swept = sum(sweep(moment) for sweep in _sweeps.values())
    due = (
        OutboxMessage.objects.filter(
            status=OutboxMessage.Status.PENDING, next_attempt_at__lte=moment
        )
        .order_by("next_attempt_at", "id")
        .values_list("pk", flat=True)[:RELAY_BATCH]
    )
    outcomes: dict[str, int] = {}
    for message_id in list(due):
        outcome = deliver(message_id, now=moment)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return RelayPass(swept=swept, outcomes=outcomes, pruned=_prune(moment))


def _prune(now: datetime) -> int:
    """Delete delivered messages older than :data:`KEEP_DELIVERED` (a bounded batch per pass)."""
    old = OutboxMessage.objects.filter(
        status=OutboxMessage.Status.DELIVERED, delivered_at__lt=now - KEEP_DELIVERED
    ).values_list("pk", flat=True)[:RELAY_BATCH]
    deleted, _ = OutboxMessage.objects.filter(pk__in=list(old)).delete()
    return deleted


def send_again(*, message_ids: Iterable[int], now: datetime | None = None) -> int:
    """Make dead (or pending) messages due at once with a fresh set of attempts (the admin
    action); returns how many."""
    moment = now or timezone.now()
    return OutboxMessage.objects.filter(
        pk__in=list(message_ids),
        status__in=[OutboxMessage.Status.DEAD, OutboxMessage.Status.PENDING],
    ).update(status=OutboxMessage.Status.PENDING, attempts=0, next_attempt_at=moment)


@dataclass(frozen=True, slots=True)
class Backlog:
    """The outbox at one instant, for the operator's metrics."""

    pending_by_topic: dict[str, int]
    dead_by_topic: dict[str, int]
    oldest_pending_seconds: float
    """How long the oldest pending message has waited since it was written (0 without any)."""


def backlog(*, now: datetime) -> Backlog:
    """Pending and dead messages per topic, and the age of the oldest pending one."""
    counts = (
        OutboxMessage.objects.exclude(status=OutboxMessage.Status.DELIVERED)
        .values_list("topic", "status")
        .annotate(n=Count("id"))
    )
    pending: dict[str, int] = {}
    dead: dict[str, int] = {}
    for topic, status, n in counts:
        (pending if status == OutboxMessage.Status.PENDING else dead)[topic] = n
    oldest = (
        OutboxMessage.objects.filter(status=OutboxMessage.Status.PENDING)
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    age = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
    return Backlog(pending_by_topic=pending, dead_by_topic=dead, oldest_pending_seconds=age)
