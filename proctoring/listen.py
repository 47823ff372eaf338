"""Whether the proctor's session page offers *Listen in* (docs/voice.md, "Listening in").

A proctor (or an admin) may listen to a voice session carried by LiveKit: the page's player
(``static/js/proctor-listen.js`` with ``static/vendor/proctor-listen.js``) asks
``voice:livekit-token`` for a listen-only token and joins the session's room. :func:`listen_in`
says whether the control is offered and, when it is not, why — the page shows that sentence
instead of the control.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import NoReverseMatch, reverse

from accounts.models import Requester
from accounts.roles import LISTENER_ROLES
from ioa.events import TERMINAL_STATES
from sessions.bot_port import examiner_bot
from sessions.exam_room import voice_transport
from sessions.models import ExamSession


@dataclass(frozen=True, slots=True)
class ListenIn:
    """The control's availability: the token URL when offered, else the reason it is not."""

    token_url: str | None
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.token_url is not None


def _livekit_configured() -> bool:
    bot = examiner_bot()  # sessions.bot_port; none on a web tier without the bot app
    return bot is not None and bot.listen_in_configured()


def listen_in(session: ExamSession, user: Requester) -> ListenIn:
    """Whether ``user`` may listen in on ``session`` from its page, and why not."""
    if getattr(user, "role", None) not in LISTENER_ROLES:
        return ListenIn(None, "Listening in is for proctors and admins.")
    if session.exam_mode == "text":
        return ListenIn(None, "This candidate answers in writing: there is no audio to listen to.")
    if session.exam_mode != "voice":
        return ListenIn(
            None,
            "The candidate has not chosen voice yet. Listening in is possible once they answer "
            "by voice (reload this page then).",
        )
    if voice_transport() != "livekit":
        return ListenIn(
            None,
            "Listening in needs LiveKit (VIVA_VOICE_TRANSPORT=livekit). This server carries voice "
            "peer to peer between the candidate and the examiner (SmallWebRTC).",
        )
    if not _livekit_configured():
        return ListenIn(
            None,
            "LiveKit is not configured on this server (VIVA_LIVEKIT_URL, LIVEKIT_API_KEY, "
            "LIVEKIT_API_SECRET).",
        )
    if session.state in TERMINAL_STATES:
        return ListenIn(None, "The exam is over: there is nothing to listen to.")
    try:
        url = reverse("voice:livekit-token", kwargs={"session_id": session.pk})
    except NoReverseMatch:
        return ListenIn(None, "Voice is not served by this site (the voice URLs are not mounted).")
    return ListenIn(url)
