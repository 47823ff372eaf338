"""The authoring studio: package list, JSON editor with live validation, co-authors, import,
export and preview. The publish and version-history pages are publishing's (publishing/views.py)."""

from __future__ import annotations

import json
import uuid

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from accounts.access import area_required, signed_in_user
from accounts.roles import Area
from authoring import selectors, services
from authoring.draft_requests import draft_page_or_404
from authoring.example_packages import example_titles


@area_required(Area.STUDIO)
def package_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "authoring/package_list.html",
        {"drafts": selectors.draft_list(user=request.user), "examples": example_titles()},
    )


@area_required(Area.STUDIO)
@require_POST
def package_create(request: HttpRequest) -> HttpResponse:
    if request.POST.get("start") == "empty":
        draft = services.draft_create_empty(
            owner=signed_in_user(request), title=request.POST.get("title", "")
        )
        messages.success(
            request, "Created an empty package. Add its parts with the flow and the forms."
        )
        return redirect("authoring:package-edit", draft_id=draft.id)
    example = request.POST.get("example", "")
    try:
        draft = services.draft_create_from_example(owner=signed_in_user(request), example=example)
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("authoring:package-list")
    messages.success(request, f"Created “{draft.title}” from the example. Edit it below.")
    return redirect("authoring:package-edit", draft_id=draft.id)


@area_required(Area.STUDIO)
def package_edit(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    draft = draft_page_or_404(request, draft_id)
    user = signed_in_user(request)
    return render(
        request,
        "authoring/package_edit.html",
        {
            "draft": draft,
            "document_text": json.dumps(draft.document, indent=2, ensure_ascii=False),
            "report_json": draft.last_report,
            "latest_version": draft.versions.filter(is_preview=False).order_by("-number").first(),
            "collaborators": sorted(u.username for u in draft.collaborators.all()),
            "may_share": user.pk == draft.owner_id or user.role == "admin",
            # The languages a package may use: the form's language picker.
            "languages": [list(pair) for pair in settings.LANGUAGES],
        },
    )


@area_required(Area.STUDIO)
@require_POST
def package_collaborators(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    """Add or remove one co-author (the owner or an admin only)."""
    draft = draft_page_or_404(request, draft_id)
    username = request.POST.get("username", "").strip()
    add = request.POST.get("action") == "add"
    try:
        services.draft_change_collaborator(
            draft=draft, actor=signed_in_user(request), username=username, add=add
        )
    except services.CollaboratorsRefused as refused:
        messages.error(request, str(refused).capitalize() + ".")
    except ValueError as problem:
        messages.error(request, f"Co-authors not changed: {problem}.")
    else:
        messages.success(
            request, f"{username} can now edit this package." if add else f"{username} removed."
        )
    return redirect(reverse("authoring:package-edit", args=[draft.id]) + "#collaborators")


@area_required(Area.STUDIO)
def package_export(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    """The saved document as a JSON file download."""
    draft = draft_page_or_404(request, draft_id)
    body = json.dumps(draft.document, indent=2, ensure_ascii=False) + "\n"
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    name = slugify(draft.title) or "package"
    response["Content-Disposition"] = f'attachment; filename="{name}-r{draft.revision}.json"'
    return response


MAX_IMPORT_BYTES = 2 * 1024 * 1024


@area_required(Area.STUDIO)
@require_POST
def package_import(request: HttpRequest) -> HttpResponse:
    """A new draft from an uploaded package file (kept as it is, even if it does not validate
    yet: the editor shows what to fix)."""
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a package file to import.")
        return redirect("authoring:package-list")
    if upload.size is not None and upload.size > MAX_IMPORT_BYTES:
        messages.error(request, f"{upload.name} is larger than 2 MB; not imported.")
        return redirect("authoring:package-list")
    try:
        document = json.loads(upload.read().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        messages.error(request, f"{upload.name} is not a JSON file ({exc}); not imported.")
        return redirect("authoring:package-list")
    if not isinstance(document, dict):
        messages.error(request, f"{upload.name} does not hold one JSON object; not imported.")
        return redirect("authoring:package-list")
    draft = services.draft_create(owner=signed_in_user(request), document=document)
    messages.success(request, f"Imported “{draft.title}” from {upload.name}.")
    return redirect("authoring:package-edit", draft_id=draft.id)


@area_required(Area.STUDIO)
def package_preview(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    """Take the saved draft as a candidate would (text), beside a staff panel of what the
    runtime controller decided (static/js/studio-preview.js; nothing is stored)."""
    draft = draft_page_or_404(request, draft_id)
    report = draft.last_report or {}
    commands = [
        ("repeat", "Repeat the question"),
        ("clarification", "Ask for clarification"),
        ("request_rephrase", "Ask to rephrase"),
        ("skip", "Skip"),
        ("pause", "Pause"),
        ("resume", "Resume"),
    ]
    return render(
        request,
        "authoring/package_preview.html",
        {"draft": draft, "passes": report.get("result") == "pass", "commands": commands},
    )
