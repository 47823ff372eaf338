"""SmallWebRTC (embedded voice): peer connections held by this process, and the bot transport.

The candidate's browser sends an SDP offer to ``bot.webrtc_views`` (Django, ASGI); a
:class:`SmallWebRTCConnection` (aiortc) answers it here, in the web process's event loop, and is
handed to the bot core through the *bot starter* (``VIVA_WEBRTC_BOT_STARTER``, default
:func:`start_inline_voice_bot`), which runs the session's supervised bot (``bot.runners``) in
this event loop with :func:`smallwebrtc_io` as its ``BotIO``. SmallWebRTC therefore needs the
inline bot runner (``VIVA_BOT_RUNNER=inline``): a Celery worker cannot own a peer connection
answered by the web process. Use LiveKit (``bot.livekit``) for bots in workers.

One live connection per session: a new offer without a known ``pc_id`` (the candidate reloaded
the exam room) closes the previous connection, whose transport then reports
``on_client_disconnected`` to its pipeline.
"""

from __future__ import annotations

import asyncio
import importlib
import uuid
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from loguru import logger
from pipecat.transports.base_transport import TransportParams
from pipecat.transports.smallwebrtc.connection import IceServer, SmallWebRTCConnection
from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

from bot.audio import transport_audio_params, voice_setting
from sessions.bot_channel import send_to_bot

if TYPE_CHECKING:
    from bot.pipeline import BotIO


class BotStarter(Protocol):
    """Starts the session's bot on a new connection (``slower``: the candidate's slower-speech
    accommodation). Must return promptly (run the pipeline in a task): the browser waits for
    the SDP answer meanwhile."""

    def __call__(
        self,
        session_id: uuid.UUID,
        connection: SmallWebRTCConnection,
        *,
        slower: bool = False,
        language: str = "en",
    ) -> Awaitable[None]: ...


DEFAULT_BOT_STARTER: Final = "bot.voice.webrtc.start_inline_voice_bot"
STOP_TIMEOUT_SECONDS: Final = 15.0
"""How long a reconnect waits for the session's previous bot to stop."""


class VoiceUnavailableError(RuntimeError):
    """The embedded voice path cannot serve this request (no bot starter, bad configuration)."""


@dataclass(frozen=True, slots=True)
class IceCandidateUpdate:
    """One trickled ICE candidate from the browser (empty ``candidate`` = end of candidates)."""

    candidate: str
    sdp_mid: str | None
    sdp_mline_index: int | None


def ice_servers() -> list[IceServer]:
    """STUN/TURN servers from ``VIVA_WEBRTC_ICE_SERVERS`` (comma-separated URLs; none by default:
    host candidates are enough on localhost and a LAN)."""
    raw = voice_setting("VIVA_WEBRTC_ICE_SERVERS", "")
    return [IceServer(urls=url.strip()) for url in raw.split(",") if url.strip()]


def build_smallwebrtc_transport(
    connection: SmallWebRTCConnection, **params: object
) -> SmallWebRTCTransport:
    """The bot's transport on an answered connection: 16 kHz mono in, 24 kHz out, no video.

    ``params`` override ``TransportParams`` fields. VAD is not part of the transport in Pipecat
    1.x: put ``bot.audio.build_vad_processor()`` after ``transport.input()`` (or give the user
    aggregator a VAD analyzer).
    """
    transport_params = TransportParams.model_validate({**transport_audio_params(), **params})
    return SmallWebRTCTransport(webrtc_connection=connection, params=transport_params)


def smallwebrtc_io(
    connection: SmallWebRTCConnection, *, slower: bool = False, language: str = "en"
) -> BotIO:
    """The bot core's ``BotIO`` on this connection: STT/TTS in the exam's ``language``, VAD,
    speech controls."""
    from bot.audio import voice_io

    return voice_io(build_smallwebrtc_transport(connection), slower=slower, language=language)


_voice_stops: dict[uuid.UUID, asyncio.Event] = {}
"""Stop events of the inline voice bots this process started, by session."""


async def start_inline_voice_bot(
    session_id: uuid.UUID,
    connection: SmallWebRTCConnection,
    *,
    slower: bool = False,
    language: str = "en",
) -> None:
    """The default bot starter: run the session's bot inline on this connection.

    A bot already running the session in this process (on an earlier connection, or in text
    mode) is stopped first; the new bot resumes from the stored events as its handover
    (``BotOptions.handover``: no fault is recorded or announced for it).
    Raises :class:`VoiceUnavailableError` when bots do not run inline or the old bot does not
    stop in time.
    """
    from bot.conf import bot_settings
    from bot.runners import inline_task, start_inline
    from bot.session_runner import BotOptions

    if bot_settings().runner != "inline":
        raise VoiceUnavailableError("SmallWebRTC needs VIVA_BOT_RUNNER=inline (use LiveKit)")
    running = inline_task(session_id)
    handover = running is not None and not running.done()
    if running is not None and not running.done():
        stop = _voice_stops.get(session_id)
        if stop is not None:
            stop.set()
        else:
            await send_to_bot(session_id, "stop")
        try:
            await asyncio.wait_for(asyncio.shield(running), timeout=STOP_TIMEOUT_SECONDS)
        except TimeoutError as error:
            raise VoiceUnavailableError("the session's running bot did not stop") from error
    stop = asyncio.Event()
    _voice_stops[session_id] = stop
    start_inline(
        session_id,
        options=BotOptions(
            io_factory=lambda: smallwebrtc_io(connection, slower=slower, language=language),
            stop=stop,
            handover=handover,
        ),
    )


def resolve_bot_starter(path: str | None = None) -> BotStarter:
    """The configured bot starter (a dotted path to an async callable)."""
    dotted = path or voice_setting("VIVA_WEBRTC_BOT_STARTER", DEFAULT_BOT_STARTER)
    module_name, _, attribute = dotted.rpartition(".")
    try:
        starter = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as error:
        raise VoiceUnavailableError(f"no WebRTC bot starter at {dotted!r}: {error}") from error
    if not callable(starter):
        raise VoiceUnavailableError(f"{dotted!r} is not callable")
    return starter  # type: ignore[no-any-return]


class WebRTCPeers:
    """The SmallWebRTC connections of this process, one per exam session."""

    def __init__(self) -> None:
        self._by_session: dict[uuid.UUID, SmallWebRTCConnection] = {}
        self._locks: dict[uuid.UUID, asyncio.Lock] = {}

    def get(self, session_id: uuid.UUID) -> SmallWebRTCConnection | None:
        """The session's current connection, if any."""
        return self._by_session.get(session_id)

    async def answer(
        self,
        session_id: uuid.UUID,
        *,
        sdp: str,
        sdp_type: str,
        pc_id: str | None = None,
        restart_pc: bool = False,
        slower: bool = False,
        language: str = "en",
        starter: BotStarter | None = None,
    ) -> dict[str, str]:
        """Answer an SDP offer: renegotiate the session's connection when ``pc_id`` names it,
        else open a new connection (closing the old one) and hand it to the bot starter.

        Returns ``{"sdp", "type", "pc_id"}``. Raises :class:`VoiceUnavailableError` when no bot
        starter is configured (nothing is left open then).
        """
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        async with lock:
            current = self._by_session.get(session_id)
            if current is not None and pc_id and current.pc_id == pc_id:
                await current.renegotiate(sdp=sdp, type=sdp_type, restart_pc=restart_pc)
                return self._answer_of(current)
            start = starter or resolve_bot_starter()
            connection = SmallWebRTCConnection(ice_servers=ice_servers())
            try:
                await connection.initialize(sdp=sdp, type=sdp_type)
            except Exception:
                await connection.disconnect()
                raise

            @connection.event_handler("closed")
            async def _forget(closed: SmallWebRTCConnection) -> None:
                if self._by_session.get(session_id) is closed:
                    self._by_session.pop(session_id, None)

            if current is not None:
                logger.info(f"WebRTC: session {session_id} reconnected; closing {current.pc_id}")
                self._by_session.pop(session_id, None)
                await current.disconnect()
            try:
                await start(session_id, connection, slower=slower, language=language)
            except Exception:
                await connection.disconnect()
                raise
            self._by_session[session_id] = connection
            return self._answer_of(connection)

    async def add_ice_candidates(
        self, session_id: uuid.UUID, pc_id: str, candidates: Sequence[IceCandidateUpdate]
    ) -> bool:
        """Add trickled candidates to the session's connection ``pc_id``; False if unknown."""
        from aiortc.sdp import candidate_from_sdp

        connection = self._by_session.get(session_id)
        if connection is None or connection.pc_id != pc_id:
            return False
        for update in candidates:
            if update.candidate:
                candidate = candidate_from_sdp(update.candidate.removeprefix("candidate:"))
                candidate.sdpMid = update.sdp_mid
                candidate.sdpMLineIndex = update.sdp_mline_index
                await connection.add_ice_candidate(candidate)
            else:
                await connection.add_ice_candidate(None)  # end of candidates (RFC 8840)
        return True

    async def close(self, session_id: uuid.UUID) -> None:
        """Close the session's connection (the exam ended)."""
        connection = self._by_session.pop(session_id, None)
        self._locks.pop(session_id, None)
        if connection is not None:
            await connection.disconnect()

    async def close_all(self) -> None:
        """Close every connection (server shutdown, tests)."""
        connections = list(self._by_session.values())
        self._by_session.clear()
        self._locks.clear()
        await asyncio.gather(*(c.disconnect() for c in connections), return_exceptions=True)

    @staticmethod
    def _answer_of(connection: SmallWebRTCConnection) -> dict[str, str]:
        answer = connection.get_answer()
        if answer is None:
            raise RuntimeError("the WebRTC connection produced no SDP answer")
        return {"sdp": answer["sdp"], "type": answer["type"], "pc_id": answer["pc_id"]}


peers = WebRTCPeers()
"""The process-wide registry used by the signalling views."""
