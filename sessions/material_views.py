"""Staff's page for a sitting's candidate materials (issue #35): who has uploaded their report
or submission, and a bulk upload (a zip whose files are named by candidate username or email,
``sessions.materials.materials_bulk_upload``) with a line per file saying what happened and
one sentence counting the operating-system metadata files it skipped (``__MACOSX/``,
``.DS_Store``, ``Thumbs.db``, ...).
Reached from the proctor's sitting page; sittings outside ``Sitting.objects.visible_to`` are
404, candidates 403."""

from __future__ import annotations

import uuid

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.access import area_required
from accounts.models import User
from accounts.roles import Area
from sessions import services
from sessions.material_text import MAX_UPLOAD_BYTES, MaterialRefused
from sessions.materials import BulkUpload, material_kinds
from sessions.models import CandidateMaterial, Sitting

MAX_BULK_BYTES = 20 * MAX_UPLOAD_BYTES
"""The largest bulk zip read (200 MB)."""


@never_cache
@area_required(Area.PROCTOR)
@require_http_methods(["GET", "POST"])
def sitting_materials(request: HttpRequest, sitting_id: uuid.UUID) -> HttpResponse:
    """The sitting's materials and the bulk upload form (module docstring)."""
    sitting = Sitting.objects.visible_to(request.user).filter(pk=sitting_id).first()
    if sitting is None:
        raise Http404(_("No such sitting."))
    kinds = material_kinds(sitting.version)
    errors: list[str] = []
    result: BulkUpload | None = None
    if request.method == "POST" and kinds and isinstance(request.user, User):
        upload = request.FILES.get("archive")
        try:
            if upload is None:
                raise MaterialRefused(_("Choose a ZIP file to upload."))
            result = services.materials_bulk_upload(
                sitting=sitting,
                kind=kinds[0],
                data=upload.read(MAX_BULK_BYTES + 1),
                uploaded_by=request.user,
            )
        except MaterialRefused as refused:
            errors = [refused.message]
    stored = {
        m.session_id: m
        for m in CandidateMaterial.objects.visible_to(request.user)
        .filter(session__sitting=sitting)
        .defer("original", "text")
    }
    sessions = sitting.sessions.filter(is_preview=False).select_related("candidate")
    context = {
        "sitting": sitting,
        "kinds": kinds,
        "errors": errors,
        "lines": result.lines if result else (),
        "system_files": result.system_files if result else 0,
        "rows": [(s, stored.get(s.pk)) for s in sessions.order_by("candidate__username")],
    }
    return render(
        request, "sessions/sitting_materials.html", context, status=400 if errors else 200
    )
