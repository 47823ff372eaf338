"""The marking area (/marking/): the list of marked sessions, the moderation workspace, the
printable per-candidate report, the cohort view and the CSV exports. Thin: reads go through
``marking.selectors`` (authorization in the queryset: other people's sessions are 404), writes
through ``marking.services``; forms post back and redirect (no script needed to moderate).
"""

from __future__ import annotations

import csv
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from accounts.access import area_required
from accounts.roles import Area
from marking import charts, selectors, services
from marking.models import SessionMark
from marking.services import MarkingRefused


def _mark(request: HttpRequest, session_id: Any) -> SessionMark:
    try:
        return selectors.mark_get(user=request.user, session_id=session_id)
    except SessionMark.DoesNotExist:
        raise Http404("No such marked session.") from None


def _version(request: HttpRequest, version_id: Any) -> Any:
    from publishing.models import PublishedVersion

    try:
        return selectors.version_get(user=request.user, version_id=version_id)
    except PublishedVersion.DoesNotExist:
        raise Http404("No such assessment.") from None


@area_required(Area.MARKING)
def home(request: HttpRequest) -> HttpResponse:
    marks = list(selectors.mark_list(user=request.user))
    groups: dict[Any, list[SessionMark]] = {}
    for mark in marks:
        groups.setdefault(mark.session.sitting.version, []).append(mark)
    return render(request, "marking/home.html", {"groups": list(groups.items())})


@area_required(Area.MARKING)
def session_detail(request: HttpRequest, session_id: Any) -> HttpResponse:
    mark = _mark(request, session_id)
    view = selectors.mark_view(mark)
    return render(
        request,
        "marking/session.html",
        {**view, "levels": services.LEVEL_NAMES, "user_is_second": False},
    )


@area_required(Area.MARKING)
def session_report(request: HttpRequest, session_id: Any) -> HttpResponse:
    mark = _mark(request, session_id)
    view = selectors.mark_view(mark)
    return render(
        request,
        "marking/report.html",
        {**view, "reproducible": services.verify_marks(mark)},
    )


def _csv_response(filename: str, header: list[str], rows: list[list[str]]) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow(header)
    writer.writerows(rows)
    return response


@area_required(Area.MARKING)
def session_csv(request: HttpRequest, session_id: Any) -> HttpResponse:
    mark = _mark(request, session_id)
    header, rows = selectors.export_rows([mark])
    name = f"marks-{slugify(mark.session.candidate.username)}-{str(mark.session_id)[:8]}.csv"
    return _csv_response(name, header, rows)


@area_required(Area.MARKING)
def cohort(request: HttpRequest, version_id: Any) -> HttpResponse:
    version = _version(request, version_id)
    view = selectors.cohort_view(user=request.user, version=version)
    summary = view["summary"]
    return render(
        request,
        "marking/cohort.html",
        {
            **view,
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
def cohort_csv(request: HttpRequest, version_id: Any) -> HttpResponse:
    version = _version(request, version_id)
    header, rows = selectors.export_rows(
        selectors.mark_list(user=request.user, version_id=version.pk)
    )
    return _csv_response(f"marks-{slugify(version.title)}-v{version.number}.csv", header, rows)


# --- moderation forms ---------------------------------------------------------------------------


def _back(mark: SessionMark, anchor: str = "") -> HttpResponse:
    url = reverse("marking:session", args=[mark.session_id])
    return redirect(f"{url}#{anchor}" if anchor else url)


def _refused(request: HttpRequest, refusal: MarkingRefused) -> None:
    messages.error(request, refusal.message)


@area_required(Area.MARKING)
@require_POST
def override(request: HttpRequest, session_id: Any) -> HttpResponse:
    mark = _mark(request, session_id)
    key = request.POST.get("target_key", "")
    try:
        services.override_decision(
            mark=mark,
            target_key=key,
            level=request.POST.get("level", ""),
            rationale=request.POST.get("rationale", ""),
            user=request.user,
        )
        messages.success(request, f"Override recorded for {key}.")
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, f"target-{slugify(key)}")


@area_required(Area.MARKING)
@require_POST
def lock(request: HttpRequest, session_id: Any) -> HttpResponse:
    mark = _mark(request, session_id)
    try:
        services.lock_marks(mark=mark, user=request.user, note=request.POST.get("note", ""))
        messages.success(request, "Marks locked.")
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, "moderation")


@area_required(Area.MARKING)
@require_POST
def appeal(request: HttpRequest, session_id: Any) -> HttpResponse:
    mark = _mark(request, session_id)
    try:
        services.open_appeal(mark=mark, user=request.user, reason=request.POST.get("reason", ""))
        messages.success(request, "Appeal opened: the marks are unlocked.")
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, "moderation")


@area_required(Area.MARKING)
@require_POST
def second_marking(request: HttpRequest, session_id: Any) -> HttpResponse:
    mark = _mark(request, session_id)
    try:
        services.set_second_marking(
            mark=mark, user=request.user, required=request.POST.get("required") == "on"
        )
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, "moderation")


@area_required(Area.MARKING)
@require_POST
def second_marks(request: HttpRequest, session_id: Any) -> HttpResponse:
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
        services.record_second_marks(mark=mark, user=request.user, marks=items)
        messages.success(request, "Second marks recorded.")
    except MarkingRefused as refusal:
        _refused(request, refusal)
    return _back(mark, "moderation")
