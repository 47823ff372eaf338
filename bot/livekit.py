"""LiveKit voice: one room per exam session, minimal-grant tokens, the bot's transport, and
runtime events on the data channel (adapter chapter §9).

Identities are ``candidate-<user id>``, ``proctor-<user id>`` and ``bot-<session id>``; the room
is ``viva-session-<session id>``. Grants (``VideoGrants``), nothing more:

=========  ==========================================================================
candidate  join the session's room; publish the microphone only; subscribe; no data
bot        join; publish the microphone only (its voice) and data (runtime events);
           subscribe (it must hear the candidate); participant kind ``agent``
proctor    join; subscribe only (listen-only: no tracks, no data)
=========  ==========================================================================

No token can create, list or administer rooms (LiveKit creates the room when the first
participant joins). Tokens expire after ``VIVA_LIVEKIT_TOKEN_TTL_SECONDS`` (10 minutes by
default): they are only needed to join; LiveKit refreshes a connected participant's token itself.

Settings (Django settings, else environment): ``VIVA_LIVEKIT_URL`` (``ws://127.0.0.1:7880`` for
``livekit-server --dev``), ``LIVEKIT_API_KEY``, ``LIVEKIT_API_SECRET``.

Runtime events go out on the data channel topic ``exam-runtime-events``, best effort (the
WebSocket feed of ``sessions`` stays the authoritative live channel). ``LiveKitParams`` has no
topic, so :func:`publish_data` publishes through the transport's room with one; and
:class:`RuntimeEventPublisher` sends each participant only its audience's projection
(``ioa.events.projection``): a candidate never receives evidence, rubric text or guardrails.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from livekit import api, rtc
from loguru import logger
from pipecat.transports.livekit.transport import LiveKitParams, LiveKitTransport

from bot.audio import transport_audio_params, voice_setting
from bot.voice.participants import ParticipantRole, participant_identity, role_of_identity
from ioa.events.projection import project
from ioa.events.types import Audience

if TYPE_CHECKING:
    from bot.pipeline import BotIO
    from bot.session_runner import BotOptions

EXAM_RUNTIME_EVENTS_TOPIC: Final = "exam-runtime-events"
"""The data channel topic of runtime events (compiled flow ``dataChannel.topic``, ADP-014)."""
DEFAULT_TOKEN_TTL_SECONDS: Final = 600
MICROPHONE: Final = "microphone"
"""LiveKit ``TrackSource`` name of a microphone, for ``can_publish_sources``."""


class LiveKitNotConfiguredError(RuntimeError):
    """``VIVA_LIVEKIT_URL``, ``LIVEKIT_API_KEY`` or ``LIVEKIT_API_SECRET`` is missing."""


@dataclass(frozen=True, slots=True)
class LiveKitConfig:
    """Where the LiveKit server is and how to sign its tokens."""

    url: str
    api_key: str
    api_secret: str
    token_ttl: dt.timedelta = dt.timedelta(seconds=DEFAULT_TOKEN_TTL_SECONDS)

    @classmethod
    def from_settings(cls) -> LiveKitConfig:
        """From ``VIVA_LIVEKIT_URL``, ``LIVEKIT_API_KEY``, ``LIVEKIT_API_SECRET`` and
        ``VIVA_LIVEKIT_TOKEN_TTL_SECONDS`` (Django settings, else environment)."""
        url = voice_setting("VIVA_LIVEKIT_URL", "")
        key = voice_setting("LIVEKIT_API_KEY", "")
        secret = voice_setting("LIVEKIT_API_SECRET", "")
        missing = [
            name
            for name, value in (
                ("VIVA_LIVEKIT_URL", url),
                ("LIVEKIT_API_KEY", key),
                ("LIVEKIT_API_SECRET", secret),
            )
            if not value
        ]
        if missing:
            raise LiveKitNotConfiguredError(f"LiveKit is not configured: set {', '.join(missing)}")
        ttl = int(voice_setting("VIVA_LIVEKIT_TOKEN_TTL_SECONDS", str(DEFAULT_TOKEN_TTL_SECONDS)))
        if ttl <= 0:
            raise LiveKitNotConfiguredError("VIVA_LIVEKIT_TOKEN_TTL_SECONDS must be positive")
        return cls(url=url, api_key=key, api_secret=secret, token_ttl=dt.timedelta(seconds=ttl))


def livekit_configured() -> bool:
    """Whether LiveKit settings are complete."""
    try:
        LiveKitConfig.from_settings()
    except LiveKitNotConfiguredError:
        return False
    return True


def room_name(session_id: uuid.UUID | str) -> str:
    """The session's room."""
    return f"viva-session-{session_id}"


def grants_for(role: ParticipantRole, room: str) -> api.VideoGrants:
    """The minimal grants of ``role`` in ``room`` (module docstring)."""
    if role is ParticipantRole.CANDIDATE:
        return api.VideoGrants(
            room_join=True,
            room=room,
            can_publish=True,
            can_publish_sources=[MICROPHONE],
            can_subscribe=True,
            can_publish_data=False,
            can_update_own_metadata=False,
        )
    if role is ParticipantRole.BOT:
        return api.VideoGrants(
            room_join=True,
            room=room,
            can_publish=True,
            can_publish_sources=[MICROPHONE],
            can_subscribe=True,
            can_publish_data=True,
            can_update_own_metadata=False,
        )
    return api.VideoGrants(
        room_join=True,
        room=room,
        can_publish=False,
        can_subscribe=True,
        can_publish_data=False,
        can_update_own_metadata=False,
    )


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A signed access token and what it was minted for."""

    token: str
    identity: str
    room: str
    role: ParticipantRole
    expires_at: dt.datetime
    url: str

    def as_json(self) -> dict[str, str]:
        """What the browser needs to join."""
        return {
            "url": self.url,
            "room": self.room,
            "identity": self.identity,
            "role": self.role.value,
            "token": self.token,
            "expiresAt": self.expires_at.isoformat().replace("+00:00", "Z"),
        }


def mint_token(
    role: ParticipantRole,
    *,
    session_id: uuid.UUID | str,
    subject: object,
    display_name: str = "",
    config: LiveKitConfig | None = None,
    now: dt.datetime | None = None,
) -> IssuedToken:
    """Sign a token for ``role`` in the session's room (``subject``: user id or session id)."""
    config = config or LiveKitConfig.from_settings()
    room = room_name(session_id)
    identity = participant_identity(role, subject)
    token = (
        api.AccessToken(config.api_key, config.api_secret)
        .with_identity(identity)
        .with_name(display_name or role.value)
        .with_ttl(config.token_ttl)
        .with_grants(grants_for(role, room))
        .with_attributes({"role": role.value, "session": str(session_id)})
    )
    if role is ParticipantRole.BOT:
        token = token.with_kind("agent")
    issued_at = now or dt.datetime.now(dt.UTC)
    return IssuedToken(
        token=token.to_jwt(),
        identity=identity,
        room=room,
        role=role,
        expires_at=(issued_at + config.token_ttl).replace(microsecond=0),
        url=config.url,
    )


def candidate_token(
    session_id: uuid.UUID | str, user_id: object, *, config: LiveKitConfig | None = None
) -> IssuedToken:
    """The candidate's token: publish microphone, subscribe."""
    return mint_token(
        ParticipantRole.CANDIDATE,
        session_id=session_id,
        subject=user_id,
        display_name="Candidate",
        config=config,
    )


def proctor_token(
    session_id: uuid.UUID | str, user_id: object, *, config: LiveKitConfig | None = None
) -> IssuedToken:
    """A proctor's token: listen only."""
    return mint_token(
        ParticipantRole.PROCTOR,
        session_id=session_id,
        subject=user_id,
        display_name="Proctor",
        config=config,
    )


def bot_token(session_id: uuid.UUID | str, *, config: LiveKitConfig | None = None) -> IssuedToken:
    """The examiner bot's token: publish its voice and data, subscribe."""
    return mint_token(
        ParticipantRole.BOT,
        session_id=session_id,
        subject=session_id,
        display_name="Examiner",
        config=config,
    )


@dataclass(frozen=True, slots=True)
class LiveKitBotTransport:
    """The bot's LiveKit transport and how it was built."""

    transport: LiveKitTransport
    url: str
    room: str
    identity: str
    token: IssuedToken


def build_livekit_transport(
    session_id: uuid.UUID | str, *, config: LiveKitConfig | None = None, **params: object
) -> LiveKitBotTransport:
    """The examiner bot's ``LiveKitTransport`` for the session's room, from settings.

    Nothing connects until the pipeline starts. ``params`` override ``LiveKitParams`` fields;
    by default audio is 16 kHz in (per-participant tracks: only the candidate may publish) and
    24 kHz out. Put ``bot.audio.build_vad_processor()`` after ``transport.input()``.
    """
    config = config or LiveKitConfig.from_settings()
    issued = bot_token(session_id, config=config)
    transport = LiveKitTransport(
        url=config.url,
        token=issued.token,
        room_name=issued.room,
        params=LiveKitParams.model_validate({**transport_audio_params(), **params}),
    )
    return LiveKitBotTransport(
        transport=transport,
        url=config.url,
        room=issued.room,
        identity=issued.identity,
        token=issued,
    )


def _room_of(transport: LiveKitTransport) -> rtc.Room | None:
    """The transport's connected ``rtc.Room``, or ``None`` before it connects.

    ``LiveKitTransport`` exposes no public room accessor; its client holds the room.
    """
    client = getattr(transport, "_client", None)
    room: rtc.Room | None = getattr(client, "_room", None)
    if room is None or not getattr(client, "_connected", False):
        return None
    return room


async def publish_data(
    transport: LiveKitTransport,
    payload: Mapping[str, object] | str | bytes,
    *,
    topic: str = EXAM_RUNTIME_EVENTS_TOPIC,
    destination_identities: Sequence[str] | None = None,
    reliable: bool = True,
) -> bool:
    """Publish ``payload`` (JSON-encoded if a mapping) on ``topic``; best effort.

    Returns whether it was handed to LiveKit. Never raises: not connected yet, a closed room or
    a LiveKit error are logged and give ``False`` (the WebSocket feed carries the event anyway).
    """
    room = _room_of(transport)
    if room is None:
        return False
    if isinstance(payload, Mapping):
        data: bytes = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    elif isinstance(payload, str):
        data = payload.encode()
    else:
        data = bytes(payload)
    try:
        await room.local_participant.publish_data(
            data,
            reliable=reliable,
            topic=topic,
            destination_identities=list(destination_identities or []),
        )
    except Exception as error:
        logger.warning(f"LiveKit: could not publish on {topic!r}: {error}")
        return False
    return True


AUDIENCE_OF_ROLE: Final[Mapping[ParticipantRole, Audience]] = {
    ParticipantRole.CANDIDATE: Audience.CANDIDATE,
    ParticipantRole.PROCTOR: Audience.PROCTOR,
}


def route_event(
    wire: Mapping[str, object], identities: Iterable[str]
) -> list[tuple[dict[str, object], list[str]]]:
    """``[(projected event, identities)]``: each participant gets its audience's projection of
    ``wire`` (an event envelope as JSON), or nothing; unknown identities and bots get nothing."""
    groups: dict[Audience, list[str]] = {}
    for identity in identities:
        role = role_of_identity(identity)
        audience = AUDIENCE_OF_ROLE.get(role) if role is not None else None
        if audience is not None:
            groups.setdefault(audience, []).append(identity)
    routed: list[tuple[dict[str, object], list[str]]] = []
    for audience in (Audience.CANDIDATE, Audience.PROCTOR):
        members = groups.get(audience)
        if not members:
            continue
        projected = project(wire, audience)
        if projected is not None:
            routed.append((projected, sorted(members)))
    return routed


class RuntimeEventPublisher:
    """Sends runtime events to the room on ``exam-runtime-events``, per audience, best effort."""

    def __init__(
        self, transport: LiveKitTransport, *, topic: str = EXAM_RUNTIME_EVENTS_TOPIC
    ) -> None:
        self.transport = transport
        self.topic = topic

    async def publish(self, wire: Mapping[str, object]) -> int:
        """Publish one event envelope; returns how many audience groups it was sent to."""
        room = _room_of(self.transport)
        if room is None:
            return 0
        try:
            identities = list(room.remote_participants.keys())
            routed = route_event(wire, identities)
        except Exception as error:  # an unknown event type must not break the bot
            logger.warning(f"LiveKit: cannot route event {wire.get('type')!r}: {error}")
            return 0
        sent = 0
        for event, members in routed:
            if await publish_data(
                self.transport, event, topic=self.topic, destination_identities=members
            ):
                sent += 1
        return sent


class LiveKitVoice:
    """The bot core's options for a LiveKit voice bot of one session.

    Every run of the bot (``bot.session_runner`` calls :meth:`io` once per run) joins the room
    with a fresh token; every batch of stored events (``on_stored``, called from a database
    thread) is published on ``exam-runtime-events`` from the bot's event loop, in order.
    """

    def __init__(
        self, session_id: uuid.UUID | str, *, slower: bool = False, language: str = "en"
    ) -> None:
        self.session_id = session_id
        self.slower = slower
        self.language = language
        self.publisher: RuntimeEventPublisher | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Mapping[str, object]] | None = None
        self._pump: asyncio.Task[None] | None = None

    def io(self) -> BotIO:
        """A ``BotIO`` on a new LiveKit transport (call it in the bot's event loop)."""
        from bot.audio import voice_io

        built = build_livekit_transport(self.session_id)
        self.publisher = RuntimeEventPublisher(built.transport)
        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        if self._pump is not None:
            self._pump.cancel()
        pump = self._loop.create_task(self._publish_queued(self._queue, self.publisher))
        self._pump = pump

        @built.transport.event_handler("on_disconnected")
        async def _stop_publishing(transport: LiveKitTransport) -> None:
            pump.cancel()

        return voice_io(built.transport, slower=self.slower, language=self.language)

    def close(self) -> None:
        """Stop publishing stored events (the bot's run is over); safe to call twice."""
        if self._pump is not None:
            self._pump.cancel()
            self._pump = None

    def on_stored(self, events: Sequence[Mapping[str, object]]) -> None:
        """Queue stored events for the data channel (thread-safe, never blocks, never raises)."""
        loop, queue = self._loop, self._queue
        if loop is None or queue is None or loop.is_closed():
            return
        for event in events:
            loop.call_soon_threadsafe(queue.put_nowait, event)

    @staticmethod
    async def _publish_queued(
        queue: asyncio.Queue[Mapping[str, object]], publisher: RuntimeEventPublisher
    ) -> None:
        while True:
            event = await queue.get()
            await publisher.publish(event)

    def options(self) -> BotOptions:
        """``bot.session_runner.BotOptions`` for ``bot.runners.run_bot`` (inline or Celery)."""
        from bot.session_runner import BotOptions

        return BotOptions(io_factory=self.io, on_stored=self.on_stored)


def livekit_bot_options(
    session_id: uuid.UUID | str, *, slower: bool = False, language: str = "en"
) -> BotOptions:
    """``BotOptions`` running the session's bot in its LiveKit room (see :class:`LiveKitVoice`)."""
    return LiveKitVoice(session_id, slower=slower, language=language).options()
