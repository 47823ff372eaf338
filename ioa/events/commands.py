"""Command envelopes (chapter 05 §3, §5), the canonical command vocabulary (spec-notes §3), and
the acknowledgement every command must produce.

A command is a request; the runtime decides on it and records the outcome as events. The
decider returns a :class:`CommandDecision`; :func:`acknowledgement_events` turns it into the
events to store: ``candidate_command_received`` (always, accepted or not) and, for a refusal,
``guardrail_triggered`` with the reason — unless the decider already produced them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ioa.events.envelope import EventEnvelope, EventFactory, Timestamp
from ioa.events.errors import CommandValidationError
from ioa.events.payloads import (
    CandidateCommandReceived,
    CommandPayload,
    GuardrailTriggered,
    Id,
    Lax,
)
from ioa.events.types import SCHEMA_VERSION, CommandSource, CommandType, EventType
from ioa.schema.enums import ALWAYS_ALLOWED_COMMANDS, CandidateCommandType

CC = CandidateCommandType

CANONICAL_COMMANDS: Final[Mapping[CommandType, CandidateCommandType]] = {
    CommandType.REPEAT_QUESTION: CC.REPEAT,
    CommandType.REQUEST_CLARIFICATION: CC.CLARIFICATION,
    CommandType.REQUEST_REPHRASE: CC.REQUEST_REPHRASE,
    CommandType.PAUSE: CC.PAUSE,
    CommandType.RESUME: CC.RESUME,
    CommandType.THINKING_ALOUD: CC.THINKING_ALOUD,
    CommandType.RAISE_HAND: CC.RAISE_HAND,
    CommandType.CHALLENGE_PREMISE: CC.CHALLENGE_PREMISE,
    CommandType.REVISE_EARLIER_ANSWER: CC.REVISE_EARLIER_ANSWER,
    CommandType.REPORT_AUDIO_ISSUE: CC.REPORT_AUDIO_ISSUE,
    CommandType.END_EXAM_REQUESTED: CC.FINISH,
    CommandType.EMERGENCY_STOP: CC.EMERGENCY_STOP,
    CommandType.SIGNAL_CONFIDENCE: CC.SIGNAL_CONFIDENCE,
}
"""Command envelope type → canonical CandidateCommandType (spec-notes §3, column 3)."""

LLM_COMMANDS: Final[Mapping[str, CandidateCommandType]] = {
    "repeat": CC.REPEAT,
    "clarification": CC.CLARIFICATION,
    "clarify": CC.CLARIFICATION,
    "request_rephrase": CC.REQUEST_REPHRASE,
    "rephrase": CC.REQUEST_REPHRASE,
    "slow_down": CC.SLOW_DOWN,
    "pause": CC.PAUSE,
    "thinking_aloud": CC.THINKING_ALOUD,
    "thinking_time": CC.THINKING_ALOUD,
    "help": CC.HELP,
    "skip": CC.SKIP,
    "revise_earlier_answer": CC.REVISE_EARLIER_ANSWER,
    "revise": CC.REVISE_EARLIER_ANSWER,
    "finish": CC.FINISH,
}
"""LLM ``commandDetected`` values (with the ADP-005 aliases) → canonical (column 2)."""

ALWAYS_ALLOWED: Final = ALWAYS_ALLOWED_COMMANDS
"""Welfare and safety commands no node policy refuses (spec-notes §3)."""


def canonical_command(name: str) -> CandidateCommandType | None:
    """The canonical command for any spelling: a command envelope type, an LLM
    ``commandDetected`` value (or alias), or a canonical name. ``None`` if unknown."""
    if name in _ENVELOPE_NAMES:
        return CANONICAL_COMMANDS[CommandType(name)]
    if name in LLM_COMMANDS:
        return LLM_COMMANDS[name]
    if name in _CANONICAL_NAMES:
        return CandidateCommandType(name)
    return None


_ENVELOPE_NAMES: Final = frozenset(t.value for t in CommandType)
_CANONICAL_NAMES: Final = frozenset(t.value for t in CandidateCommandType)


class CommandEnvelope(BaseModel):
    """One command (immutable). ``commandId`` should be a UUIDv7; any id up to 200 characters
    is accepted, and deduplication is by ``(sessionId, commandId)``."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)

    commandId: Id
    sessionId: Id
    timestamp: Timestamp
    source: Annotated[CommandSource, Lax]
    type: Annotated[CommandType, Lax]
    payload: CommandPayload
    schemaVersion: Literal["1"] = SCHEMA_VERSION

    @property
    def canonical(self) -> CandidateCommandType:
        """The canonical command (``end_exam_requested`` → ``finish``...)."""
        return CANONICAL_COMMANDS[self.type]

    @property
    def node_id(self) -> str | None:
        """The node the command refers to, when its payload names one."""
        value = getattr(self.payload, "nodeId", None) or getattr(self.payload, "targetNodeId", None)
        return value if isinstance(value, str) else None

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


def validate_command(raw: object) -> CommandEnvelope:
    """A received command envelope; raises :class:`CommandValidationError` if malformed.

    ``payload.type`` is filled in from the envelope's ``type`` when missing.
    """
    if not isinstance(raw, Mapping):
        raise CommandValidationError([("$", "a command must be a JSON object")])
    data = dict(raw)
    payload = data.get("payload")
    if isinstance(payload, Mapping) and "type" not in payload and isinstance(data.get("type"), str):
        data["payload"] = {**payload, "type": data["type"]}
    if isinstance(data.get("payload"), Mapping) and data["payload"].get("type") != data.get("type"):
        raise CommandValidationError([("payload.type", "must equal the envelope's type")])
    try:
        return CommandEnvelope.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = [str(part) for part in error["loc"]]
            if len(loc) >= 2 and loc[0] == "payload" and loc[1] in _ENVELOPE_NAMES:
                loc = [loc[0], *loc[2:]]  # drop the union tag from the path
            problems.append((".".join(loc) or "$", error["msg"]))
        raise CommandValidationError(problems) from exc


@dataclass(frozen=True, slots=True)
class CommandDecision:
    """What the runtime decided on a command.

    ``events`` are the consequences (``exam_state_changed``, ``recovery_started``...), in
    order. ``reason`` is required when ``accepted`` is false. The acknowledgement events are
    added by :func:`acknowledgement_events` unless ``events`` already contains them.
    """

    accepted: bool
    reason: str | None = None
    events: tuple[EventEnvelope, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.accepted and not self.reason:
            raise ValueError("a refused command needs a reason")


def command_details(command: CommandEnvelope) -> dict[str, Any] | None:
    """The ``details`` of a command's acknowledgement: its payload's fields without ``type``
    (``None`` when there are none)."""
    fields = command.payload.model_dump(mode="json", exclude_none=True)
    fields.pop("type", None)
    return fields or None


def acknowledgement_events(
    command: CommandEnvelope,
    decision: CommandDecision,
    *,
    factory: EventFactory,
    origin: Literal["envelope", "llm", "classifier"] = "envelope",
) -> list[EventEnvelope]:
    """The events to store for a decided command, in order: the acknowledgement
    (``candidate_command_received``), for a refusal a ``guardrail_triggered`` with the reason,
    then the decision's own events. Every event carries ``correlationId = commandId`` unless
    the decider set one."""
    acknowledged = any(
        e.type == EventType.CANDIDATE_COMMAND_RECEIVED
        and getattr(e.payload, "commandId", None) == command.commandId
        for e in decision.events
    )
    guarded = any(e.type == EventType.GUARDRAIL_TRIGGERED for e in decision.events)
    events: list[EventEnvelope] = []
    if not acknowledged:
        events.append(
            factory(
                CandidateCommandReceived(
                    commandId=command.commandId,
                    command=command.canonical,
                    commandType=command.type.value,
                    accepted=decision.accepted,
                    rejectionReason=None if decision.accepted else decision.reason,
                    origin=origin,
                    details=command_details(command),
                ),
                correlation_id=command.commandId,
            )
        )
    if not decision.accepted and not guarded:
        events.append(
            factory(
                GuardrailTriggered(
                    guardrailId=f"command-refused:{command.type.value}",
                    guardrailType="command_refused",
                    severity="warning",
                    description=decision.reason or "command refused",
                    actionTaken="command_refused",
                    contextNodeId=command.node_id,
                ),
                correlation_id=command.commandId,
            )
        )
    for event in decision.events:
        if event.correlationId is None:
            event = event.model_copy(update={"correlationId": command.commandId})
        events.append(event)
    return events
