"""Voice signalling served by the Django app (ASGI): SmallWebRTC offer/answer and LiveKit tokens.

``POST  …/sessions/<id>/webrtc/offer``  ``{"sdp", "type": "offer", "pc_id"?, "restart_pc"?}``
  → ``{"sdp", "type": "answer", "pc_id"}``. Only the signed-in candidate who owns the session,
  while the session is not over. A known ``pc_id`` renegotiates that connection; otherwise a new
  connection replaces the session's previous one and is handed to the bot starter
  (``bot.voice.webrtc``).
``PATCH …/sessions/<id>/webrtc/offer``  ``{"pc_id", "candidates": [{"candidate", "sdp_mid",
  "sdp_mline_index"}]}`` → 204: trickled ICE candidates (Pipecat's JS client sends them).
``POST  …/sessions/<id>/livekit/token`` → ``{"url", "room", "identity", "role", "token",
  "expiresAt"}``: the session's candidate gets a publish-microphone token, its proctors (and
  admins) a listen-only one; anyone else 404.

All are same-origin JSON endpoints behind the session cookie and CSRF (send ``X-CSRFToken``).
Errors use the API's body ``{"error": {"code", "message", "details"}}``. The views are async:
the aiortc peer connection lives in the server's event loop, next to the inline bot.
"""

from __future__ import annotations

import uuid
from typing import Final

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.models import User
from accounts.roles import LISTENER_ROLES
from ioa.events import TERMINAL_STATES
from sessions.exam_room import page_language
from sessions.models import ExamSession
from sessions.windows import may_start
from web.json_input import JsonInputError, parse_json

MAX_BODY_BYTES: Final = 64 * 1024
"""An SDP offer is a few kilobytes; anything much larger is refused."""
MAX_CANDIDATES: Final = 64


def _error(status: int, code: str, message: str, **details: object) -> JsonResponse:
    return JsonResponse(
        {"error": {"code": code, "message": message, "details": details}}, status=status
    )


def _json_body(request: HttpRequest) -> dict[str, object] | JsonResponse:
    if len(request.body) > MAX_BODY_BYTES:
        return _error(413, "too_large", "The request body is too large.")
    try:
        body: object = parse_json(request.body or b"{}")
    except JsonInputError as exc:
        return _error(400, exc.code, exc.message)
    if not isinstance(body, dict):
        return _error(400, "invalid", "The request body must be a JSON object.")
    return body


async def _signed_in(request: HttpRequest) -> User | None:
    user = await request.auser()
    if not isinstance(user, User) or not user.is_authenticated or not user.is_active:
        return None
    return user


@never_cache
@require_http_methods(["POST", "PATCH"])
async def webrtc_offer(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """SDP offer → answer (POST) and trickled ICE candidates (PATCH) for the candidate's own
    session."""
    from bot.voice.webrtc import IceCandidateUpdate, VoiceUnavailableError, peers

    user = await _signed_in(request)
    if user is None:
        return _error(401, "not_authenticated", "Sign in to join the exam.")
    session = await ExamSession.objects.filter(pk=session_id, candidate=user).afirst()
    if session is None:
        return _error(404, "not_found", "Not found.")
    body = _json_body(request)
    if isinstance(body, JsonResponse):
        return body

    if request.method == "PATCH":
        pc_id = body.get("pc_id")
        raw = body.get("candidates")
        if not isinstance(pc_id, str) or not isinstance(raw, list) or len(raw) > MAX_CANDIDATES:
            return _error(400, "invalid", "Send pc_id and a list of candidates.")
        try:
            updates = [
                IceCandidateUpdate(
                    candidate=str(item.get("candidate") or ""),
                    sdp_mid=item.get("sdp_mid"),
                    sdp_mline_index=item.get("sdp_mline_index"),
                )
                for item in raw
            ]
            known = await peers.add_ice_candidates(session.pk, pc_id, updates)
        except (AttributeError, AssertionError, ValueError, IndexError, TypeError):
            return _error(400, "invalid", "A candidate could not be parsed.")
        if not known:
            return _error(404, "not_found", "No such peer connection.")
        return HttpResponse(status=204)

    if session.state in TERMINAL_STATES:
        return _error(409, "session_over", "This exam session is over.", state=session.state)
    if not await sync_to_async(_may_start)(session.pk):
        return _error(403, "window_closed", "The exam cannot start now: outside its start window.")
    sdp, sdp_type = body.get("sdp"), body.get("type")
    pc_id = body.get("pc_id")
    if not isinstance(sdp, str) or not sdp.strip() or sdp_type != "offer":
        return _error(400, "invalid", 'Send an SDP offer: {"sdp": "...", "type": "offer"}.')
    if pc_id is not None and not isinstance(pc_id, str):
        return _error(400, "invalid", "pc_id must be a string.")
    if "\nm=audio " not in sdp.replace("\r\n", "\n"):
        return _error(400, "invalid", "The SDP offer has no audio.")
    language = await sync_to_async(page_language)(session)
    try:
        answer = await peers.answer(
            session.pk,
            sdp=sdp,
            sdp_type=sdp_type,
            pc_id=pc_id,
            restart_pc=bool(body.get("restart_pc", False)),
            slower=bool(getattr(session, "slower_speech", False)),
            language=language,
        )
    except VoiceUnavailableError:
        return _error(503, "voice_unavailable", "Voice is not available on this server.")
    except ValueError:
        return _error(400, "invalid", "The SDP offer could not be parsed.")
    return JsonResponse(answer)


@never_cache
@require_http_methods(["POST"])
async def livekit_token(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """A LiveKit token for the session's room: the candidate's own, or a listen-only one for a
    proctor of its sitting (or an admin)."""
    from bot.livekit import LiveKitNotConfiguredError, candidate_token, proctor_token

    user = await _signed_in(request)
    if user is None:
        return _error(401, "not_authenticated", "Sign in first.")
    role = getattr(user, "role", None)
    # An author's own exam-room preview (``sessions.previews``): they are its candidate.
    if await ExamSession.objects.previews_of(user).filter(pk=session_id).aexists():
        role = "candidate"
    if role == "candidate":
        session = await ExamSession.objects.filter(pk=session_id, candidate=user).afirst()
    elif role in LISTENER_ROLES:
        session = await ExamSession.objects.visible_to(user).filter(pk=session_id).afirst()
    else:
        session = None
    if session is None:
        return _error(404, "not_found", "Not found.")
    if session.state in TERMINAL_STATES:
        return _error(409, "session_over", "This exam session is over.", state=session.state)
    try:
        issued = (
            candidate_token(session.pk, user.pk)
            if role == "candidate"
            else proctor_token(session.pk, user.pk)
        )
    except LiveKitNotConfiguredError:
        return _error(503, "voice_unavailable", "LiveKit is not configured on this server.")
    return JsonResponse(issued.as_json())


def _may_start(session_id: uuid.UUID) -> bool:
    """Whether the candidate may start now (``sessions.windows``)."""
    session = ExamSession.objects.select_related("sitting").get(pk=session_id)
    return may_start(session)
