"""The draft a request names, for the studio's pages and the API, and the answer to an edit
conflict.

The authoring and publishing views (pages and API) all start from "the draft in the URL, if the
signed-in user may edit it": other people's drafts answer 404 exactly like missing ones (the
selector filters them out), and a draft id of the wrong shape is a 404 too, never a 500.
"""

from __future__ import annotations

import uuid

from django.http import Http404, HttpRequest
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from authoring import selectors
from authoring.models import DraftPackage
from authoring.services import DraftConflict


def draft_page_or_404(request: HttpRequest, draft_id: uuid.UUID) -> DraftPackage:
    """The draft for a studio page; Http404 when it is absent or not the user's."""
    try:
        return selectors.draft_get(user=request.user, draft_id=draft_id)
    except DraftPackage.DoesNotExist:
        raise Http404("No such package") from None


def draft_api_or_404(request: Request, draft_id: str) -> DraftPackage:
    """The draft for an API view; NotFound ("No such package.") when it is absent, not the
    user's, or ``draft_id`` is not a UUID."""
    try:
        return selectors.draft_get(user=request.user, draft_id=draft_id)
    except (DraftPackage.DoesNotExist, ValueError, TypeError):
        raise NotFound("No such package.") from None


def edit_conflict_response(conflict: DraftConflict) -> Response:
    """409 with the shared error body and the draft's current revision."""
    return Response(
        {
            "error": {
                "code": "conflict",
                "message": str(conflict),
                "details": {"currentRevision": conflict.current_revision},
            }
        },
        status=status.HTTP_409_CONFLICT,
    )
