"""The candidate area's landing page and the candidate's journey into an exam (the proctor
area's pages are in ``proctoring.views``).

The journey (docs/exam-room.md; services and reads in ``sessions.exam_room``)::

    /accounts/invite/<token>/      invitation link: confirm, sign in, go to next_path
    /exam/                         my exams
    /exam/<id>/                    goes to the first step not yet done
    /exam/<id>/identity/           identity and consent (what is recorded, how it is used)
    /exam/<id>/briefing/           structure, duration, the requests available
    /exam/<id>/setup/              voice or text; for voice, a microphone and speaker check
    /exam/<id>/room/               waiting for the examiner, then the exam
    /exam/<id>/done/               the completion page
    /exam/<id>/window/             outside the start window: when it opens, or that it closed
                                   (``sessions.windows``; 403 while outside, else redirects on)
    /exam/<id>/practise-again/     POST: a practice sitting's next attempt
                                   (``sessions.practice``; the attempt's done page is its
                                   feedback, ``/exam/<id>/result/``)

Every step is a plain form (POST with CSRF, works without JavaScript; the room needs it). A
step already done can be seen again; a step not yet reachable redirects to the first step
not done. Sessions other than the candidate's own answer 404.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import wraps

from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.access import area_required
from accounts.models import User
from accounts.roles import Area
from sessions import exam_room, practice, previews, selectors, services, windows
from sessions.bot_port import examiner_bot
from sessions.exam_room import Mode, Step
from sessions.material_text import ACCEPTED_SUFFIXES, MAX_UPLOAD_BYTES, MaterialRefused
from sessions.materials import material_kinds
from sessions.models import CandidateMaterial, ExamSession


@area_required(Area.EXAM)
def candidate_home(request: HttpRequest) -> HttpResponse:
    """The candidate's start page after an invitation link signed them in: their exams."""
    sessions = exam_room.candidate_sessions(user=request.user)
    seen: set[uuid.UUID] = set()
    rows = []
    for s in sessions:  # newest first: a practice sitting shows its newest attempt only
        if s.sitting.is_practice and s.sitting_id in seen:
            continue
        seen.add(s.sitting_id)
        rows.append(
            {
                "session": s,
                "url": exam_room.step_url(s, exam_room.next_step(s)),
                "over": exam_room.is_over(s),
                "started": exam_room.is_started(s),
                "window": windows.window_for(s),
                "window_status": windows.window_status(s).value,
                "practise_again": practice.may_practise_again(s),
            }
        )
    return render(request, "sessions/candidate_home.html", {"rows": rows})


def exam_or_own_preview(
    view: Callable[..., HttpResponse],
) -> Callable[..., HttpResponse]:
    """``area_required(Area.EXAM)``, except that an author or admin may open their own preview
    session (``sessions.previews``): staff never enter anyone else's exam."""
    guarded = area_required(Area.EXAM)(view)

    @wraps(view)
    def wrapped(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
        user = request.user
        if (
            user.is_authenticated
            and not user.may_enter(Area.EXAM)
            and previews.preview_session(user=user, session_id=session_id) is not None
        ):
            return view(request, session_id)
        return guarded(request, session_id=session_id)

    wrapped.area = Area.EXAM  # type: ignore[attr-defined]
    return wrapped


def duration_text(seconds: int | None) -> str:
    """``20 minutes``, ``1 minute 30 seconds`` (in the active language); empty for no budget."""
    if not seconds:
        return ""
    minutes, rest = divmod(int(seconds), 60)
    words = []
    if minutes:
        words.append(ngettext("%(n)d minute", "%(n)d minutes", minutes) % {"n": minutes})
    if rest:
        words.append(ngettext("%(n)d second", "%(n)d seconds", rest) % {"n": rest})
    return " ".join(words)


def _session(request: HttpRequest, session_id: uuid.UUID) -> ExamSession:
    """The candidate's own session (else 404); the rest of the request speaks its language
    (the exam's, not the browser's: docs/i18n.md)."""
    session = exam_room.candidate_session(
        user=request.user, session_id=session_id
    ) or previews.preview_session(user=request.user, session_id=session_id)
    if session is None:
        raise Http404(_("No such exam."))
    language = exam_room.page_language(session)
    translation.activate(language)
    request.LANGUAGE_CODE = language
    return session


def _context(session: ExamSession, step: Step, **extra: object) -> dict[str, object]:
    structure = exam_room.exam_structure(session)
    multiplier = session.extra_time_multiplier
    steps = [
        (Step.IDENTITY, _("Identity and consent")),
        (Step.BRIEFING, _("Briefing")),
        *([(Step.MATERIAL, _("Your report"))] if material_kinds(session.sitting.version) else []),
        (Step.SETUP, _("Answer mode")),
        (Step.ROOM, _("Exam")),
        (Step.DONE, _("Finished")),
    ]
    order = [s for s, _ in steps]
    return {
        "session": session,
        "structure": structure,
        "step": step.value,
        "steps": [
            {
                "key": key.value,
                "label": label,
                "current": key == step,
                "done": order.index(key) < order.index(step),
            }
            for key, label in steps
        ],
        "total_duration": duration_text(structure.scaled(structure.total_budget_sec, multiplier)),
        "parts": [
            {"part": p, "duration": duration_text(structure.scaled(p.budget_sec, multiplier))}
            for p in structure.parts
        ],
        "extra_time": multiplier > 1,
        "preview": session.is_preview,
        "practice": session.sitting.is_practice,
        **extra,
    }


def _guard(session: ExamSession, step: Step) -> HttpResponse | None:
    """Redirect when ``step`` cannot be shown: the exam is over, has started (only the room),
    has not started and its start window is not open (the window page), or an earlier step is
    not done."""
    order = list(Step)
    current = exam_room.next_step(session)
    if current == Step.DONE and step != Step.DONE:
        return HttpResponseRedirect(exam_room.step_url(session, Step.DONE))
    if not windows.may_start(session):
        return HttpResponseRedirect(reverse("exam_sessions:exam-window", args=[session.pk]))
    if current == Step.ROOM and exam_room.is_started(session) and step != Step.ROOM:
        return HttpResponseRedirect(exam_room.step_url(session, Step.ROOM))
    if order.index(step) > order.index(current):
        return HttpResponseRedirect(exam_room.step_url(session, current))
    return None


@never_cache
@exam_or_own_preview
def exam_entry(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """The address invitation links point at: the first step not done yet."""
    session = _session(request, session_id)
    if not windows.may_start(session):
        return HttpResponseRedirect(reverse("exam_sessions:exam-window", args=[session.pk]))
    return HttpResponseRedirect(exam_room.step_url(session, exam_room.next_step(session)))


@never_cache
@exam_or_own_preview
def exam_window(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """Outside the start window: when the exam opens, or that its start window closed (403);
    inside it (or once started) the candidate goes on to their next step."""
    session = _session(request, session_id)
    if windows.may_start(session):
        return HttpResponseRedirect(exam_room.step_url(session, exam_room.next_step(session)))
    window = windows.window_for(session)
    context = _context(
        session,
        exam_room.next_step(session),
        window=window,
        window_status=window.status(timezone.now()).value,
    )
    return render(request, "sessions/exam_window.html", context, status=403)


@never_cache
@exam_or_own_preview
@require_http_methods(["GET"])
def exam_examiner_wait(request: HttpRequest, session_id: uuid.UUID) -> JsonResponse:
    """While the candidate waits for the examiner (issue #33, admission control): whether its
    start waits for a free worker, the place in the queue, and what to tell the candidate in
    the exam's language (``message``: every examiner busy, or none running; ``null`` while an
    ordinary start is under way). The exam room asks once the start takes longer than usual."""
    session = _session(request, session_id)
    bot = examiner_bot()
    wait = bot.start_wait(session.pk) if bot is not None else None
    if wait is None:
        return JsonResponse({"waiting": False, "message": None})
    return JsonResponse(
        {
            "waiting": True,
            "position": wait.position,
            "workers": wait.workers,
            "full": wait.full,
            "message": exam_room.wait_message(wait),
        }
    )


@never_cache
@exam_or_own_preview
@require_http_methods(["GET", "POST"])
def exam_identity(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """Identity and consent: who the candidate is, what is recorded and how it is used."""
    session = _session(request, session_id)
    if (redirect := _guard(session, Step.IDENTITY)) is not None:
        return redirect
    errors: list[str] = []
    if request.method == "POST":
        try:
            services.identity_confirm(
                session=session,
                identity=request.POST.get("identity") == "yes",
                consent=request.POST.get("consent") == "yes",
            )
        except ValidationError as error:
            errors = list(error.messages)
        else:
            return HttpResponseRedirect(exam_room.step_url(session, Step.BRIEFING))
    context = _context(
        session, Step.IDENTITY, errors=errors, consent_version=exam_room.CONSENT_VERSION
    )
    return render(request, "sessions/exam_identity.html", context, status=400 if errors else 200)


@never_cache
@exam_or_own_preview
@require_http_methods(["GET", "POST"])
def exam_briefing(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """The briefing: parts, durations and the requests the candidate can make."""
    session = _session(request, session_id)
    if (redirect := _guard(session, Step.BRIEFING)) is not None:
        return redirect
    if request.method == "POST":
        services.briefing_acknowledge(session=session)
        return HttpResponseRedirect(exam_room.step_url(session, Step.SETUP))
    return render(request, "sessions/exam_briefing.html", _context(session, Step.BRIEFING))


@never_cache
@exam_or_own_preview
@require_http_methods(["GET", "POST"])
def exam_material(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """The candidate's own material (a report or a submission the exam asks about), uploaded
    before the exam; a new upload replaces the old one until the exam starts."""
    session = _session(request, session_id)
    if (redirect := _guard(session, Step.MATERIAL)) is not None:
        return redirect
    kinds = material_kinds(session.sitting.version)
    if not kinds:
        return HttpResponseRedirect(exam_room.step_url(session, exam_room.next_step(session)))
    errors: list[str] = []
    if request.method == "POST":
        upload = request.FILES.get("material")
        try:
            if upload is None:
                raise MaterialRefused(_("Choose a file to upload."))
            services.material_upload(
                session=session,
                kind=kinds[0],
                filename=upload.name or "",
                data=upload.read(MAX_UPLOAD_BYTES + 1),
                uploaded_by=request.user if isinstance(request.user, User) else None,
                source=CandidateMaterial.Source.CANDIDATE,
            )
        except MaterialRefused as refused:
            errors = [refused.message]
        else:
            return HttpResponseRedirect(exam_room.step_url(session, exam_room.next_step(session)))
    context = _context(
        session,
        Step.MATERIAL,
        errors=errors,
        materials=selectors.materials_of(user=request.user, session=session),
        max_mb=MAX_UPLOAD_BYTES >> 20,
        accepted=ACCEPTED_SUFFIXES,
    )
    return render(request, "sessions/exam_material.html", context, status=400 if errors else 200)


@never_cache
@exam_or_own_preview
@require_http_methods(["GET", "POST"])
def exam_setup(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """Voice or text; voice needs the microphone and speaker check on this page. When the exam
    asks about the candidate's material, the page names the stored file the examiner will ask
    about and, when staff provided it (bulk upload or API), says so and when
    (docs/spec/candidate-materials.md §10, "What the candidate is told")."""
    session = _session(request, session_id)
    if (redirect := _guard(session, Step.SETUP)) is not None:
        return redirect
    errors: list[str] = []
    chosen = session.exam_mode or ""
    if request.method == "POST":
        chosen = request.POST.get("mode", "")
        try:
            session = services.mode_choose(
                session=session,
                mode=chosen,
                audio_checked=request.POST.get("audio_checked") == "yes",
            )
        except ValidationError as error:
            errors = list(error.messages)
        else:
            if exam_room.bot_started_by_page(session):
                exam_room.bot_request_start(session)
            return HttpResponseRedirect(exam_room.step_url(session, Step.ROOM))
    context = _context(
        session,
        Step.SETUP,
        errors=errors,
        chosen=chosen or (Mode.TEXT.value if not exam_room.voice_available(session) else ""),
        voice_available=exam_room.voice_available(session),
        voice_language_supported=exam_room.voice_language_supported(session),
        materials=selectors.materials_of(user=request.user, session=session)
        if material_kinds(session.sitting.version)
        else [],
    )
    return render(request, "sessions/exam_setup.html", context, status=400 if errors else 200)


@never_cache
@exam_or_own_preview
def exam_room_view(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """The exam room. Live data comes over the session socket (static/js/exam-room.js)."""
    session = _session(request, session_id)
    if (redirect := _guard(session, Step.ROOM)) is not None:
        return redirect
    if exam_room.bot_started_by_page(session):
        exam_room.bot_request_start(session)  # idempotent: a live bot is left alone
    context = _context(session, Step.ROOM, config=exam_room.room_config(session))
    return render(request, "sessions/exam_room.html", context)


@never_cache
@exam_or_own_preview
def exam_done(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """The completion page (only once the exam is over). A practice attempt's is its feedback
    (the result page, ``/exam/<id>/result/``): shown at once, no staff step."""
    session = _session(request, session_id)
    if (redirect := _guard(session, Step.DONE)) is not None:
        return redirect
    if session.sitting.is_practice and not session.is_preview:
        return HttpResponseRedirect(reverse("results:result", args=[session.pk]))
    return render(request, "sessions/exam_done.html", _context(session, Step.DONE))


@never_cache
@area_required(Area.EXAM)
@require_http_methods(["POST"])
def practise_again(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """ "Practise again" (POST, from an attempt's feedback or the candidate's home): the next
    attempt's journey (``sessions.practice.practice_again``; a repeated request lands on the
    same attempt). Refused (400) outside a practice sitting, before the attempt is over, or
    once the start window closed."""
    session = _session(request, session_id)
    try:
        attempt = practice.practice_again(session=session)
    except ValidationError as error:
        return render(
            request,
            "sessions/practice_refused.html",
            _context(session, exam_room.next_step(session), errors=error.messages),
            status=400,
        )
    return HttpResponseRedirect(exam_room.step_url(attempt, exam_room.next_step(attempt)))
