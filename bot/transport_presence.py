"""The candidate's media connection, reported as ``candidate_connection_changed`` (issue 15).

The exam room's socket is tracked by the web tier (``proctoring.presence_tracking``); the voice
transport is tracked here: the SmallWebRTC peer (``on_client_connected`` /
``on_client_disconnected``, channel ``webrtc``) and the LiveKit candidate participant (the same
events, for the participant whose identity was minted for the candidate, channel ``livekit``;
a proctor listening in is not the candidate). :func:`watch` calls ``on_change(status,
channel)`` on each change; the bot core stores the event and lets the controller decide
(``ioa.runtime.absence``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from pipecat.transports.base_transport import BaseTransport
from pipecat.transports.livekit.transport import LiveKitTransport

from bot.voice.participants import ParticipantRole, role_of_identity

Status = Literal["connected", "disconnected"]
Channel = Literal["webrtc", "livekit"]
OnChange = Callable[[Status, Channel], Awaitable[None]]


def _is_candidate(transport: BaseTransport, client: object) -> bool:
    if not isinstance(transport, LiveKitTransport):
        return True  # a SmallWebRTC peer is the candidate's browser
    identity = client.get("id") if isinstance(client, dict) else client
    return role_of_identity(str(identity)) is ParticipantRole.CANDIDATE


def watch(transport: BaseTransport | None, on_change: OnChange) -> None:
    """Report the candidate's media connection coming and going (module docstring)."""
    if transport is None:
        return
    channel: Channel = "livekit" if isinstance(transport, LiveKitTransport) else "webrtc"

    @transport.event_handler("on_client_connected")
    async def _connected(source: BaseTransport, client: object) -> None:
        if _is_candidate(source, client):
            await on_change("connected", channel)

    @transport.event_handler("on_client_disconnected")
    async def _disconnected(source: BaseTransport, client: object) -> None:
        if _is_candidate(source, client):
            await on_change("disconnected", channel)
