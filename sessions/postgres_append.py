"""The Postgres single-event append, grouped across threads (group commit).

One persisted event appended outside a transaction (``sessions.event_store``'s fast path) is one
statement: it locks and moves the session's head (seq, chain hash computed in SQL from the
event's digest, state) and inserts the row. Threads of one process that append at the same
time to *different* sessions share one statement and one commit instead of one each:

* the first thread to arrive while no statement is running becomes the leader and executes
  everything queued by then (:data:`GROUP_LIMIT` at most, at most one event per session; a
  second event of a session waits for the next statement, so a session's events keep their
  arrival order); the other threads wait for their row;
* when the leader's statement returns, every waiting thread gets its own row, and if more
  requests queued meanwhile, one of their threads leads the next statement. A lone appender
  (nothing else queued) executes at once: an uncontended append pays no wait.

A group's statement locks the session rows in id order (a fixed lock order: two groups never
deadlock on each other) and returns ``(session, seq, hash, prev_hash, chain_version)`` for each
event it stored. A request whose row is missing was not stored: the session does not exist, its
expected version was stale, or (in a single statement) its id was stored before; the event
store diagnoses it. If the group statement fails as a whole (a unique violation of one event
re-delivered, a deadlock with a transaction outside this scheme), nothing of it was stored and
each request is executed on its own, so one bad request never fails another.

Statements are prepared (psycopg server-side binding): Postgres plans each once per connection,
unless ``VIVA_DB_PREPARED_STATEMENTS`` is off (a transaction-pooling PgBouncer older than 1.21,
which cannot keep a statement prepared on one server connection for the next transaction on
another: :func:`prepared`); they are then sent unnamed, with the same binding.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import psycopg
from django.conf import settings
from django.db import IntegrityError
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg.rows import TupleRow

logger = logging.getLogger(__name__)

PREPARE_THRESHOLD = 5
"""psycopg's default: a statement is prepared once it has run this many times (the append
statements ask to be prepared at once, unless :func:`prepared` says no)."""


def prepared() -> bool:
    """Whether the append statements are prepared on the server (``VIVA_DB_PREPARED_STATEMENTS``;
    off by default behind a transaction pooler, ``VIVA_DB_TRANSACTION_POOLING``)."""
    return bool(getattr(settings, "VIVA_DB_PREPARED_STATEMENTS", True))


def server_cursor(db: BaseDatabaseWrapper) -> psycopg.Cursor[TupleRow]:
    """A server-side-binding cursor on ``db``'s connection, prepared statements enabled on it
    when :func:`prepared` (Django leaves them off unless OPTIONS asks)."""
    db.ensure_connection()
    raw = db.connection
    if raw.prepare_threshold is None and prepared():
        raw.prepare_threshold = PREPARE_THRESHOLD
    return psycopg.Cursor(raw)


GROUP_LIMIT: Final = 64
"""The most events one group statement stores."""

UNIQUE_EVENT_ID: Final = "session_event_unique_event_id"
"""The constraint a re-delivered event id breaks."""

_APPEND_ONE_SQL = """
WITH head AS (
    UPDATE exam_sessions_examsession
    SET last_seq = last_seq + 1,
        prev_head_hash = head_hash,
        head_hash = 'sha256:' || encode(sha256(convert_to(
            head_hash || '|' || (last_seq + 1)::text || '|' ||
            CASE WHEN chain_version >= 2 THEN %(sealed)s ELSE %(digest)s END, 'UTF8')), 'hex'),
        state = COALESCE(%(state)s::varchar, state),
        updated_at = now()
    WHERE id = %(session)s AND (%(expected)s::bigint IS NULL OR last_seq = %(expected)s::bigint)
    RETURNING id, last_seq, head_hash, prev_head_hash, chain_version
),
inserted AS (
    INSERT INTO exam_sessions_sessionevent
        (session_id, seq, event_id, type, timestamp, source, correlation_id, payload,
         schema_version, hash, prev_hash)
    SELECT id, last_seq, %(event_id)s, %(type)s, %(timestamp)s, %(source)s, %(correlation)s,
           %(payload)s::jsonb, %(schema)s, head_hash, prev_head_hash
    FROM head
    RETURNING session_id
)
SELECT h.id, h.last_seq, h.head_hash, h.prev_head_hash, h.chain_version
FROM head h JOIN inserted i ON i.session_id = h.id
"""

_APPEND_GROUP_SQL = """
WITH request AS (
    SELECT * FROM json_to_recordset(%(rows)s::json) AS r(
        session uuid, digest text, sealed text, expected bigint, state varchar, event_id uuid,
        type varchar, at timestamptz, source varchar, correlation varchar, payload jsonb,
        schema varchar
    )
),
locked AS (
    SELECT s.id FROM exam_sessions_examsession s
    WHERE s.id IN (SELECT session FROM request)
    ORDER BY s.id
    FOR UPDATE
),
head AS (
    UPDATE exam_sessions_examsession s
    SET last_seq = s.last_seq + 1,
        prev_head_hash = s.head_hash,
        head_hash = 'sha256:' || encode(sha256(convert_to(
            s.head_hash || '|' || (s.last_seq + 1)::text || '|' ||
            CASE WHEN s.chain_version >= 2 THEN r.sealed ELSE r.digest END, 'UTF8')), 'hex'),
        state = COALESCE(r.state, s.state),
        updated_at = now()
    FROM request r, locked l
    WHERE s.id = r.session AND l.id = s.id
      AND (r.expected IS NULL OR s.last_seq = r.expected)
    RETURNING s.id, s.last_seq, s.head_hash, s.prev_head_hash, s.chain_version
),
inserted AS (
    INSERT INTO exam_sessions_sessionevent
        (session_id, seq, event_id, type, timestamp, source, correlation_id, payload,
         schema_version, hash, prev_hash)
    SELECT h.id, h.last_seq, r.event_id, r.type, r.at, r.source, r.correlation, r.payload,
           r.schema, h.head_hash, h.prev_head_hash
    FROM head h JOIN request r ON r.session = h.id
    RETURNING session_id
)
SELECT h.id, h.last_seq, h.head_hash, h.prev_head_hash, h.chain_version
FROM head h JOIN inserted i ON i.session_id = h.id
"""
"""The group statement takes its requests as one JSON array of records (:func:`group_record`):
psycopg adapts twelve Python lists element by element, which cost more than the statement's
other work in the leading thread (about 37 us per event against 3 us for the JSON)."""

EVENT_COLUMNS: Final = (
    "event_id",
    "type",
    "timestamp",
    "source",
    "correlation",
    "payload",
    "schema",
)
"""The parameters of an event row's own columns, shared by every append statement."""


@dataclass(frozen=True, slots=True)
class AppendedRow:
    """What the statement stored for one request."""

    seq: int
    hash: str
    prev_hash: str
    chain_version: int


def _held_lock() -> threading.Lock:
    lock = threading.Lock()
    lock.acquire()
    return lock


@dataclass(eq=False, slots=True)
class AppendRequest:
    """One event to append to ``session``: the one-event statement's parameters (``session``,
    ``digest``, ``sealed``, ``expected``, ``state`` and :data:`EVENT_COLUMNS`)."""

    session: uuid.UUID
    params: Mapping[str, Any]
    record: str
    """The request as a JSON record of the group statement (:func:`group_record`)."""
    wake: threading.Lock = field(default_factory=_held_lock)
    """Released once, when the request is finished or made the leader (the waiting thread
    blocks acquiring it: cheaper than an ``Event``, and each request is woken at most once)."""
    lead: bool = False
    row: AppendedRow | None = None
    error: BaseException | None = None
    finished: bool = False


class AppendGroups:
    """The per-process coordinator of grouped appends (module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[AppendRequest] = []
        self._leading = False
        self.statements = 0
        self.events = 0
        self.fallbacks = 0

    def append(
        self, db: BaseDatabaseWrapper, session: uuid.UUID, params: Mapping[str, Any]
    ) -> AppendedRow | None:
        """Append one event (autocommit; called outside any transaction) and return its row,
        or ``None`` when nothing was stored (the caller diagnoses why). Raises what its own
        statement raised."""
        request = AppendRequest(
            session, {**params, "session": session}, group_record(session, params)
        )
        with self._lock:
            self._queue.append(request)
            if not self._leading:
                self._leading = request.lead = True
        if not request.lead:
            request.wake.acquire()  # until finished, or made the leader
        if not request.finished:
            self._lead(db)
        if request.error is not None:
            raise request.error
        return request.row

    def pending(self) -> int:
        """How many requests wait for a statement (the one running excluded)."""
        with self._lock:
            return len(self._queue)

    def _lead(self, db: BaseDatabaseWrapper) -> None:
        """Execute one group, hand the results out, then pass the lead on (or drop it)."""
        with self._lock:
            group = self._take()
        grouped = False
        try:
            grouped = execute_group(db, group)
        finally:
            with self._lock:
                self.statements += 1
                self.events += len(group)
                self.fallbacks += len(group) > 1 and not grouped
                for request in group:
                    request.finished = True
                    if not request.lead:
                        request.wake.release()
                self._pass_lead(group)

    def _take(self) -> list[AppendRequest]:
        """The queue's first request of each session, up to :data:`GROUP_LIMIT` (lock held)."""
        group: list[AppendRequest] = []
        sessions: set[uuid.UUID] = set()
        rest: list[AppendRequest] = []
        for request in self._queue:
            if len(group) < GROUP_LIMIT and request.session not in sessions:
                sessions.add(request.session)
                group.append(request)
            else:
                rest.append(request)
        self._queue = rest
        return group

    def _pass_lead(self, group: Sequence[AppendRequest]) -> None:
        """Make the oldest waiting request the leader, or end the lead (lock held)."""
        for request in group:
            request.lead = False
        if not self._queue:
            self._leading = False
            return
        successor = self._queue[0]
        successor.lead = True
        successor.wake.release()


GROUPS = AppendGroups()
"""This process's coordinator (``sessions.event_store`` appends through it)."""


def execute_group(db: BaseDatabaseWrapper, group: Sequence[AppendRequest]) -> bool:
    """Store a group of requests (distinct sessions) and set each one's ``row`` or ``error``:
    one statement for one request, the group statement for more, and each on its own when the
    group statement fails. Returns whether the group statement stored them."""
    if len(group) > 1:
        try:
            rows = _execute(db, _APPEND_GROUP_SQL, _group_params(group), many=True)
        except Exception as exc:  # nothing of it was stored: each on its own below
            logger.info("a group of %d appends runs one by one: %s", len(group), exc)
        else:
            by_session = {row[0]: AppendedRow(*row[1:]) for row in rows}
            for request in group:
                request.row = by_session.get(request.session)
            return True
    for request in group:
        try:
            rows = _execute(db, _APPEND_ONE_SQL, request.params, many=False)
            request.row = AppendedRow(*rows[0][1:]) if rows else None
        except IntegrityError as exc:
            cause = getattr(exc.__cause__, "diag", None)
            if getattr(cause, "constraint_name", None) != UNIQUE_EVENT_ID:
                request.error = exc
        except BaseException as exc:  # handed to the requesting thread, which raises it
            request.error = exc
    return False


_COMPACT_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: object) -> str:
    """``value`` as compact JSON text, non-ASCII as itself (as ``json.dumps`` with those options
    writes it, with one shared encoder instead of a new one per call)."""
    return _COMPACT_ENCODER.encode(value)


def group_record(session: uuid.UUID, params: Mapping[str, Any]) -> str:
    """One request as a record of the group statement's JSON array: its scalar parameters,
    and its payload (JSON text already) spliced in as is, not re-encoded."""
    scalars = {
        "session": str(session),
        "digest": params["digest"],
        "sealed": params["sealed"],
        "expected": params["expected"],
        "state": params["state"],
        "event_id": str(params["event_id"]),
        "type": params["type"],
        "at": params["timestamp"].isoformat(),
        "source": params["source"],
        "correlation": params["correlation"],
        "schema": params["schema"],
    }
    text = compact_json(scalars)
    return f'{text[:-1]},"payload":{params["payload"]}}}'


def _group_params(group: Sequence[AppendRequest]) -> dict[str, str]:
    """The group's records as one JSON array, in id order (the order the rows are locked in)."""
    ordered = sorted(group, key=lambda r: r.session)
    return {"rows": "[" + ",".join(r.record for r in ordered) + "]"}


def _execute(
    db: BaseDatabaseWrapper, sql: str, params: Mapping[str, Any], *, many: bool
) -> list[tuple[Any, ...]]:
    """Run a statement in autocommit with server-side binding (prepared: :func:`prepared`); its
    rows."""
    with db.wrap_database_errors, server_cursor(db) as cursor:
        cursor.execute(sql, params, prepare=prepared())
        return cursor.fetchall() if many else ([row] if (row := cursor.fetchone()) else [])
