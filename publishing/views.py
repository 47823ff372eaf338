"""The studio's publishing pages: review a draft (validation and dry run) and publish it, and
the version history with the diff between two versions. Served under /studio/ beside the
authoring pages; publishing imports authoring, never the reverse."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from accounts.access import area_required, signed_in_user
from accounts.roles import Area
from authoring.draft_requests import draft_page_or_404
from authoring.selectors import review_state
from authoring.services import DraftConflict
from publishing import selectors
from publishing.cost_estimate import CostEstimate, candidates_from
from publishing.dry_runs import DryRunRefused, document_dry_run, dry_run_estimate
from publishing.models import PublishedVersion
from publishing.services import PublishNeedsReview, PublishRejected, version_publish


@area_required(Area.STUDIO)
def package_versions(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    """The draft's published versions, newest first; with ``?from=A&to=B`` (two version
    numbers) the diff and the list of changes between them."""
    draft = draft_page_or_404(request, draft_id)
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
        diff = selectors.version_diff(old=old, new=new)
        changes = selectors.version_changes(old=old, new=new)
    elif len(versions) >= 2:
        old, new = versions[1], versions[0]
    return render(
        request,
        "publishing/package_versions.html",
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
    """Review before publishing: the validation result, the dry run of the saved draft with the
    cost estimate of an exam and of a sitting of ``?candidates=N`` (default 100), the review
    state (approval, unresolved comments) and the Publish button (POST, with the revision
    reviewed: a later save is a conflict; an incomplete required review is refused)."""
    draft = draft_page_or_404(request, draft_id)
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
        except PublishNeedsReview as refused:
            messages.error(request, str(refused))
        else:
            number = outcome.version.number
            messages.success(
                request,
                f"Published as version {number}."
                if outcome.created
                else f"Unchanged since version {number}; nothing new to publish.",
            )
            return redirect("publishing:package-versions", draft_id=draft.id)
        draft.refresh_from_db()
    report: dict[str, object] | None = None
    validation: dict[str, object] | None = None
    cost: CostEstimate | None = None
    candidates = candidates_from(request.GET.get("candidates", ""))
    try:
        report = document_dry_run(document=draft.document)
    except DryRunRefused as refused:
        validation = refused.report
    else:
        cost = dry_run_estimate(document=draft.document, report=report, candidates=candidates)
    return render(
        request,
        "publishing/package_publish.html",
        {
            "draft": draft,
            "report": report,
            "validation": validation,
            "cost": cost,
            "candidates": candidates,
            "review": review_state(draft=draft),
        },
    )
