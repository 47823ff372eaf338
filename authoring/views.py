"""The authoring studio: package list, JSON editor with live validation, version history."""

from __future__ import annotations

import json
import uuid

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from accounts.access import area_required, signed_in_user
from accounts.roles import Area
from authoring import selectors, services
from authoring.example_packages import example_titles
from authoring.models import DraftPackage
from authoring.services import DraftConflict
from publishing import selectors as publishing_selectors
from publishing.dry_runs import DryRunRefused, document_dry_run
from publishing.models import PublishedVersion
from publishing.services import PublishRejected, version_publish


def _draft_or_404(request: HttpRequest, draft_id: uuid.UUID) -> DraftPackage:
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
    draft = _draft_or_404(request, draft_id)
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
        },
    )


@area_required(Area.STUDIO)
def package_versions(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    draft = _draft_or_404(request, draft_id)
    versions = list(
        draft.versions.filter(is_preview=False).select_related("published_by").order_by("-number")
    )
    by_number = {v.number: v for v in versions}
    diff: list[str] | None = None
    changes: list[dict[str, object]] | None = None
    old: PublishedVersion | None = None
    new: PublishedVersion | None = None
    try:
        a, b = int(request.GET.get("from", "0")), int(request.GET.get("to", "0"))
    except ValueError:
        a = b = 0
    if a in by_number and b in by_number:
        old, new = by_number[a], by_number[b]
        diff = publishing_selectors.version_diff(old=old, new=new)
        changes = publishing_selectors.version_changes(old=old, new=new)
    elif len(versions) >= 2:
        old, new = versions[1], versions[0]
    return render(
        request,
        "authoring/package_versions.html",
        {
            "draft": draft,
            "versions": versions,
            "diff": diff,
            "changes": changes,
            "old": old,
            "new": new,
        },
    )


@area_required(Area.STUDIO)
def package_publish(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    """Review before publishing: the validation result and the dry run of the saved draft, and
    the Publish button (POST, with the revision reviewed: a later save is a conflict)."""
    draft = _draft_or_404(request, draft_id)
    if request.method == "POST":
        try:
            revision = int(request.POST.get("revision", ""))
        except ValueError:
            revision = draft.revision
        try:
            outcome = version_publish(
                draft=draft, user=signed_in_user(request), expected_revision=revision
            )
        except DraftConflict:
            messages.error(request, "The package was saved since you reviewed it; review again.")
        except PublishRejected as rejected:
            messages.error(request, f"Not published: {rejected}")
        else:
            number = outcome.version.number
            messages.success(
                request,
                f"Published as version {number}."
                if outcome.created
                else f"Unchanged since version {number}; nothing new to publish.",
            )
            return redirect("authoring:package-versions", draft_id=draft.id)
        draft.refresh_from_db()
    report: dict[str, object] | None = None
    validation: dict[str, object] | None = None
    try:
        report = document_dry_run(document=draft.document)
    except DryRunRefused as refused:
        validation = refused.report
    return render(
        request,
        "authoring/package_publish.html",
        {"draft": draft, "report": report, "validation": validation},
    )


@area_required(Area.STUDIO)
@require_POST
def package_collaborators(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    """Add or remove one co-author (the owner or an admin only)."""
    draft = _draft_or_404(request, draft_id)
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
    draft = _draft_or_404(request, draft_id)
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
    draft = _draft_or_404(request, draft_id)
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
