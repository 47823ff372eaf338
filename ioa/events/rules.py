"""The runtime event rules of chapter 08 (EVT-001..011) as pure checks.

:func:`check_event` validates one received event (a JSON object) and returns the envelope or
every violation found; :func:`validate_event` raises instead. :func:`check_causal_order`
applies EVT-003 to a batch given the nodes already entered in the session. EVT-010 (persist
before publish) is a property of the event store, not of an event: ``sessions.event_store``
publishes only after commit.

Violations name their rule; problems no EVT rule covers (unknown type, bad eventId, payload
fields outside the rules' lists) are reported as ``EVT-SCHEMA``.

Normalisation on the way in: aliases (spec-notes §4) become canonical types, ``payload.type``
is filled in from the envelope when missing, the timestamp is normalised to UTC, and a
``seq`` sent by a producer is ignored (only the store assigns seq, chapter 05 §6.1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from pydantic import ValidationError

from ioa.events.envelope import EventEnvelope, normalise_timestamp
from ioa.events.errors import EventValidationError, Violation
from ioa.events.ids import is_uuid7
from ioa.events.payloads import Payload
from ioa.events.registry import ALIAS_DROPPED_KEYS, NODE_SCOPED_TYPES, resolve_type, spec_for
from ioa.events.types import SCHEMA_VERSION, EventSource, EventType

SCHEMA: Final = "EVT-SCHEMA"
"""Pseudo rule id of schema problems no EVT rule names."""

RULES: Final[Mapping[str, str]] = {
    "EVT-001": "Every emitted event MUST include event (type), sessionId, and timestamp.",
    "EVT-002": "timestamp MUST be in ISO 8601 format with timezone.",
    "EVT-003": "Events MUST be emitted in causal order per session. node_entered MUST precede "
    "evidence_update for the same nodeId.",
    "EVT-004": "node_entered MUST include nodeId, nodeKind (from ExamRuntimeNodeKind), and "
    "timeBudgetMs.",
    "EVT-005": "evidence_signal_emitted MUST include signalId, nodeId, and signalKind.",
    "EVT-006": "node_exited MUST include nodeId and reason.",
    "EVT-007": "candidate_command_received MUST include command matching a "
    "CandidateCommandType value.",
    "EVT-008": "transcript_final events MUST include speaker, text, turnId, nodeId, and "
    "confidence.",
    "EVT-009": "session_completed MUST include reason, totalTurns, and totalElapsedMs.",
    "EVT-010": "Events MUST be persisted to the Event Store before being considered committed. "
    "Data channel emission is best-effort; persistence is authoritative.",
    "EVT-011": "Event schema version MUST be included as schemaVersion in the event envelope.",
}
"""Chapter 08's wording of each rule."""

PAYLOAD_RULES: Final[Mapping[EventType, tuple[str, frozenset[str]]]] = {
    EventType.NODE_ENTERED: ("EVT-004", frozenset({"nodeId", "nodeKind", "timeBudgetMs"})),
    EventType.EVIDENCE_SIGNAL: ("EVT-005", frozenset({"signalId", "nodeId", "signalKind"})),
    EventType.NODE_EXITED: ("EVT-006", frozenset({"nodeId", "reason"})),
    EventType.CANDIDATE_COMMAND_RECEIVED: ("EVT-007", frozenset({"command"})),
    EventType.TRANSCRIPT_FINAL: (
        "EVT-008",
        frozenset({"speaker", "text", "turnId", "nodeId", "confidence"}),
    ),
    EventType.EXAM_COMPLETED: ("EVT-009", frozenset({"reason", "totalTurns", "totalElapsedMs"})),
}
"""Payload fields each type-specific rule requires (presence and a valid value)."""

_ENVELOPE_KEYS: Final = frozenset(
    {
        "eventId",
        "sessionId",
        "seq",
        "timestamp",
        "source",
        "type",
        "payload",
        "correlationId",
        "schemaVersion",
    }
)


def _present(raw: Mapping[str, Any], key: str) -> bool:
    value = raw.get(key)
    return value is not None and value != ""


_Add = Callable[[str, str, str], None]
"""Records one violation: (rule, path, message)."""


def check_event(raw: object) -> tuple[EventEnvelope | None, list[Violation]]:
    """Check one received event against EVT-001/002/004..009/011 and the schema.

    Returns ``(envelope, [])`` when valid, else ``(None, violations)`` listing every problem.
    """
    if not isinstance(raw, Mapping):
        return None, [Violation(SCHEMA, "$", "an event must be a JSON object")]
    event_id = raw.get("eventId") if isinstance(raw.get("eventId"), str) else None
    problems: list[Violation] = []

    def add(rule: str, path: str, message: str) -> None:
        problems.append(Violation(rule, path, message, event_id))

    _check_required_keys(raw, add)
    _check_timestamp(raw, add)
    _check_envelope_schema(raw, add)
    payload = raw.get("payload")
    if not isinstance(payload, Mapping):
        add(SCHEMA, "payload", "must be a JSON object")
        return None, problems
    name = raw.get("type")
    event_type = resolve_type(name, payload) if isinstance(name, str) else None
    if event_type is None:
        if _present(raw, "type"):
            add(SCHEMA, "type", f"unknown event type {name!r}")
        return None, problems
    typed_payload = _typed_payload(str(name), event_type, payload, add)
    if problems or typed_payload is None:
        return None, problems
    return _envelope(raw, event_type, typed_payload, event_id)


def _check_required_keys(raw: Mapping[str, Any], add: _Add) -> None:
    """EVT-001 (type, sessionId, timestamp) and EVT-011 (schemaVersion)."""
    for key in ("type", "sessionId", "timestamp"):
        if not _present(raw, key):
            add("EVT-001", key, "is required")
    if "schemaVersion" not in raw:
        add("EVT-011", "schemaVersion", "is required")
    elif raw["schemaVersion"] != SCHEMA_VERSION:
        add("EVT-011", "schemaVersion", f"must be {SCHEMA_VERSION!r}, got {raw['schemaVersion']!r}")


def _check_timestamp(raw: Mapping[str, Any], add: _Add) -> None:
    """EVT-002: ISO 8601 with a time zone."""
    if not _present(raw, "timestamp"):
        return
    timestamp = raw.get("timestamp")
    if not isinstance(timestamp, str):
        add("EVT-002", "timestamp", "must be a string")
        return
    try:
        normalise_timestamp(timestamp)
    except ValueError as exc:
        add("EVT-002", "timestamp", str(exc))


def _check_envelope_schema(raw: Mapping[str, Any], add: _Add) -> None:
    """The schema of the rest of the envelope (no unknown field, UUIDv7 id, known source...)."""
    for key in sorted(set(raw) - _ENVELOPE_KEYS):
        add(SCHEMA, key, "unknown envelope field")
    if not is_uuid7(raw.get("eventId")):
        add(SCHEMA, "eventId", "must be a lower-case UUIDv7 string")
    if _present(raw, "sessionId") and not isinstance(raw["sessionId"], str):
        add(SCHEMA, "sessionId", "must be a string")
    if raw.get("source") not in {s.value for s in EventSource}:
        add(SCHEMA, "source", f"must be one of {', '.join(s.value for s in EventSource)}")
    correlation = raw.get("correlationId")
    if correlation is not None and not (isinstance(correlation, str) and correlation):
        add(SCHEMA, "correlationId", "must be a non-empty string when present")


def _typed_payload(
    name: str, event_type: EventType, payload: Mapping[str, Any], add: _Add
) -> Payload | None:
    """The payload as its model (aliases' dropped keys removed, ``type`` filled in), with each
    missing required field reported under its EVT rule (EVT-004..009), else None."""
    body: dict[str, Any] = dict(payload)
    for key in ALIAS_DROPPED_KEYS.get(name, frozenset()):
        body.pop(key, None)
    given_type = body.get("type")
    if given_type is not None and given_type != name and given_type != event_type:
        add(SCHEMA, "payload.type", f"{given_type!r} differs from the envelope type {name!r}")
    body["type"] = event_type.value
    rule, required = PAYLOAD_RULES.get(event_type, (SCHEMA, frozenset()))
    for field in sorted(required):
        if body.get(field) is None:
            add(rule, f"payload.{field}", "is required")
    try:
        return spec_for(event_type).payload_model.model_validate(body)
    except ValidationError as exc:
        for error in exc.errors():
            loc = [str(part) for part in error["loc"]]
            field = loc[0] if loc else ""
            if field in required and body.get(field) is None:
                continue  # already reported under its rule
            path = ".".join(["payload", *loc]) if loc else "payload"
            add(rule if field in required else SCHEMA, path, error["msg"])
    return None


def _envelope(
    raw: Mapping[str, Any], event_type: EventType, payload: Payload, event_id: str | None
) -> tuple[EventEnvelope | None, list[Violation]]:
    """The checked event as an envelope (seq dropped, timestamp normalised by the model)."""
    try:
        envelope = EventEnvelope.model_validate(
            {
                "eventId": raw["eventId"],
                "sessionId": raw["sessionId"],
                "timestamp": raw.get("timestamp"),
                "source": raw["source"],
                "type": event_type.value,
                "payload": payload,
                "correlationId": raw.get("correlationId"),
                "schemaVersion": SCHEMA_VERSION,
            }
        )
    except ValidationError as exc:  # pragma: no cover - every field was checked above
        return None, [
            Violation(SCHEMA, ".".join(map(str, e["loc"])) or "$", e["msg"], event_id)
            for e in exc.errors()
        ]
    return envelope, []


def validate_event(raw: object) -> EventEnvelope:
    """The envelope of a received event; raises :class:`EventValidationError` listing every
    violation otherwise."""
    envelope, problems = check_event(raw)
    if envelope is None:
        raise EventValidationError(problems)
    return envelope


def node_scope(envelope: EventEnvelope) -> str | None:
    """The node id EVT-003 checks for this event, or ``None`` if the type is not node-scoped."""
    if envelope.type not in NODE_SCOPED_TYPES:
        return None
    node_id = getattr(envelope.payload, "nodeId", None)
    return node_id if isinstance(node_id, str) else None


def check_causal_order(
    events: Sequence[EventEnvelope], *, entered_node_ids: Iterable[str]
) -> list[Violation]:
    """EVT-003 over a batch in order: every node-scoped event (evidence, follow-ups,
    hesitation, self-correction, misconception, node_exited) must name a node entered earlier,
    either before the batch (``entered_node_ids``) or by a ``node_entered`` earlier in it."""
    entered = set(entered_node_ids)
    problems: list[Violation] = []
    for envelope in events:
        if envelope.type == EventType.NODE_ENTERED:
            entered.add(getattr(envelope.payload, "nodeId"))  # noqa: B009
            continue
        node_id = node_scope(envelope)
        if node_id is not None and node_id not in entered:
            problems.append(
                Violation(
                    "EVT-003",
                    "payload.nodeId",
                    f"{envelope.type} for node {node_id!r} before any node_entered for it",
                    envelope.eventId,
                )
            )
    return problems
