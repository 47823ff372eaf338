"""The event envelope (chapter 05 §2), timestamps, and building events.

The envelope's wire form (:meth:`EventEnvelope.to_wire`) is a plain JSON object with the
chapter's field names. ``seq`` is absent until the event store assigns it; producers never set
it (§6.1). Timestamps are normalised to UTC with a ``Z`` suffix and millisecond precision
(microsecond when the value has sub-millisecond digits), so a stored event's wire form can be
rebuilt exactly from its database row.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from ioa.events.ids import Uuid7Generator, is_uuid7
from ioa.events.payloads import EventPayload, Id, Lax, Payload
from ioa.events.registry import EventTypeSpec, spec_for
from ioa.events.types import SCHEMA_VERSION, EventSource, EventType

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Clock = Callable[[], datetime]
"""Returns the current time as an aware datetime."""


def utc_now() -> datetime:
    """The system clock (the default :data:`Clock`)."""
    return datetime.now(UTC)


def parse_timestamp(value: str) -> datetime:
    """Parse an ISO 8601 date-time that names its time zone (EVT-002); returns UTC.

    Raises ``ValueError`` for anything else (dates, naive date-times, garbage).
    """
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"must be an ISO 8601 date-time with time zone (e.g. 2026-05-06T02:00:01.123Z), "
            f"got {value!r}"
        ) from exc
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise ValueError(f"must include a time zone (e.g. a trailing Z), got {value!r}")
    return parsed.astimezone(UTC)


def format_timestamp(value: datetime) -> str:
    """The normalised wire form of an aware datetime: ``2026-05-06T02:00:01.123Z``."""
    if value.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    utc = value.astimezone(UTC)
    micro = utc.microsecond
    fraction = f"{micro // 1000:03d}" if micro % 1000 == 0 else f"{micro:06d}"
    return f"{utc:%Y-%m-%dT%H:%M:%S}.{fraction}Z"


def normalise_timestamp(value: str) -> str:
    """``format_timestamp(parse_timestamp(value))``."""
    return format_timestamp(parse_timestamp(value))


def _uuid7_string(value: str) -> str:
    if not is_uuid7(value):
        raise ValueError(f"must be a lower-case UUIDv7 string, got {value!r}")
    return value


EventId = Annotated[str, AfterValidator(_uuid7_string)]
Timestamp = Annotated[str, AfterValidator(normalise_timestamp)]


class EventEnvelope(BaseModel):
    """One event: the universal envelope around a typed payload (immutable).

    Build new events with :func:`new_event` or an :class:`EventFactory`; turn received JSON
    into an envelope with :func:`ioa.events.validate_event` (which applies the EVT rules).
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)

    eventId: EventId
    sessionId: Id
    seq: Annotated[int, Field(ge=1)] | None = None
    timestamp: Timestamp
    source: Annotated[EventSource, Lax]
    type: Annotated[EventType, Lax]
    payload: EventPayload
    correlationId: Id | None = None
    schemaVersion: Literal["1"] = SCHEMA_VERSION

    @model_validator(mode="after")
    def _payload_matches_type(self) -> Self:
        if self.payload.type != self.type:
            raise ValueError(f"payload.type {self.payload.type!r} differs from type {self.type!r}")
        return self

    @property
    def spec(self) -> EventTypeSpec:
        """The registry entry of this event's type (audiences, projection)."""
        return spec_for(self.type)

    @property
    def timestamp_datetime(self) -> datetime:
        return parse_timestamp(self.timestamp)

    def with_seq(self, seq: int | None) -> EventEnvelope:
        """A copy carrying ``seq`` (``None`` removes it)."""
        return self.model_copy(update={"seq": seq})

    def to_wire(self) -> dict[str, Any]:
        """The JSON object of this event (unset optional fields left out)."""
        return self.model_dump(mode="json", exclude_none=True)


def new_event(
    payload: Payload,
    *,
    session_id: str,
    source: EventSource | str,
    timestamp: datetime,
    event_id: str,
    correlation_id: str | None = None,
) -> EventEnvelope:
    """Wrap a payload in an envelope (pure: the caller supplies time and id)."""
    return EventEnvelope(
        eventId=event_id,
        sessionId=session_id,
        timestamp=format_timestamp(timestamp),
        source=EventSource(source),
        type=EventType(getattr(payload, "type")),  # noqa: B009 - every payload has one
        payload=payload,  # type: ignore[arg-type]
        correlationId=correlation_id,
    )


class EventFactory:
    """Builds envelopes for one session with an injected clock and id source.

    ``factory(NodeEntered(...), correlation_id="trans-1")`` → :class:`EventEnvelope` whose
    ``eventId`` is a UUIDv7 with the same millisecond as its ``timestamp``.
    """

    def __init__(
        self,
        *,
        session_id: str,
        source: EventSource | str = EventSource.RUNTIME_CONTROLLER,
        clock: Clock = utc_now,
        ids: Uuid7Generator | None = None,
    ) -> None:
        self.session_id = session_id
        self.source = EventSource(source)
        self._clock = clock
        self._ids = ids or Uuid7Generator()

    def __call__(
        self,
        payload: Payload,
        *,
        correlation_id: str | None = None,
        source: EventSource | str | None = None,
    ) -> EventEnvelope:
        now = self._clock()
        millis = (now - _EPOCH) // timedelta(milliseconds=1)
        return new_event(
            payload,
            session_id=self.session_id,
            source=self.source if source is None else EventSource(source),
            timestamp=now,
            event_id=str(self._ids(millis)),
            correlation_id=correlation_id,
        )
