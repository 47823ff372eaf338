"""The candidate's result page (exam area): ``/exam/<session id>/result/``.

Shows what ``marking.selectors.candidate_result`` allows: pending until staff release the
locked marks, then the result with the feedback the author allows, and the appeal form. An
appeal (``marking.services.appeal_open_by_candidate``) reopens the marks; the marking workspace
lists it. Other people's sessions answer 404.
"""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.access import area_required
from accounts.roles import Area
from marking import selectors, services
from marking.models import SessionMark
from sessions import exam_room


@never_cache
@area_required(Area.EXAM)
@require_http_methods(["GET", "POST"])
def result_page(request: HttpRequest, session_id: uuid.UUID) -> HttpResponse:
    """The result (GET) and the appeal form (POST ``reason``); for a practice attempt its
    feedback (:func:`practice_page`)."""
    practice = selectors.practice_result(user=request.user, session_id=session_id)
    if practice is not None:
        return practice_page(request, practice)
    view = selectors.candidate_result(user=request.user, session_id=session_id)
    if view is None:
        raise Http404(_("No such exam."))
    # The candidate's pages speak the exam's language (docs/i18n.md).
    translation.activate(exam_room.page_language(view["session"]))
    errors: list[str] = []
    reason = ""
    if request.method == "POST":
        reason = request.POST.get("reason", "")
        mark = SessionMark.objects.filter(session=view["session"]).first()
        try:
            if mark is None:
                raise services.MarkingRefused("not_released", _("There is no result to appeal."))
            services.appeal_open_by_candidate(mark=mark, candidate=request.user, reason=reason)
        except services.MarkingRefused as refusal:
            errors.append(refusal.message)
        else:
            messages.success(
                request, _("Your appeal has been lodged. Your course team reviews it.")
            )
            return HttpResponseRedirect(reverse("results:result", args=[session_id]))
    context = {**view, "errors": errors, "reason": reason}
    return render(request, "marking/result.html", context, status=400 if errors else 200)


def practice_page(request: HttpRequest, view: selectors.PracticeView) -> HttpResponse:
    """A practice attempt's feedback, shown as soon as the attempt is over (no staff step):
    recorded here when the outbox has not yet done it (``practice_feedback_record`` is
    idempotent), with every earlier attempt and "Practise again". A POST changes nothing."""
    session = view.session
    translation.activate(exam_room.page_language(session))
    if view.over and view.targets is None:
        services.practice_feedback_record(session_id=session.pk)
        view = selectors.practice_result(user=request.user, session_id=session.pk) or view
    status = 405 if request.method == "POST" else 200
    context = {"session": session, "practice": view}
    return render(request, "marking/practice_result.html", context, status=status)
