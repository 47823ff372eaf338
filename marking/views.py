"""The marking area (/marking/): the list of marked sessions, the moderation workspace, the
printable per-candidate report, the cohort view and the CSV exports. Thin: reads go through
``marking.selectors`` (authorization in the queryset: other people's sessions are 404), writes
through ``marking.services``; forms post back and redirect (no script needed to moderate).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from accounts.access import area_required, signed_in_user
from accounts.roles import Area
from marking import charts, grounding, selectors, services
from marking.models import SessionMark
from marking.services import MarkingRefused
from publishing.models import PublishedVersion
from sessions.costs import costs_of
from web.csv_export import csv_response


def _mark(request: HttpRequest, session_id: str) -> SessionMark:
    try:
        return selectors.mark_get(user=request.user, session_id=session_id)
    except SessionMark.DoesNotExist:
        raise Http404("No such marked session.") from None


def _version(request: HttpRequest, version_id: str) -> PublishedVersion:
    try:
        return selectors.version_get(user=request.user, version_id=version_id)
    except PublishedVersion.DoesNotExist:
        raise Http404("No such assessment.") from None


@area_required(Area.MARKING)
def home(request: HttpRequest) -> HttpResponse:
    marks = list(selectors.mark_list(user=request.user))
    groups: dict[PublishedVersion, list[SessionMark]] = {}
    for mark in marks:
        groups.setdefault(mark.session.sitting.version, []).append(mark)
    return render(request, "marking/home.html", {"groups": list(groups.items())})


@area_required(Area.MARKING)
def session_detail(request: HttpRequest, session_id: str) -> HttpResponse:
    mark = _mark(request, session_id)
    view = selectors.mark_view(mark)
    return render(
        request,
        "marking/session.html",
        {
            **view.as_context(),
            "levels": services.LEVEL_NAMES,
            "user_is_second": False,
            "costs": costs_of([mark.session_id]),
            "grounded": grounding.grounded_questions(mark),
        },
    )


@area_required(Area.MARKING)
def session_report(request: HttpRequest, session_id: str) -> HttpResponse:
    mark = _mark(request, session_id)
    view = selectors.mark_view(mark)
    return render(
        request,
        "marking/report.html",
        {**view.as_context(), "reproducible": selectors.verify_marks(mark)},
    )


@area_required(Area.MARKING)
def session_csv(request: HttpRequest, session_id: str) -> HttpResponse:
    mark = _mark(request, session_id)
    header, rows = selectors.export_rows([mark])
    name = f"marks-{slugify(mark.session.candidate.username)}-{str(mark.session_id)[:8]}.csv"
    return csv_response(name, header, rows)


@area_required(Area.MARKING)
def cohort(request: HttpRequest, version_id: str) -> HttpResponse:
    version = _version(request, version_id)
    view = selectors.cohort_view(user=request.user, version=version)
    summary = view["summary"]
    return render(
        request,
        "marking/cohort.html",
        {
            **view,
            "unexplained": grounding.unexplained(view["marks"]),
            "costs": costs_of(mark.session_id for mark in view["marks"]),
            "histogram_svg": charts.histogram_svg(summary["histogram"]) if summary else "",
            "target_svgs": [
                (t, charts.levels_svg(t["levels"], t["label"])) for t in summary["targets"]
            ]
            if summary
            else [],
            "followup_svg": charts.followups_svg(summary["fairness"]["nodes"]) if summary else "",
        },
    )


@area_required(Area.MARKING)
def cohort_csv(request: HttpRequest, version_id: str) -> HttpResponse:
    version = _version(request, version_id)
    header, rows = selectors.export_rows(
        selectors.mark_list(user=request.user, version_id=version.pk)
    )
    return csv_response(f"marks-{slugify(version.title)}-v{version.number}.csv", header, rows)


# --- moderation forms ---------------------------------------------------------------------------


def _back(mark: SessionMark, anchor: str = "") -> HttpResponse:
    url = reverse("marking:session", args=[mark.session_id])
    return redirect(f"{url}#{anchor}" if anchor else url)


def _refused(request: HttpRequest, refusal: MarkingRefused) -> None:
    messages.error(request, refusal.message)


@area_required(Area.MARKING)
@require_POST
def override(request: HttpRequest, session_id: str) -> HttpResponse:
    mark = _mark(request, session_id)
    key = request.POST.get("target_key", "")
    try:
        services.decision_override(
            mark=mark,
            target_key=key,
            level=request.POST.get("level", ""),
            rationale=request.POST.get("rationale", ""),
            user=signed_in_user(request),
        )
        messages.success(request, f"Override recorded for {key}.")
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, f"target-{slugify(key)}")


@area_required(Area.MARKING)
@require_POST
def lock(request: HttpRequest, session_id: str) -> HttpResponse:
    mark = _mark(request, session_id)
    try:
        services.marks_lock(
            mark=mark, user=signed_in_user(request), note=request.POST.get("note", "")
        )
        messages.success(request, "Marks locked.")
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, "moderation")


@area_required(Area.MARKING)
@require_POST
def appeal(request: HttpRequest, session_id: str) -> HttpResponse:
    mark = _mark(request, session_id)
    try:
        services.appeal_open(
            mark=mark, user=signed_in_user(request), reason=request.POST.get("reason", "")
        )
        messages.success(request, "Appeal opened: the marks are unlocked.")
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, "moderation")


@area_required(Area.MARKING)
@require_POST
def release(request: HttpRequest, session_id: str) -> HttpResponse:
    """Release the locked marks to the candidate (``marking.services.result_release``)."""
    mark = _mark(request, session_id)
    try:
        services.result_release(mark=mark, user=signed_in_user(request))
        messages.success(request, "Result released: the candidate can see it and appeal.")
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, "moderation")


@area_required(Area.MARKING)
@require_POST
def second_marking(request: HttpRequest, session_id: str) -> HttpResponse:
    mark = _mark(request, session_id)
    try:
        services.second_marking_set(
            mark=mark, user=signed_in_user(request), required=request.POST.get("required") == "on"
        )
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, "moderation")


@area_required(Area.MARKING)
@require_POST
def second_marks(request: HttpRequest, session_id: str) -> HttpResponse:
    mark = _mark(request, session_id)
    items = []
    for item in mark.result_json["targets"]:
        key = item["key"]
        level = request.POST.get(f"level:{key}", "")
        if level:
            items.append(
                {"targetKey": key, "level": level, "rationale": request.POST.get(f"note:{key}", "")}
            )
    try:
        services.second_marks_record(mark=mark, user=signed_in_user(request), marks=items)
        messages.success(request, "Second marks recorded.")
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, "moderation")
