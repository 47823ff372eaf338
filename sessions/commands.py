"""The command service: deduplication and the "every command produces an event" guarantee.

:func:`command_handle` takes a command envelope (received JSON or a
``ioa.events.CommandEnvelope``) and a decide-callback (the runtime controller's), and:

* refuses a malformed command with an event (``candidate_command_received`` refused, when the
  command type is known; else ``system_error``);
* deduplicates by ``(session, commandId)``: a command seen within the last
  :data:`DEDUP_WINDOW` (5 minutes, chapter 05 §6.2) is a no-op returning the first outcome;
  one seen earlier than that is refused as a replay (with an event) and changes nothing;
* otherwise, holding the session row's lock (lock order: session, then command record), calls
  ``decide(command)`` and stores, in one transaction, the acknowledgement
  (``candidate_command_received``, plus ``guardrail_triggered`` with the reason when refused —
  ``ioa.events.acknowledgement_events``), the decision's events and the
  :class:`~sessions.models.ProcessedCommand` record. If ``decide`` raises, its work is rolled
  back and the command is recorded as refused with a ``system_error``.

Either way at least one event is stored for every command that names a session.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from ioa.events import (
    CommandDecision,
    CommandEnvelope,
    CommandType,
    CommandValidationError,
    EventEnvelope,
    EventFactory,
    EventSource,
    acknowledgement_events,
    canonical_command,
    validate_command,
)
from ioa.events.payloads import CandidateCommandReceived, SystemErrorPayload
from sessions.event_store import EventsRefused, SessionNotFound, StoredEvent, append_events
from sessions.models import ExamSession, ProcessedCommand

logger = logging.getLogger(__name__)

DEDUP_WINDOW = timedelta(minutes=5)
"""Commands with a commandId seen this recently are no-ops (chapter 05 §6.2)."""

Decider = Callable[[CommandEnvelope], CommandDecision]
"""The runtime controller's decision on a command."""


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """What happened to a command. ``duplicate`` means nothing new was stored; ``events`` are
    the events stored for it by this call."""

    command_id: str | None
    outcome: str
    reason: str
    duplicate: bool
    events: tuple[StoredEvent, ...]

    @property
    def accepted(self) -> bool:
        return self.outcome == ProcessedCommand.Outcome.ACCEPTED


def _factory(session_id: uuid.UUID) -> EventFactory:
    return EventFactory(session_id=str(session_id), source=EventSource.RUNTIME_CONTROLLER)


def command_handle(
    *,
    session: ExamSession | uuid.UUID | str,
    command: CommandEnvelope | Mapping[str, object],
    decide: Decider,
    now: Callable[[], datetime] = timezone.now,
) -> CommandOutcome:
    """Decide on a command exactly once and record the outcome as events (module docstring).

    Raises :class:`sessions.event_store.SessionNotFound` for an unknown session.
    """
    session_id = session.pk if isinstance(session, ExamSession) else uuid.UUID(str(session))
    if isinstance(command, CommandEnvelope):
        envelope = command
    else:
        try:
            envelope = validate_command(command)
        except CommandValidationError as exc:
            return _record_invalid(session_id, command, str(exc), now=now)
    if envelope.sessionId != str(session_id):
        return _record_invalid(
            session_id, envelope.to_wire(), "the command names another session", now=now
        )

    make = _factory(session_id)
    with transaction.atomic():
        if not ExamSession.objects.select_for_update().filter(pk=session_id).exists():
            raise SessionNotFound(f"no exam session {session_id}")
        previous = ProcessedCommand.objects.filter(
            session_id=session_id, command_id=envelope.commandId
        ).first()
        received_at = now()
        if previous is not None:
            if received_at - previous.received_at <= DEDUP_WINDOW:
                return CommandOutcome(
                    previous.command_id, previous.outcome, previous.reason, True, ()
                )
            reason = "this commandId was already used more than 5 minutes ago (replay)"
            decision = CommandDecision(accepted=False, reason=reason)
            events = acknowledgement_events(envelope, decision, factory=make)
            stored = append_events(session=session_id, events=events).events
            return CommandOutcome(
                envelope.commandId, ProcessedCommand.Outcome.REFUSED, reason, True, stored
            )

        outcome, events, reason = _decide(envelope, decide, make)
        try:
            with transaction.atomic():
                stored = append_events(session=session_id, events=events).events
        except EventsRefused as exc:  # the decider produced events that break the rules
            outcome = ProcessedCommand.Outcome.FAILED
            reason = "the command could not be processed (invalid runtime events)"
            events = _failure_events(envelope, make, reason, exc)
            stored = append_events(session=session_id, events=events).events
        ProcessedCommand.objects.create(
            session_id=session_id,
            command_id=envelope.commandId,
            command_type=envelope.type.value,
            received_at=received_at,
            outcome=outcome,
            reason=reason,
            event_ids=[e.event_id for e in stored],
        )
    return CommandOutcome(envelope.commandId, outcome, reason, False, stored)


def _decide(
    envelope: CommandEnvelope, decide: Decider, make: EventFactory
) -> tuple[str, list[EventEnvelope], str]:
    """Run the decider in a savepoint; a failure becomes a refusal plus a system_error."""
    try:
        with transaction.atomic():
            decision = decide(envelope)
    except Exception as exc:
        logger.exception("deciding on command %s failed", envelope.commandId)
        reason = "the command could not be processed (internal error)"
        return ProcessedCommand.Outcome.FAILED, _failure_events(envelope, make, reason, exc), reason
    events = acknowledgement_events(envelope, decision, factory=make)
    if decision.accepted:
        return ProcessedCommand.Outcome.ACCEPTED, events, ""
    return ProcessedCommand.Outcome.REFUSED, events, decision.reason or ""


def _failure_events(
    envelope: CommandEnvelope, make: EventFactory, reason: str, exc: Exception
) -> list[EventEnvelope]:
    """A refused acknowledgement and a system_error naming what went wrong."""
    events = acknowledgement_events(
        envelope, CommandDecision(accepted=False, reason=reason), factory=make
    )
    events.append(
        make(
            SystemErrorPayload(
                code="command_failed",
                message=f"{type(exc).__name__}: {exc}"[:2000],
                component="command",
                severity="error",
                userMessage="Your request could not be processed. Please try again.",
            ),
            correlation_id=envelope.commandId,
            source=EventSource.SYSTEM,
        )
    )
    return events


def _record_invalid(
    session_id: uuid.UUID, raw: Mapping[str, object], reason: str, *, now: Callable[[], datetime]
) -> CommandOutcome:
    """A malformed command still leaves an event: a refused acknowledgement when its type is
    known, else a system_error. Recorded for dedup when it carries a usable commandId."""
    make = _factory(session_id)
    found_id, found_kind = raw.get("commandId"), raw.get("type")
    command_id = found_id if isinstance(found_id, str) else None
    kind = found_kind if isinstance(found_kind, str) else None
    canonical = canonical_command(kind) if kind in {t.value for t in CommandType} else None
    reason = reason[:2000]
    event: EventEnvelope
    if command_id and 0 < len(command_id) <= 200 and canonical is not None:
        event = make(
            CandidateCommandReceived(
                commandId=command_id,
                command=canonical,
                commandType=str(kind),
                accepted=False,
                rejectionReason=reason,
                origin="envelope",
            ),
            correlation_id=command_id,
        )
    else:
        event = make(
            SystemErrorPayload(
                code="command_invalid",
                message=reason,
                component="command",
                severity="warning",
                userMessage="Your request was not understood.",
                details={"commandId": command_id, "type": kind},
            ),
            source=EventSource.SYSTEM,
        )
    previous: ProcessedCommand | None = None
    with transaction.atomic():
        if not ExamSession.objects.select_for_update().filter(pk=session_id).exists():
            raise SessionNotFound(f"no exam session {session_id}")
        if command_id and 0 < len(command_id) <= 200:
            previous = ProcessedCommand.objects.filter(
                session_id=session_id, command_id=command_id
            ).first()
            if previous is not None and now() - previous.received_at <= DEDUP_WINDOW:
                return CommandOutcome(command_id, previous.outcome, previous.reason, True, ())
        stored = append_events(session=session_id, events=[event]).events
        if command_id and 0 < len(command_id) <= 200 and previous is None:
            ProcessedCommand.objects.create(
                session_id=session_id,
                command_id=command_id,
                command_type=(kind or "")[:64],
                received_at=now(),
                outcome=ProcessedCommand.Outcome.INVALID,
                reason=reason,
                event_ids=[e.event_id for e in stored],
            )
    return CommandOutcome(command_id, ProcessedCommand.Outcome.INVALID, reason, False, stored)
