"""The bot's side of the session log (no Pipecat): load a session, restore its controller, and
persist every decision through the event store.

* :func:`load_session` — the published version, its package and compiled flow (cached per
  version), runtime validation (``ioa.validation.validate_for_session``) and the stored events.
* :class:`Journal` — owns the session's :class:`~ioa.runtime.RuntimeController`.
  :meth:`Journal.record` stores a decision's events with ``expected_version`` (the seq before
  them), exactly like the simulator does; :meth:`Journal.append_foreign` stores events the bot
  itself emits (``system_error`` of a failed handler, ``usage_reported``) and folds them into the
  controller's state, so the controller stays the session's only numbering authority.
  A :class:`~sessions.event_store.VersionConflict` means someone else wrote to the log:
  :meth:`Journal.resync` rebuilds the controller from the store.
* :func:`resume_messages` — the current node visit's conversation, rebuilt from the log for the
  LLM context of a restarted bot.
* :class:`DbThreads` — the few threads that run the ORM for bots of one process.

All functions here are synchronous; the bot calls them through :class:`DbThreads`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.db import connections, transaction

from bot.conf import runtime_timing
from ioa.compiler import CompiledFlow, compile_package
from ioa.events import (
    EventEnvelope,
    EventFactory,
    EventSource,
    EventType,
    ExamState,
    validate_event,
)
from ioa.events import payloads as p
from ioa.runtime import Clock, Decision, ExamPlan, RuntimeController, SystemClock
from ioa.runtime.evolve import apply_event
from ioa.runtime.replay import envelopes
from ioa.schema import AssessmentPackage, load_package
from ioa.validation import validate_for_session
from publishing.models import PublishedVersion
from sessions.broadcast import event_seq
from sessions.event_store import append_events
from sessions.inbox import mark_processed
from sessions.models import ExamSession
from sessions.selectors import iter_rows, wire_from_row

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

TERMINAL_STATES: Final = frozenset({ExamState.COMPLETED, ExamState.ABORTED, ExamState.EXPIRED})


class SessionUnavailable(Exception):
    """The session cannot be run: unknown, or its package fails runtime validation."""


@dataclass(frozen=True, slots=True)
class VersionArtifacts:
    """A published version as the bot uses it (shared by every session of the version)."""

    version_id: uuid.UUID
    checksum: str
    package: AssessmentPackage
    flow: CompiledFlow
    plan: ExamPlan


@dataclass(frozen=True, slots=True)
class LoadedSession:
    """What a bot needs to run a session."""

    session_id: uuid.UUID
    artifacts: VersionArtifacts
    events: tuple[EventEnvelope, ...]
    state: str
    extra_time_multiplier: Decimal = Decimal(1)
    """The candidate's extra-time accommodation (it also lengthens their thinking pauses:
    ``bot.voice.turn_end.tune_turn_taking``)."""

    @property
    def finished(self) -> bool:
        return self.state in {s.value for s in TERMINAL_STATES}


_artifact_lock = threading.Lock()


def scale_time(document: Mapping[str, object], multiplier: Decimal) -> dict[str, object]:
    """The package with every time budget multiplied (the extra-time accommodation): node
    ``timeBudget.maxDurationSec``, follow-up ``maxFollowUpDurationSec``, ``time_elapsed``
    conditions and ``metadata.totalTimeBudgetSec``."""
    factor = float(multiplier)

    def scaled(value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            result = round(value * factor, 3)
            return int(result) if result == int(result) else result
        return value

    def scale(owner: object, key: str) -> None:
        if isinstance(owner, dict) and key in owner:
            owner[key] = scaled(owner[key])

    out: dict[str, object] = json.loads(json.dumps(document))
    scale(out.get("metadata"), "totalTimeBudgetSec")
    for node in _json_list(out.get("nodes")):
        if not isinstance(node, dict):
            continue
        scale(node.get("timeBudget"), "maxDurationSec")
        if "timeBudgetMs" in node:
            ms = scaled(node["timeBudgetMs"])
            node["timeBudgetMs"] = int(ms) if isinstance(ms, int | float) else ms
        scale(node.get("followUpPolicy"), "maxFollowUpDurationSec")
        for transition in _json_list(node.get("transitions")):
            condition = transition.get("condition") if isinstance(transition, dict) else None
            if isinstance(condition, dict) and condition.get("type") == "time_elapsed":
                scale(condition, "seconds")
    return out


def _json_list(value: object) -> list[object]:
    """``value`` if it is a JSON array, else empty."""
    return value if isinstance(value, list) else []


@functools.lru_cache(maxsize=64)
def _artifacts(version_id: uuid.UUID, checksum: str, multiplier: Decimal) -> VersionArtifacts:

    version = PublishedVersion.objects.get(pk=version_id)
    document = json.loads(version.canonical_json)
    report = validate_for_session(document, published_checksum=version.checksum)
    if not report.passed:
        problems = "; ".join(f"{f.rule_id}: {f.message}" for f in report.errors[:5])
        raise SessionUnavailable(f"the package fails runtime validation: {problems}")
    if multiplier != 1:
        # The published flow says the published budgets: this session's copy is recompiled
        # (deterministically) from the package with its budgets scaled.
        package = load_package(scale_time(document, multiplier))
        flow: CompiledFlow = compile_package(package)
    else:
        package = load_package(document)
        flow = json.loads(version.compiled_json)
    return VersionArtifacts(version.pk, version.checksum, package, flow, ExamPlan(package, flow))


def load_artifacts(
    version_id: uuid.UUID, checksum: str, multiplier: Decimal = Decimal(1)
) -> VersionArtifacts:
    """The version's package, compiled flow and plan (validated once, then cached), with the
    time budgets scaled by the session's extra-time ``multiplier``."""
    with _artifact_lock:
        return _artifacts(version_id, checksum, Decimal(multiplier).normalize())


def load_session(session_id: uuid.UUID | str) -> LoadedSession:
    """Load a session for its bot; :class:`SessionUnavailable` when it cannot run."""
    key = uuid.UUID(str(session_id))
    row = (
        ExamSession.objects.filter(pk=key)
        .values(
            "state",
            "sitting__version_id",
            "sitting__version__checksum",
            "extra_time_multiplier",
        )
        .first()
    )
    if row is None:
        raise SessionUnavailable(f"no exam session {key}")
    artifacts = load_artifacts(
        row["sitting__version_id"],
        row["sitting__version__checksum"],
        Decimal(row["extra_time_multiplier"]),
    )
    wires = [wire_from_row(r) for r in iter_rows(session_id=key)]
    stored = tuple(envelopes(wires, str(key)))
    return LoadedSession(
        key, artifacts, stored, str(row["state"]), Decimal(row["extra_time_multiplier"])
    )


def stored_after(session_id: uuid.UUID, after_seq: int) -> list[EventEnvelope]:
    """Stored events after ``after_seq`` (to adopt another writer's events)."""
    wires = [wire_from_row(r) for r in iter_rows(session_id=session_id, after_seq=after_seq)]
    out = []
    for wire in wires:
        out.append(validate_event(wire).with_seq(event_seq(wire)))
    return out


class Journal:
    """The session's controller and its persistence (see the module docstring)."""

    def __init__(
        self,
        loaded: LoadedSession,
        *,
        clock: Clock | None = None,
        on_stored: Callable[[Sequence[Mapping[str, object]]], None] | None = None,
    ) -> None:
        self.session_id = loaded.session_id
        self.artifacts = loaded.artifacts
        self.clock: Clock = clock or SystemClock()
        self.timing = runtime_timing()
        self.controller = RuntimeController.restore(
            loaded.artifacts.plan,
            session_id=str(loaded.session_id),
            events=loaded.events,
            clock=self.clock,
            timing=self.timing,
        )
        self.restored_events = len(loaded.events)
        self._factory = EventFactory(session_id=str(self.session_id), source=EventSource.BOT)
        self._on_stored = on_stored

    @property
    def last_seq(self) -> int:
        return int(self.controller.state.last_seq)

    def record(self, decision: Decision) -> None:
        """Store a decision's events (one batch, fenced by ``expected_version``)."""
        self.record_many([decision])

    def record_many(self, decisions: Sequence[Decision], *, inputs: Sequence[str] = ()) -> None:
        """Store consecutive decisions' events in one write (fenced by ``expected_version``,
        the seq before the first of them), exactly as the simulator stores each decision.
        ``inputs``: ids of the candidate inputs these decisions consumed, marked processed in
        the same transaction (``sessions.inbox``), so an input is never lost nor acted on twice."""
        events = [event for decision in decisions for event in decision.events]
        if not events and not inputs:
            return

        if not events:
            mark_processed(session_id=self.session_id, input_ids=inputs)
            return
        first = events[0].seq
        with contextlib.ExitStack() as stack:
            if inputs:
                stack.enter_context(transaction.atomic())
            result = append_events(
                session=self.session_id,
                events=events,
                expected_version=None if first is None else first - 1,
            )
            if inputs:
                mark_processed(session_id=self.session_id, input_ids=inputs)
        if self._on_stored is not None:
            self._on_stored([e.wire for e in result.events])

    def append_foreign(
        self, payloads: Iterable[p.Payload], *, correlation_id: str | None = None
    ) -> list[EventEnvelope]:
        """Store events the bot emits itself and fold them into the controller's state."""
        built = [self._factory(payload, correlation_id=correlation_id) for payload in payloads]
        if not built:
            return []
        result = append_events(
            session=self.session_id, events=built, expected_version=self.last_seq
        )
        adopted: list[EventEnvelope] = []
        for envelope, stored in zip(built, result.events, strict=True):
            if stored.seq is None or stored.duplicate:
                continue
            self.adopt(envelope.with_seq(stored.seq))
            adopted.append(envelope.with_seq(stored.seq))
        if self._on_stored is not None:
            self._on_stored([e.wire for e in result.events])
        return adopted

    def adopt(self, envelope: EventEnvelope) -> None:
        """Fold a stored event the controller did not emit into its state."""
        controller = self.controller
        apply_event(controller.state, envelope, controller.plan)
        controller.log.append(envelope)

    def resync(self) -> int:
        """Adopt events another writer stored after ours; returns how many."""
        newer = stored_after(self.session_id, self.last_seq)
        for envelope in newer:
            self.adopt(envelope)
        return len(newer)

    def rebuild(self) -> None:
        """Rebuild the controller from the store (drops an unstored decision)."""
        loaded = load_session(self.session_id)
        self.controller = RuntimeController.restore(
            self.artifacts.plan,
            session_id=str(self.session_id),
            events=loaded.events,
            clock=self.clock,
            timing=self.timing,
        )


def resume_messages(
    events: Sequence[EventEnvelope], node_id: str | None, *, limit: int = 20
) -> list[dict[str, str]]:
    """The conversation of the latest visit of ``node_id`` as LLM messages (what the candidate
    said → ``user``, what the examiner said → ``assistant``), at most ``limit`` messages."""
    if node_id is None:
        return []
    start = 0
    for index, event in enumerate(events):
        if isinstance(event.payload, p.NodeEntered) and event.payload.nodeId == node_id:
            start = index
    messages: list[dict[str, str]] = []
    for event in events[start:]:
        payload = event.payload
        if isinstance(payload, p.TranscriptFinal) and payload.speaker == "candidate":
            messages.append({"role": "user", "content": payload.text})
        elif isinstance(payload, p.ExaminerUtteranceFinal) and payload.nodeId == node_id:
            messages.append({"role": "assistant", "content": payload.text})
    return messages[-limit:]


def event_types(events: Iterable[EventEnvelope]) -> list[str]:
    return [e.type.value if isinstance(e.type, EventType) else str(e.type) for e in events]


class DbThreads:
    """``size`` single-thread executors for the ORM work of the bots of one process.

    Each bot is pinned to one thread (by its key), so a thread's database connection is reused
    and bounded; :meth:`close` closes every thread's connections (at the end of a bot run, so a
    test database can be dropped and idle connections do not pile up). Calls go through
    ``asgiref``'s ``sync_to_async`` with ``thread_sensitive=False``: code in the thread that
    publishes to the in-memory channel layer (``async_to_sync``) runs back on the calling loop.
    """

    def __init__(self, size: int) -> None:
        self._executors = [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"bot-db-{i}") for i in range(size)
        ]

    def _executor(self, key: object) -> ThreadPoolExecutor:
        return self._executors[hash(key) % len(self._executors)]

    async def run(self, key: object, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run ``fn`` in ``key``'s thread."""

        def call() -> R:
            _drop_broken_connections()
            return fn(*args, **kwargs)

        return await sync_to_async(call, thread_sensitive=False, executor=self._executor(key))()

    async def close(self, key: object) -> None:
        """Close the connections of ``key``'s thread."""
        await sync_to_async(_close_all, thread_sensitive=False, executor=self._executor(key))()

    async def close_all(self) -> None:
        """Close the connections of every thread (a process that is done with bots)."""
        for executor in self._executors:
            await sync_to_async(_close_all, thread_sensitive=False, executor=executor)()


def _close_all() -> None:
    connections.close_all()


def _drop_broken_connections() -> None:
    """Close this thread's connections that failed and are no longer usable. (Not
    ``close_old_connections``: with ``CONN_MAX_AGE=0`` it would reconnect on every write.)"""
    for connection in connections.all(initialized_only=True):
        if (
            connection.connection is not None
            and connection.errors_occurred
            and not connection.is_usable()
        ):
            connection.close()


_db_threads: DbThreads | None = None
_db_lock = threading.Lock()


def db_threads(size: int = 8) -> DbThreads:
    """The process's :class:`DbThreads` (created on first use)."""
    global _db_threads
    with _db_lock:
        if _db_threads is None:
            _db_threads = DbThreads(size)
        return _db_threads
