"""Pages of the exam-room preview (``sessions.previews``): start one from the studio, and the
staff-only panel data of what the controller decided. The journey pages themselves are the
candidate's (``sessions.views``), opened by the author for their own preview only."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from accounts.access import area_required, signed_in_user
from accounts.roles import Area
from authoring import selectors as authoring_selectors
from authoring.models import DraftPackage
from sessions import exam_room, previews, services


@area_required(Area.STUDIO)
@require_POST
def preview_start(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    """ "Try in the exam room": a new sandbox session of the saved draft for the author; on to
    its first journey step. A draft with errors goes back to the studio preview, saying so."""
    try:
        draft = authoring_selectors.draft_get(user=request.user, draft_id=draft_id)
    except DraftPackage.DoesNotExist:
        raise Http404("No such package") from None
    try:
        session = services.preview_start(draft=draft, user=signed_in_user(request))
    except previews.PreviewRejected as rejected:
        messages.error(request, str(rejected))
        return redirect("authoring:package-preview", draft_id=draft.pk)
    return HttpResponseRedirect(exam_room.step_url(session, exam_room.next_step(session)))


@never_cache
@area_required(Area.STUDIO)
@require_GET
def preview_decisions(request: HttpRequest, session_id: uuid.UUID) -> JsonResponse:
    """The panel's data (``?after=<seq>``): only for the author's own preview session."""
    session = previews.preview_session(user=request.user, session_id=session_id)
    if session is None:
        raise Http404("No such preview")
    try:
        after = max(0, int(request.GET.get("after", "0")))
    except ValueError:
        return JsonResponse({"error": "after must be a whole number"}, status=400)
    return JsonResponse(previews.preview_decisions(session=session, after_seq=after))
