"""The append service: the only way events are written.

:func:`append_events` takes a session, a batch of events (``EventEnvelope`` objects or
received JSON objects) and an optional expected version (the session's ``last_seq`` the caller
last saw), and:

1. validates every event against the EVT rules (``ioa.events.check_event``), checks that each
   names this session, and applies EVT-003 (node-scoped events need an earlier
   ``node_entered``). Any violation refuses the whole batch: nothing of it is stored, a
   ``system_error`` event describing the violations is appended instead, and
   :class:`EventsRefused` is raised;
2. drops events whose ``eventId`` the session already stored (E7: re-delivery is a no-op that
   returns the stored event) and repeats inside the batch;
3. assigns ``seq`` (``last_seq + 1``, gap-free, starting at 1) and the chain hash (under the
   session's ``chain_version``: version 2 hashes personal fields as keyed seals,
   ``ioa.events.personal``, so they can be erased later) while holding
   the session row's lock, inserts the rows and moves the session's head
   (``last_seq``, ``head_hash``, and ``state`` for ``exam_state_changed``) in the same
   transaction. Unique constraints on ``(session, event_id)`` and ``(session, seq)`` back this
   up. Only the one session row is locked: unrelated sessions never wait on each other;
4. when an app hears of one of the batch's event types (``sessions.outbox.watch``: marking of
   ``exam_completed``, webhooks...), runs the append in a transaction and, inside it, lets it
   write the consequences as outbox messages (``sessions.outbox.record_facts``): the fact and
   its consequences commit together, and a broker outage at that moment loses nothing;
5. after commit, appends the new head to the session's anchor outside the database
   (``sessions.chain_anchor``: a keyed MAC, checked by ``verify_session_log``), publishes the
   stored events (and any live-only ones of the batch, which are
   never stored and carry no seq) to the session's audience groups (``sessions.broadcast``),
   and sends ``sessions.signals.events_appended`` with the newly stored events (and
   ``session_completed`` when ``exam_completed`` is among them), whichever path stored them
   (the bot's journal or the proctor service's direct recording): live views and other
   best-effort listeners subscribe there; nothing above is imported from here.

On Postgres a single persisted event outside a transaction takes one round trip: one prepared
statement updates the session row (which locks it; a concurrent appender waits and then sees
the new head), computing seq and the chain hash (``ioa.events.link_hash`` in SQL, keeping the
previous head in ``prev_head_hash``), and inserts the event row from the returned head.
Concurrent such appends of one process to different sessions share that statement and its
commit (group commit, ``sessions.postgres_append``).
Batches and calls inside an outer transaction (the bot's journal) take two prepared statements
in a transaction (a savepoint inside an outer one): ``SELECT ... FOR UPDATE`` of the head with
the batch's already-stored ids, then one ``INSERT ... SELECT FROM unnest(...)`` of the new rows
that also moves the head. SQLite takes the same steps through the ORM (the general path).
Lock order everywhere: the session row first, then its events and commands, then outbox
messages.

Inside an outer transaction, the ``system_error`` of a refused batch shares that
transaction's fate.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

from ioa.events import (
    EventEnvelope,
    EventFactory,
    EventSource,
    EventType,
    EventValidationError,
    Violation,
    body_digest,
    check_causal_order,
    check_event,
    link_hash,
    spec_for,
)
from ioa.events.payloads import ExamStateChanged, NodeEntered, SystemErrorPayload
from ioa.events.personal import CHAIN_V2, chain_digest, personal_fields
from ioa.events.registry import NODE_SCOPED_TYPES
from ioa.events.rules import SCHEMA, node_scope
from sessions import broadcast, chain_anchor, outbox, postgres_append, signals
from sessions.models import ExamSession, SessionEvent
from sessions.selectors import wire_from_row


class EventStoreError(Exception):
    """Base class of the append service's errors."""


class SessionNotFound(EventStoreError, LookupError):
    """The session does not exist."""


class VersionConflict(EventStoreError):
    """``expected_version`` is not the session's ``last_seq``; nothing was stored."""

    def __init__(self, *, expected: int, actual: int) -> None:
        self.expected, self.actual = expected, actual
        super().__init__(f"expected version {expected}, the session is at {actual}")


class EventsRefused(EventValidationError):
    """The batch broke the EVT rules; nothing of it was stored. ``system_error`` is the
    stored event that records the refusal."""

    def __init__(self, violations: Sequence[Violation], system_error: StoredEvent) -> None:
        super().__init__(violations)
        self.system_error = system_error


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One event of an append's result: the envelope as stored (with ``seq``), its chain
    hashes, and whether it had been stored before (``duplicate``). Live-only events have
    ``seq``, ``hash`` and ``prev_hash`` set to ``None``."""

    wire: dict[str, Any]  # Any: EventEnvelope.to_wire (pydantic model_dump) is typed so
    seq: int | None
    hash: str | None
    prev_hash: str | None
    duplicate: bool = False

    @property
    def event_id(self) -> str:
        return str(self.wire["eventId"])

    @property
    def type(self) -> str:
        return str(self.wire["type"])


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What an append did, in batch order (repeats inside the batch removed), and the
    session's head afterwards (``last_seq`` -1 and ``head_hash`` "" when the batch held only
    live-only events, which touch no head)."""

    events: tuple[StoredEvent, ...]
    last_seq: int
    head_hash: str

    @property
    def appended(self) -> tuple[StoredEvent, ...]:
        """Events stored by this call."""
        return tuple(e for e in self.events if e.seq is not None and not e.duplicate)

    @property
    def duplicates(self) -> tuple[StoredEvent, ...]:
        """Events that were already stored (nothing new was written for them)."""
        return tuple(e for e in self.events if e.duplicate)


def _session_key(session: ExamSession | uuid.UUID | str) -> uuid.UUID:
    if isinstance(session, ExamSession):
        return session.pk
    return session if isinstance(session, uuid.UUID) else uuid.UUID(str(session))


def _validate(
    session_id: uuid.UUID, events: Sequence[EventEnvelope | Mapping[str, object]]
) -> tuple[list[EventEnvelope], list[Violation]]:
    """EVT-001/002/004..009/011, schema, and sessionId checks; repeats in the batch dropped."""
    expected = str(session_id)
    envelopes: list[EventEnvelope] = []
    seen: set[str] = set()
    problems: list[Violation] = []
    for item in events:
        if isinstance(item, EventEnvelope):
            envelope: EventEnvelope | None = item
        else:
            envelope, found = check_event(item)
            problems.extend(found)
        if envelope is None:
            continue
        if envelope.sessionId != expected:
            problems.append(
                Violation(
                    SCHEMA,
                    "sessionId",
                    f"{envelope.sessionId!r} is not this session ({expected})",
                    envelope.eventId,
                )
            )
            continue
        if envelope.eventId not in seen:
            seen.add(envelope.eventId)
            envelopes.append(envelope.with_seq(None) if envelope.seq else envelope)
    return envelopes, problems


def _entered_nodes(session_id: uuid.UUID, envelopes: Sequence[EventEnvelope]) -> set[str]:
    """Node ids the batch's node-scoped events need that the session already entered."""
    needed = {
        node
        for e in envelopes
        if e.type in NODE_SCOPED_TYPES and (node := node_scope(e)) is not None
    }
    needed -= {e.payload.nodeId for e in envelopes if isinstance(e.payload, NodeEntered)}
    if not needed:
        return set()
    found = SessionEvent.objects.filter(
        session_id=session_id, type=EventType.NODE_ENTERED.value, payload__nodeId__in=sorted(needed)
    ).values_list("payload__nodeId", flat=True)
    return set(found)


def append_events(
    *,
    session: ExamSession | uuid.UUID | str,
    events: Sequence[EventEnvelope | Mapping[str, object]],
    expected_version: int | None = None,
) -> AppendResult:
    """Append a batch to a session's log (see the module docstring for the guarantees).

    Raises :class:`EventsRefused` (EVT violations; a ``system_error`` was stored instead),
    :class:`VersionConflict` (``expected_version`` is stale; nothing stored) or
    :class:`SessionNotFound`.
    """
    session_id = _session_key(session)
    envelopes, problems = _validate(session_id, events)
    if not problems and any(e.type in NODE_SCOPED_TYPES for e in envelopes):
        problems = check_causal_order(
            envelopes, entered_node_ids=_entered_nodes(session_id, envelopes)
        )
    if problems:
        _refuse(session_id, problems)

    db = connections[DEFAULT_DB_ALIAS]
    in_transaction = db.in_atomic_block
    persisted = [e for e in envelopes if spec_for(e.type).persisted]
    if not persisted:  # live-only events: published, never stored
        live = tuple(StoredEvent(e.to_wire(), None, None, None) for e in envelopes)
        _after_commit(session_id, live, head=None, in_transaction=in_transaction)
        return AppendResult(events=live, last_seq=-1, head_hash="")

    has_facts = outbox.watched(e.type for e in persisted)
    if has_facts and not in_transaction:
        # Facts with consequences (sessions.outbox): the events and their outbox messages
        # commit together. Validated above; the batch path below runs inside the transaction.
        with transaction.atomic():
            return append_events(
                session=session_id, events=envelopes, expected_version=expected_version
            )

    if len(persisted) == 1 and db.vendor == "postgresql" and not in_transaction:
        stored_one, last_seq, head = _append_one_postgres(
            db, session_id, persisted[0], expected_version
        )
        stored: dict[str, StoredEvent] = {stored_one.event_id: stored_one}
    elif db.vendor == "postgresql":
        stored, last_seq, head = _append_batch_postgres(db, session_id, persisted, expected_version)
    else:
        stored, last_seq, head = _append_locked(session_id, persisted, expected_version)

    ordered = tuple(
        stored[e.eventId] if e.eventId in stored else StoredEvent(e.to_wire(), None, None, None)
        for e in envelopes
    )
    new_head = (last_seq, head) if any(not s.duplicate for s in stored.values()) else None
    if has_facts:
        outbox.record_facts(session_id, [e.wire for e in ordered if e.seq and not e.duplicate])
    _after_commit(session_id, ordered, head=new_head, in_transaction=in_transaction)
    return AppendResult(events=ordered, last_seq=last_seq, head_hash=head)


def append_event(
    *,
    session: ExamSession | uuid.UUID | str,
    event: EventEnvelope | Mapping[str, object],
    expected_version: int | None = None,
) -> StoredEvent:
    """Append one event; see :func:`append_events`."""
    return append_events(session=session, events=[event], expected_version=expected_version).events[
        0
    ]


def _after_commit(
    session_id: uuid.UUID,
    events: Sequence[StoredEvent],
    *,
    head: tuple[int, str] | None,
    in_transaction: bool,
) -> None:
    """Once the append has committed (at once in autocommit, where the statement has committed
    already; on commit inside a transaction): anchor the new ``head`` (``chain_anchor``),
    publish the new and live-only events, and tell the apps above of the newly stored ones
    (``sessions.signals``: ``events_appended``, and ``session_completed`` when
    ``exam_completed`` is among them)."""
    fresh = [e.wire for e in events if not e.duplicate]
    appended = tuple(e for e in events if e.seq and not e.duplicate)
    if head is None and not fresh and not appended:
        return

    def committed() -> None:
        if head is not None:
            chain_anchor.anchor_head(session_id=session_id, seq=head[0], head=head[1])
        if fresh:
            broadcast.publish_events(session_id, fresh)
        if appended:
            signals.send_now(signals.events_appended, session_id=session_id, events=appended)
            if any(e.type == EventType.EXAM_COMPLETED for e in appended):
                signals.send_now(signals.session_completed, session_id=session_id)

    if in_transaction:
        transaction.on_commit(committed)
    else:
        committed()


def _refuse(session_id: uuid.UUID, problems: Sequence[Violation]) -> None:
    """Store a system_error describing the violations, then raise :class:`EventsRefused`."""
    rules = sorted({v.rule for v in problems})
    refused = sorted({v.event_id for v in problems if v.event_id})
    make = EventFactory(session_id=str(session_id), source=EventSource.SYSTEM)
    error = make(
        SystemErrorPayload(
            code="events_refused",
            message=f"{len(problems)} violation(s) of {', '.join(rules)}; nothing stored",
            component="event_store",
            severity="error",
            ruleIds=rules,
            refusedEventIds=refused[:100],
            details={"violations": [v.as_dict() for v in problems[:50]]},
        )
    )
    system_error = append_events(session=session_id, events=[error]).events[0]
    raise EventsRefused(problems, system_error)


# --- the Postgres fast path ---------------------------------------------------------------------

_CHAIN_VERSIONS: dict[uuid.UUID, int] = {}
"""Sessions' chain versions as last returned by an append (a session's ``chain_version`` is
fixed when it is created and never written again), so an append computes only the digest its
session's chain links. Bounded by :data:`_CHAIN_VERSIONS_KEPT`."""

_CHAIN_VERSIONS_KEPT: Final = 4096


def _new_state(envelope: EventEnvelope) -> str | None:
    """The exam state an ``exam_state_changed`` event moves the session to."""
    if isinstance(envelope.payload, ExamStateChanged):
        return envelope.payload.toState.value
    return None


def _final_state(envelopes: Sequence[EventEnvelope], state: str) -> str:
    """The state after ``envelopes``: the last ``exam_state_changed``'s, else ``state``."""
    return next((new for e in reversed(envelopes) if (new := _new_state(e))), state)


def _append_one_postgres(
    db: BaseDatabaseWrapper, session_id: uuid.UUID, envelope: EventEnvelope, expected: int | None
) -> tuple[StoredEvent, int, str]:
    """One statement in autocommit, shared with concurrent appends to other sessions
    (``sessions.postgres_append``): lock, seq, hash, head, insert."""
    wire = envelope.to_wire()
    digest, sealed = _digests(session_id, wire)
    params = {
        "digest": digest,
        "sealed": sealed,
        "expected": expected,
        "state": _new_state(envelope),
        "event_id": envelope.eventId,
        "type": envelope.type.value,
        "timestamp": envelope.timestamp_datetime,
        "source": envelope.source.value,
        "correlation": envelope.correlationId or "",
        "payload": postgres_append.compact_json(wire["payload"]),
        "schema": envelope.schemaVersion,
    }
    row = postgres_append.GROUPS.append(db, session_id, params)
    if row is None:
        return _diagnose(session_id, envelope, expected)
    if len(_CHAIN_VERSIONS) >= _CHAIN_VERSIONS_KEPT:
        _CHAIN_VERSIONS.clear()
    _CHAIN_VERSIONS[session_id] = row.chain_version
    stored = StoredEvent({**wire, "seq": row.seq}, row.seq, row.hash, row.prev_hash)
    return stored, row.seq, row.hash


def _digests(session_id: uuid.UUID, wire: Mapping[str, Any]) -> tuple[str, str]:
    """The event's digests under chain versions 1 and 2 (the statement links the one its
    session's version names); only the needed one is computed when the version is known.
    ``wire`` is ``EventEnvelope.to_wire()``'s: plain JSON, so the canonical form skips its
    round-trip check (``ioa.canonical.plain_canonical_bytes``)."""
    version = _CHAIN_VERSIONS.get(session_id)
    key = chain_anchor.seal_key()
    if version is not None and version >= CHAIN_V2:
        sealed = chain_digest(wire, version=version, key=key, plain=True)
        return sealed, sealed
    digest = body_digest(wire, plain=True)  # version 1; 2 differs only for personal fields
    if version is not None or not personal_fields(wire):
        return digest, digest
    return digest, chain_digest(wire, version=CHAIN_V2, key=key, plain=True)


def _diagnose(
    session_id: uuid.UUID, envelope: EventEnvelope, expected: int | None
) -> tuple[StoredEvent, int, str]:
    """Nothing was inserted: the event was already stored, the version was stale, or the
    session does not exist."""
    head = ExamSession.objects.filter(pk=session_id).values_list("last_seq", "head_hash").first()
    if head is None:
        raise SessionNotFound(f"no exam session {session_id}")
    existing = SessionEvent.objects.filter(session_id=session_id, event_id=envelope.eventId).first()
    if existing is not None:
        return _stored_from_row(existing, duplicate=True), head[0], head[1]
    if expected is not None and expected != head[0]:
        raise VersionConflict(expected=expected, actual=head[0])
    raise EventStoreError(f"event {envelope.eventId} was not stored")  # pragma: no cover


_LOCK_HEAD_SQL = """
SELECT s.last_seq, s.head_hash, s.state, s.chain_version,
       ARRAY(SELECT e.event_id::text FROM exam_sessions_sessionevent e
             WHERE e.session_id = s.id AND e.event_id = ANY(%(ids)s::uuid[]))
FROM exam_sessions_examsession s
WHERE s.id = %(session)s
FOR UPDATE OF s
"""

_INSERT_BATCH_SQL = """
WITH inserted AS (
    INSERT INTO exam_sessions_sessionevent
        (session_id, seq, event_id, type, timestamp, source, correlation_id, payload,
         schema_version, hash, prev_hash)
    SELECT %(session)s, *
    FROM unnest(%(seq)s::bigint[], %(event_id)s::uuid[], %(type)s::varchar[],
                %(timestamp)s::timestamptz[], %(source)s::varchar[], %(correlation)s::varchar[],
                %(payload)s::jsonb[], %(schema)s::varchar[], %(hash)s::varchar[],
                %(prev)s::varchar[])
)
UPDATE exam_sessions_examsession
SET last_seq = %(last_seq)s, head_hash = %(head)s, prev_head_hash = %(prev_head)s,
    state = %(state)s, updated_at = now()
WHERE id = %(session)s
"""


def _append_batch_postgres(
    db: BaseDatabaseWrapper,
    session_id: uuid.UUID,
    envelopes: Sequence[EventEnvelope],
    expected: int | None,
) -> tuple[dict[str, StoredEvent], int, str]:
    """The general path's guarantees in two prepared statements (a savepoint or transaction
    around them): lock the head and find stored ids, then insert the rows and move the head."""
    prepare = postgres_append.prepared()
    with (
        transaction.atomic(),
        db.wrap_database_errors,
        postgres_append.server_cursor(db) as cursor,
    ):
        ids = [e.eventId for e in envelopes]
        cursor.execute(_LOCK_HEAD_SQL, {"ids": ids, "session": session_id}, prepare=prepare)
        head = cursor.fetchone()
        if head is None:
            raise SessionNotFound(f"no exam session {session_id}")
        last_seq, prev, state, version = head[:4]
        stored = _stored_rows(session_id, head[4])
        fresh = [e for e in envelopes if e.eventId not in stored]
        if not fresh:
            return stored, last_seq, prev
        if expected is not None and expected != last_seq:
            raise VersionConflict(expected=expected, actual=last_seq)
        batch = _ChainedBatch.link(fresh, last_seq=last_seq, prev=prev, version=version)
        stored.update(batch.stored)
        params = {
            **batch.columns,
            "session": session_id,
            "last_seq": batch.last_seq,
            "head": batch.head,
            "prev_head": batch.columns["prev"][-1],
            "state": _final_state(fresh, state),
        }
        cursor.execute(_INSERT_BATCH_SQL, params, prepare=prepare)
    return stored, batch.last_seq, batch.head


_BATCH_COLUMNS: Final = ("seq", *postgres_append.EVENT_COLUMNS, "hash", "prev")


@dataclass(frozen=True, slots=True)
class _ChainedBatch:
    """New events numbered and hashed onto a head: one list per inserted column."""

    columns: dict[str, list[Any]]
    stored: dict[str, StoredEvent]
    last_seq: int
    head: str

    @classmethod
    def link(
        cls, envelopes: Sequence[EventEnvelope], *, last_seq: int, prev: str, version: int
    ) -> _ChainedBatch:
        key = chain_anchor.seal_key()
        columns: dict[str, list[Any]] = {name: [] for name in _BATCH_COLUMNS}
        stored: dict[str, StoredEvent] = {}
        for envelope in envelopes:
            last_seq += 1
            wire = envelope.to_wire()
            hash_ = link_hash(prev, last_seq, chain_digest(wire, version=version, key=key))
            values = (
                last_seq,
                envelope.eventId,
                envelope.type.value,
                envelope.timestamp_datetime,
                envelope.source.value,
                envelope.correlationId or "",
                postgres_append.compact_json(wire["payload"]),
                envelope.schemaVersion,
                hash_,
                prev,
            )
            for name, value in zip(_BATCH_COLUMNS, values, strict=True):
                columns[name].append(value)
            stored[envelope.eventId] = StoredEvent({**wire, "seq": last_seq}, last_seq, hash_, prev)
            prev = hash_
        return cls(columns, stored, last_seq, prev)


def _stored_rows(session_id: uuid.UUID, event_ids: Sequence[str]) -> dict[str, StoredEvent]:
    """The already-stored events among a batch's ids (re-delivery: rare), as duplicates."""
    if not event_ids:
        return {}
    rows = SessionEvent.objects.filter(session_id=session_id, event_id__in=list(event_ids))
    return {str(row.event_id): _stored_from_row(row, duplicate=True) for row in rows}


def _stored_from_row(row: SessionEvent, *, duplicate: bool) -> StoredEvent:
    return StoredEvent(wire_from_row(row), row.seq, row.hash, row.prev_hash, duplicate)


# --- the general path -----------------------------------------------------------------------------


def _append_locked(
    session_id: uuid.UUID, envelopes: Sequence[EventEnvelope], expected: int | None
) -> tuple[dict[str, StoredEvent], int, str]:
    """Lock the session row, drop stored events, then insert the rest with seq and hashes."""
    with transaction.atomic():
        head = (
            ExamSession.objects.select_for_update()
            .filter(pk=session_id)
            .values_list("last_seq", "head_hash", "state", "chain_version")
            .first()
        )
        if head is None:
            raise SessionNotFound(f"no exam session {session_id}")
        last_seq, prev, state, version = head
        stored = _stored_rows(session_id, [e.eventId for e in envelopes])
        fresh = [e for e in envelopes if e.eventId not in stored]
        if not fresh:
            return stored, last_seq, prev
        if expected is not None and expected != last_seq:
            raise VersionConflict(expected=expected, actual=last_seq)
        batch = _ChainedBatch.link(fresh, last_seq=last_seq, prev=prev, version=version)
        stored.update(batch.stored)
        column = batch.columns
        SessionEvent.objects.bulk_create(
            SessionEvent(
                session_id=session_id,
                seq=column["seq"][index],
                event_id=envelope.eventId,
                type=envelope.type.value,
                timestamp=envelope.timestamp_datetime,
                source=envelope.source.value,
                correlation_id=envelope.correlationId or "",
                payload=batch.stored[envelope.eventId].wire["payload"],
                schema_version=envelope.schemaVersion,
                hash=column["hash"][index],
                prev_hash=column["prev"][index],
            )
            for index, envelope in enumerate(fresh)
        )
        ExamSession.objects.filter(pk=session_id).update(
            last_seq=batch.last_seq,
            head_hash=batch.head,
            prev_head_hash=batch.columns["prev"][-1],
            state=_final_state(fresh, state),
            updated_at=timezone.now(),
        )
    return stored, batch.last_seq, batch.head
