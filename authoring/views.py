"""The authoring studio: package list, JSON editor with live validation, version history."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.access import area_required
from accounts.roles import Area
from authoring import selectors, services
from authoring.example_packages import example_titles
from authoring.models import DraftPackage
from publishing import selectors as publishing_selectors
from publishing.models import PublishedVersion


def _draft_or_404(request: HttpRequest, draft_id: object) -> DraftPackage:
    try:
        return selectors.draft_get(user=request.user, draft_id=draft_id)
    except DraftPackage.DoesNotExist:
        raise Http404("No such package") from None


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
    example = request.POST.get("example", "")
    try:
        draft = services.draft_create_from_example(owner=request.user, example=example)
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("authoring:package-list")
    messages.success(request, f"Created “{draft.title}” from the example. Edit it below.")
    return redirect("authoring:package-edit", draft_id=draft.id)


@area_required(Area.STUDIO)
def package_edit(request: HttpRequest, draft_id: object) -> HttpResponse:
    draft = _draft_or_404(request, draft_id)
    return render(
        request,
        "authoring/package_edit.html",
        {
            "draft": draft,
            "document_text": json.dumps(draft.document, indent=2, ensure_ascii=False),
            "report_json": draft.last_report,
            "latest_version": draft.versions.order_by("-number").first(),
        },
    )


@area_required(Area.STUDIO)
def package_versions(request: HttpRequest, draft_id: object) -> HttpResponse:
    draft = _draft_or_404(request, draft_id)
    versions = list(draft.versions.select_related("published_by").order_by("-number"))
    by_number = {v.number: v for v in versions}
    diff: list[str] | None = None
    old: PublishedVersion | None = None
    new: PublishedVersion | None = None
    try:
        a, b = int(request.GET.get("from", "0")), int(request.GET.get("to", "0"))
    except ValueError:
        a = b = 0
    if a in by_number and b in by_number:
        old, new = by_number[a], by_number[b]
        diff = publishing_selectors.version_diff(old=old, new=new)
    elif len(versions) >= 2:
        old, new = versions[1], versions[0]
    return render(
        request,
        "authoring/package_versions.html",
        {"draft": draft, "versions": versions, "diff": diff, "old": old, "new": new},
    )
