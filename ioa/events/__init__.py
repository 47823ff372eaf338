"""The event protocol (chapter 05, EVT rules of chapter 08, spec-notes §4): pure, no Django.

API summary (stable; ``docs/spec/event-protocol.md`` is the prose version):

Building events (the runtime controller, the bot)::

    from ioa.events import EventFactory, payloads as p
    make = EventFactory(session_id=str(session.id), source="runtime_controller",
                        clock=clock, ids=Uuid7Generator(clock_ms, random_bytes))
    event = make(p.NodeEntered(nodeId="q1", nodeKind="question", rubricItemIds=[],
                               maxFollowUps=2, timeBudgetSec=120, timeBudgetMs=120_000),
                 correlation_id="trans-1")
    event.to_wire()          # JSON object; no seq until the store assigns one

* :class:`EventEnvelope` — immutable envelope (``eventId`` UUIDv7, ``sessionId``, ``seq``,
  ``timestamp`` normalised UTC, ``source``, ``type``, typed ``payload``, ``correlationId``,
  ``schemaVersion`` "1"); :func:`new_event` (pure, caller gives time and id).
* ``ioa.events.payloads`` — one strict model per type (17 chapter types + exam_state_changed,
  time_warning, system_error (:class:`~ioa.events.payloads.SystemErrorPayload`),
  misconception_detected, proctor_instruction, heartbeat, usage_reported, proctor_action
  (:class:`~ioa.events.payloads.ProctorActionTaken`), candidate_connection_changed,
  result_released) and the 13
  command payloads.
* :class:`EventType`, :class:`EventSource`, :class:`Audience`, :class:`ExamState`
  (+ ``EXAM_STATE_TRANSITIONS``), :class:`CommandType`, :class:`CommandSource`.
* :data:`REGISTRY` / :func:`spec_for` — per type: payload model, audiences (candidate,
  proctor, persisted, marking), candidate projection, live-only, EVT-003 node scope;
  :data:`ALIASES` / :func:`resolve_type` (evidence_update → evidence_signal, ...).

Receiving events and checking rules:

* :func:`validate_event` (raises :class:`EventValidationError` with every
  :class:`Violation`, each naming its EVT rule) / :func:`check_event` (returns them);
  aliases are resolved, timestamps normalised, a producer's ``seq`` ignored.
* :func:`check_causal_order` — EVT-003 over a batch given the nodes already entered.

Commands:

* :class:`CommandEnvelope`, :func:`validate_command`, :func:`canonical_command` (envelope type,
  LLM spelling or canonical name → ``CandidateCommandType``), ``CANONICAL_COMMANDS``,
  ``LLM_COMMANDS``; :class:`CommandDecision` (what a decide-callback returns),
  :func:`acknowledgement_events` (candidate_command_received + guardrail_triggered on refusal)
  and :func:`command_details` (the acknowledgement's ``details``).

Ids, hashing, projection, replay:

* :func:`uuid7`, :class:`Uuid7Generator` (injected clock and randomness, monotonic),
  :func:`is_uuid7`.
* :func:`body_digest`, :func:`link_hash`, :func:`event_hash`, :data:`GENESIS_HASH`,
  :func:`verify_chain` — the per-session hash chain.
* :func:`project` — an event as an audience may see it (``None`` if not sent to it; the
  candidate's projection never carries intercepted texts, excerpts, rubric levels or a
  proctor's reason).
* :func:`fold` (generic replay over stored envelopes), :func:`replay_summary` /
  :class:`SessionSummary`.
* ``python -m ioa.events.export`` writes ``docs/spec/events.schema.json``.
"""

from ioa.events import payloads
from ioa.events.commands import (
    ALWAYS_ALLOWED,
    CANONICAL_COMMANDS,
    LLM_COMMANDS,
    CommandDecision,
    CommandEnvelope,
    acknowledgement_events,
    canonical_command,
    command_details,
    validate_command,
)
from ioa.events.envelope import (
    Clock,
    EventEnvelope,
    EventFactory,
    format_timestamp,
    new_event,
    normalise_timestamp,
    parse_timestamp,
    utc_now,
)
from ioa.events.errors import (
    CommandValidationError,
    EventProtocolError,
    EventValidationError,
    Violation,
)
from ioa.events.hashchain import (
    GENESIS_HASH,
    ChainProblem,
    ChainRecord,
    body_digest,
    event_hash,
    link_hash,
    verify_chain,
)
from ioa.events.ids import Uuid7Generator, is_uuid7, uuid7, uuid7_from_parts, uuid7_time_ms
from ioa.events.projection import project, visible_to
from ioa.events.registry import (
    ALIASES,
    LIVE_ONLY_TYPES,
    MARKING_TYPES,
    NODE_SCOPED_TYPES,
    PERSISTED_TYPES,
    REGISTRY,
    EventTypeSpec,
    resolve_type,
    spec_for,
)
from ioa.events.replay import ReplayOrderError, SessionSummary, fold, replay_summary, summarise
from ioa.events.rules import RULES, check_causal_order, check_event, validate_event
from ioa.events.types import (
    CHAPTER_EVENT_TYPES,
    EXAM_STATE_TRANSITIONS,
    LIVE_AUDIENCES,
    SCHEMA_VERSION,
    TERMINAL_STATES,
    Audience,
    CommandSource,
    CommandType,
    EventSource,
    EventType,
    ExamState,
)

__all__ = [
    "ALIASES",
    "ALWAYS_ALLOWED",
    "CANONICAL_COMMANDS",
    "CHAPTER_EVENT_TYPES",
    "EXAM_STATE_TRANSITIONS",
    "GENESIS_HASH",
    "LIVE_AUDIENCES",
    "LIVE_ONLY_TYPES",
    "LLM_COMMANDS",
    "MARKING_TYPES",
    "NODE_SCOPED_TYPES",
    "PERSISTED_TYPES",
    "REGISTRY",
    "RULES",
    "SCHEMA_VERSION",
    "TERMINAL_STATES",
    "Audience",
    "ChainProblem",
    "ChainRecord",
    "Clock",
    "CommandDecision",
    "CommandEnvelope",
    "CommandSource",
    "CommandType",
    "CommandValidationError",
    "EventEnvelope",
    "EventFactory",
    "EventProtocolError",
    "EventSource",
    "EventType",
    "EventTypeSpec",
    "EventValidationError",
    "ExamState",
    "ReplayOrderError",
    "SessionSummary",
    "Uuid7Generator",
    "Violation",
    "acknowledgement_events",
    "body_digest",
    "canonical_command",
    "check_causal_order",
    "check_event",
    "command_details",
    "event_hash",
    "fold",
    "format_timestamp",
    "is_uuid7",
    "link_hash",
    "new_event",
    "normalise_timestamp",
    "parse_timestamp",
    "payloads",
    "project",
    "replay_summary",
    "resolve_type",
    "spec_for",
    "summarise",
    "utc_now",
    "uuid7",
    "uuid7_from_parts",
    "uuid7_time_ms",
    "validate_command",
    "validate_event",
    "verify_chain",
    "visible_to",
]
