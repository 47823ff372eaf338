"""Who is who in a session's LiveKit room: the identities ``bot.livekit`` mints and reads back.
No Pipecat and no LiveKit here, so the transport-presence watch can tell the candidate from the
bot or a listening proctor without importing the LiveKit transport."""

from __future__ import annotations

from enum import StrEnum


class ParticipantRole(StrEnum):
    """Who joins an exam room."""

    CANDIDATE = "candidate"
    BOT = "bot"
    PROCTOR = "proctor"


def participant_identity(role: ParticipantRole, subject: object) -> str:
    """``<role>-<subject>``: the user id for people, the session id for the bot."""
    return f"{role.value}-{subject}"


def role_of_identity(identity: str) -> ParticipantRole | None:
    """The role an identity was minted for (``None`` for identities we did not mint)."""
    prefix, separator, _ = identity.partition("-")
    if not separator:
        return None
    try:
        return ParticipantRole(prefix)
    except ValueError:
        return None
