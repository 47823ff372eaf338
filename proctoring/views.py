"""The proctor dashboard's pages (docs/proctoring.md)::

    /proctor/                                     my sittings; schedule a sitting
    /proctor/sittings/<id>/                       the live overview (ws/proctor/sittings/<id>/)
    /proctor/sittings/<id>/candidates/            roster: add a candidate, accommodations
    /proctor/sittings/<id>/candidates/import/     CSV upload, with a report per row
    /proctor/sittings/<id>/invitations/           send invitation links
    /proctor/sessions/<id>/accommodations/        set one candidate's accommodations
    /proctor/sessions/<id>/                       one session, live (ws/sessions/<id>/events/)
    /proctor/sessions/<id>/actions/               an action from a form (without JavaScript)

Every page is in the proctor area (``area_required``: candidates get 403); sittings and
sessions come from ``Sitting.objects.visible_to`` / ``session_for_proctor``, so other
people's answer 404. Forms are plain POSTs with CSRF that work without JavaScript; the scripts
(static/js/proctor-*.js) make the pages live and send actions through the REST API.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.access import area_required, signed_in_user
from accounts.roles import Area
from proctoring import actions, overview, presence, session_detail
from proctoring.listen import listen_in
from publishing.models import PublishedVersion
from sessions import scheduling, services
from sessions.costs import costs_of
from sessions.exam_room import exam_structure
from sessions.models import ExamSession, Sitting

FILTERS = [
    ("all", "All candidates"),
    ("attention", "Needs attention"),
    ("in_progress", "In progress"),
    ("waiting", "Waiting or invited"),
    ("paused", "Paused or recovering"),
    ("finished", "Finished"),
    ("scheduled", "Not invited yet"),
]
FILTER_STATUSES = {
    "in_progress": {"in_progress"},
    "waiting": {"waiting", "invited"},
    "paused": {"paused", "recovering"},
    "finished": {"completed", "aborted", "expired"},
    "scheduled": {"scheduled"},
}


def _sitting(request: HttpRequest, sitting_id: uuid.UUID) -> Sitting:
    sitting = (
        Sitting.objects.visible_to(request.user)
        .select_related("version", "created_by")
        .filter(pk=sitting_id)
        .first()
    )
    if sitting is None:
        raise Http404("No such sitting.")
    return sitting


def _session(request: HttpRequest, session_id: uuid.UUID) -> ExamSession:
    session = actions.session_for_proctor(user=request.user, session_id=session_id)
    if session is None:
        raise Http404("No such session.")
    return session


class PageRow(overview.OverviewRow):
    """An overview row as the page renders it: with the clocks and the connection in words."""

    elapsedText: str
    examLeftText: str
    nodeLeftText: str
    candidateText: str


def needs_attention(row: overview.OverviewRow) -> bool:
    """Rows the "Needs attention" filter keeps: a raised hand, a candidate waiting for the
    proctor's start, a recovery, a lost or unstable connection (the bot's, or the candidate's
    gone too long during the exam), an aborted exam."""
    return bool(
        row["handRaised"]
        or row["examState"] == "ready"
        or row["status"] in ("recovering", "aborted")
        or row["health"] in ("lost", "unstable")
        or row["candidateConnection"]["alert"]
    )


def _filtered(rows: list[PageRow], show: str, query: str) -> list[PageRow]:
    needle = query.strip().lower()
    out = []
    for row in rows:
        if show == "attention" and not needs_attention(row):
            continue
        if show in FILTER_STATUSES and row["status"] not in FILTER_STATUSES[show]:
            continue
        if needle and needle not in f"{row['candidate']} {row['email']}".lower():
            continue
        out.append(row)
    return out


def minutes_text(ms: int | None) -> str:
    """``12:05`` (minutes:seconds) for a duration, ``—`` for none."""
    if ms is None:
        return "—"
    total = max(0, round(ms / 1000))
    return f"{total // 60}:{total % 60:02d}"


# --- home: my sittings, schedule one --------------------------------------------------------------


@never_cache
@area_required(Area.PROCTOR)
@require_http_methods(["GET", "POST"])
def proctor_home(request: HttpRequest) -> HttpResponse:
    """My sittings, and the form to schedule a sitting from a published version."""
    versions = list(
        PublishedVersion.objects.visible_to(request.user)
        .select_related("draft")
        .order_by("-published_at")[:100]
    )
    errors: list[str] = []
    form = {
        "version": "",
        "title": "",
        "scheduled_for": "",
        "start_cutoff_at": "",
        "authorise": False,
        "practice": False,
    }
    if request.method == "POST":
        form = {
            "version": request.POST.get("version", ""),
            "title": request.POST.get("title", ""),
            "scheduled_for": request.POST.get("scheduled_for", ""),
            "start_cutoff_at": request.POST.get("start_cutoff_at", ""),
            "authorise": request.POST.get("proctor_authorises_start") == "on",
            "practice": request.POST.get("is_practice") == "on",
        }
        version = next((v for v in versions if str(v.pk) == form["version"]), None)
        when = _datetime(str(form["scheduled_for"]), errors)
        cutoff = _datetime(str(form["start_cutoff_at"]), errors)
        if version is None:
            errors.append("Choose a published assessment.")
        if not errors and version is not None:
            try:
                sitting = services.sitting_create(
                    user=signed_in_user(request),
                    version=version,
                    title=str(form["title"]),
                    proctor_authorises_start=bool(form["authorise"]),
                    scheduled_for=when,
                    start_cutoff_at=cutoff,
                    is_practice=bool(form["practice"]),
                )
            except ValidationError as error:
                errors += list(error.messages)
            else:
                messages.success(request, f"Sitting “{sitting.title}” scheduled. Add candidates.")
                return HttpResponseRedirect(
                    reverse("exam_sessions:proctor-candidates", args=[sitting.pk])
                )
    live = Q(sessions__state__in=["in_progress", "paused"])
    sittings = (
        Sitting.objects.visible_to(request.user)
        .select_related("version")
        .annotate(candidates=Count("sessions__candidate", distinct=True))
        .annotate(live=Count("sessions", filter=live, distinct=True))
        .order_by("-created_at")[:100]
    )
    context = {"versions": versions, "sittings": sittings, "errors": errors, "form": form}
    return render(request, "sessions/proctor_home.html", context, status=400 if errors else 200)


def _datetime(value: str, errors: list[str]) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        errors.append(f"Write {value!r} as a date and time.")
        return None
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


# --- the live overview ----------------------------------------------------------------------------


@never_cache
@area_required(Area.PROCTOR)
def sitting_overview(request: HttpRequest, sitting_id: uuid.UUID) -> HttpResponse:
    """The live overview of a sitting (rendered now, then kept live by the socket)."""
    sitting = _sitting(request, sitting_id)
    rows, alerts = overview.sitting_snapshot(sitting)
    show = request.GET.get("show", "all")
    show = show if show in dict(FILTERS) else "all"
    query = request.GET.get("q", "")
    config = {
        "sittingId": str(sitting.pk),
        "socketPath": f"/ws/proctor/sittings/{sitting.pk}/",
        "filter": show,
        "query": query,
    }
    page_rows: list[PageRow] = [
        {
            **row,
            "elapsedText": minutes_text(row["elapsedMs"]),
            "examLeftText": minutes_text(row["examRemainingMs"]),
            "nodeLeftText": minutes_text(row["nodeRemainingMs"]),
            "candidateText": presence.describe(row["candidateConnection"]),
        }
        for row in rows
    ]
    context = {
        "sitting": sitting,
        "rows": _filtered(page_rows, show, query),
        "total": len(rows),
        "alerts": alerts[:20],
        "filters": FILTERS,
        "show": show,
        "query": query,
        "config": config,
    }
    return render(request, "sessions/proctor_sitting.html", context)


# --- roster: candidates, CSV, invitations, accommodations -----------------------------------------


def _roster_context(sitting: Sitting, **extra: object) -> dict[str, object]:
    sessions = list(
        ExamSession.objects.filter(sitting=sitting)
        .select_related("candidate", "invitation")
        .order_by("created_at")
    )
    roster = [
        {
            "session": s,
            "invitation": scheduling.invitation_state(s),
            "link": (
                scheduling.invitation_url(s.invitation)
                if s.invitation is not None and s.invitation.state == "usable"
                else ""
            ),
            "started": s.state not in ("scheduled", "scaffolding", "ready"),
        }
        for s in sessions
    ]
    costs = costs_of(s.pk for s in sessions)
    return {"sitting": sitting, "roster": roster, "costs": costs, **extra}


@never_cache
@area_required(Area.PROCTOR)
@require_http_methods(["GET", "POST"])
def sitting_candidates(request: HttpRequest, sitting_id: uuid.UUID) -> HttpResponse:
    """The roster; POST adds one candidate."""
    sitting = _sitting(request, sitting_id)
    errors: list[str] = []
    form = {"email": "", "name": "", "extra_time": "1.00", "text_mode": False, "slower": False}
    if request.method == "POST":
        form = {
            "email": request.POST.get("email", ""),
            "name": request.POST.get("name", ""),
            "extra_time": request.POST.get("extra_time", "1.00") or "1.00",
            "text_mode": request.POST.get("text_mode") == "on",
            "slower": request.POST.get("slower_speech") == "on",
        }
        try:
            session = services.candidate_add(
                sitting=sitting,
                email=str(form["email"]),
                display_name=str(form["name"]),
                extra_time_multiplier=str(form["extra_time"]),
                text_mode_required=bool(form["text_mode"]),
                slower_speech=bool(form["slower"]),
            )
        except ValidationError as error:
            errors = list(error.messages)
        else:
            messages.success(request, f"{session.candidate.name} added to the sitting.")
            return HttpResponseRedirect(
                reverse("exam_sessions:proctor-candidates", args=[sitting.pk])
            )
    context = _roster_context(sitting, errors=errors, form=form)
    return render(request, "sessions/proctor_roster.html", context, status=400 if errors else 200)


@never_cache
@area_required(Area.PROCTOR)
@require_POST
def sitting_import(request: HttpRequest, sitting_id: uuid.UUID) -> HttpResponse:
    """CSV upload: adds the candidates and shows a report per row."""
    sitting = _sitting(request, sitting_id)
    upload = request.FILES.get("file")
    if upload is None:
        report = scheduling.ImportReport(problems=["Choose a CSV file to upload."])
    else:
        report = services.candidates_import(sitting=sitting, data=upload.read())
    summary = (
        f"{len(report.rows)} row{'s' if len(report.rows) != 1 else ''} read: "
        f"{report.count('added')} added, {report.count('skipped')} already in the sitting, "
        f"{report.count('error')} with errors."
    )
    context = _roster_context(
        sitting, report=report, report_summary=summary, form={"extra_time": "1.00"}
    )
    return render(request, "sessions/proctor_roster.html", context)


@never_cache
@area_required(Area.PROCTOR)
@require_POST
def sitting_invite(request: HttpRequest, sitting_id: uuid.UUID) -> HttpResponse:
    """Send invitation links (the checked candidates, or every candidate not invited yet)."""
    sitting = _sitting(request, sitting_id)
    chosen_ids = request.POST.getlist("session")
    sessions = ExamSession.objects.filter(sitting=sitting).select_related("candidate")
    if chosen_ids:
        try:
            sessions = sessions.filter(pk__in=[uuid.UUID(i) for i in chosen_ids])
        except ValueError:
            raise Http404("No such session.") from None
    else:
        sessions = sessions.filter(invitation__isnull=True)
    sent = services.invitations_send(
        sitting=sitting, user=signed_in_user(request), sessions=list(sessions)
    )
    if not sent:
        messages.info(request, "Nobody to invite: every candidate already has a link.")
    context = _roster_context(sitting, sent=sent, form={"extra_time": "1.00"})
    return render(request, "sessions/proctor_roster.html", context)


@area_required(Area.PROCTOR)
@require_POST
def session_accommodations(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """Set one candidate's accommodations (before the exam starts)."""
    session = _session(request, session_id)
    try:
        services.accommodations_set(
            session=session,
            extra_time_multiplier=Decimal(request.POST.get("extra_time", "1.00") or "1.00"),
            text_mode_required=request.POST.get("text_mode") == "on",
            slower_speech=request.POST.get("slower_speech") == "on",
        )
    except (ValidationError, ArithmeticError) as error:
        text = " ".join(error.messages) if isinstance(error, ValidationError) else str(error)
        messages.error(request, f"Accommodations not changed: {text}")
    else:
        messages.success(request, f"Accommodations of {session.candidate.name} saved.")
    return HttpResponseRedirect(
        reverse("exam_sessions:proctor-candidates", args=[session.sitting_id])
    )


@area_required(Area.PROCTOR)
@require_POST
def session_window(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """Give one candidate their own start window, with a reason (``sessions.windows``)."""
    session = _session(request, session_id)
    errors: list[str] = []
    opens_at = _datetime(request.POST.get("opens_at", ""), errors)
    closes_at = _datetime(request.POST.get("start_cutoff_at", ""), errors)
    if not errors:
        try:
            services.window_override(
                session=session,
                user=signed_in_user(request),
                opens_at=opens_at,
                closes_at=closes_at,
                reason=request.POST.get("reason", ""),
            )
        except ValidationError as error:
            errors += list(error.messages)
    if errors:
        messages.error(request, "Start window not changed: " + " ".join(errors))
    else:
        messages.success(request, f"Start window of {session.candidate.name} saved.")
    return HttpResponseRedirect(
        reverse("exam_sessions:proctor-candidates", args=[session.sitting_id])
    )


# --- one session ----------------------------------------------------------------------------------


@never_cache
@area_required(Area.PROCTOR)
def session_view(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """One session, live: transcript, timeline, evidence ledger, interceptions, actions."""
    session = _session(request, session_id)
    structure = exam_structure(session)
    (view,) = overview.sitting_views([session]).values()
    health = overview.bot_health([session.pk]).get(str(session.pk), overview.BotHealth())
    summary = overview.row(session, view, health)
    listen = listen_in(session, request.user)
    config = {
        "sessionId": str(session.pk),
        "socketPath": f"/ws/sessions/{session.pk}/events/",
        "actionsUrl": reverse("api-session-actions", kwargs={"session_id": session.pk}),
        "overviewUrl": reverse("exam_sessions:proctor-sitting", args=[session.sitting_id]),
        "examinerName": structure.examiner_name,
        "candidateName": session.candidate.name,
        "outline": session_detail.package_outline(session),
        "listenUrl": listen.token_url,
        "summary": summary,
    }
    context = {
        "session": session,
        "sitting": session.sitting,
        "summary": summary,
        "candidate_connection": presence.describe(summary["candidateConnection"]),
        "listen": listen,
        "examiner_name": structure.examiner_name,
        "config": config,
        "categories": actions.CATEGORIES,
        "requests": actions.requests_for(session, limit=20),
        "idempotency_key": str(uuid.uuid4()),
    }
    return render(request, "sessions/proctor_session.html", context)


@area_required(Area.PROCTOR)
@require_POST
def session_action(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """One action from a form (the pages' scripts use the API instead): the outcome is shown
    as a message on the session page."""
    session = _session(request, session_id)
    post = request.POST
    minutes = post.get("minutes", "")
    try:
        seconds = round(float(minutes) * 60) if minutes else None
    except ValueError:
        seconds = -1
    try:
        outcome = actions.action_perform(
            session=session,
            user=signed_in_user(request),
            action=post.get("action", ""),
            reason=post.get("reason", ""),
            idempotency_key=post.get("idempotency_key", ""),
            seconds=seconds,
            scope=post.get("scope") or None,
            mode=post.get("mode") or None,
            text=post.get("text") or None,
            category=post.get("category") or None,
        )
    except actions.ActionInvalid as refused:
        messages.error(request, f"Not sent: {refused.message}")
    except actions.IdempotencyConflict:
        messages.error(request, "Not sent: this form was already used for another action.")
    else:
        request_row = outcome.request
        text = request_row.message or request_row.get_status_display()
        if outcome.done:
            messages.success(request, text)
        else:
            messages.error(request, text)
    return HttpResponseRedirect(
        reverse("exam_sessions:proctor-session", args=[session.pk]) + "#actions"
    )
