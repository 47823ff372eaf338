"""An instructor's answer when their course's link names a sitting placed in another course
or LMS (``lti.services.PlacedElsewhere``, docs/lms.md "Tenancy"): the launch is refused, and
the refusal page offers a copy of the exam for this course (a sitting of its own: its own
roster, proctors and grades), or, when they already run that exam (they placed it in another
of their courses), to place the same exam in this course too. Nothing is bound, nobody is
signed in and no roster is read until they choose; a learner is only refused."""

from __future__ import annotations

import logging

from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_exempt
from lti_tool.models import LtiLaunch
from lti_tool.utils import get_launch_from_request
from pylti1p3.exception import LtiException

from accounts.login_throttle import ThrottledModelBackend
from accounts.models import User
from accounts.roles import Role
from lti import services
from lti.models import SittingLink
from lti.refusal_page import refused
from lti.services import LaunchRefused, PlacedElsewhere

logger = logging.getLogger(__name__)

PLACEMENT_SESSION_KEY = "viva-lti-placement"
BACKEND = f"{ThrottledModelBackend.__module__}.{ThrottledModelBackend.__qualname__}"
"""As ``lti.views.BACKEND``: the backend an LTI sign-in is recorded under."""


def offer(request: HttpRequest, lti_launch: LtiLaunch, refusal: PlacedElsewhere) -> HttpResponse:
    """The refusal page with the instructor's choices (module docstring)."""
    logger.warning(
        "LTI launch refused: %s: sitting %s is not placed in %s",
        refusal.code,
        refusal.sitting.pk,
        lti_launch.resource_link.context,
    )
    user = services.account_for(lti_launch=lti_launch, role=Role.PROCTOR)
    request.session[PLACEMENT_SESSION_KEY] = lti_launch.get_launch_id()
    context = {
        "message": refusal.message,
        "code": refusal.code,
        "title": refusal.sitting.title,
        "may_add": refusal.sitting.proctors.filter(pk=user.pk).exists(),
    }
    return render(request, "lti/placed_elsewhere.html", context, status=403)


def enter_as_staff(request: HttpRequest, link: SittingLink, user: User) -> str:
    """Sign the instructor in, proctor the link's sitting, read the course's line item and
    roster (as an instructor's launch does); returns where they go."""
    login(request, user, backend=BACKEND)
    target = services.enter(link=link, user=user)
    try:
        services.lineitem_ensure(link)
        services.roster_sync(link=link)
    except (LtiException, OSError, ValueError) as error:
        logger.warning("LTI line item or roster of %s not synced: %s", link, error)
    return target


@method_decorator((xframe_options_exempt, never_cache), name="dispatch")
class PlacementView(View):
    """POST ``choice=copy`` (a copy of the exam for this course) or ``choice=same`` (the same
    exam placed here too; only for its proctors), after :func:`offer`."""

    def post(self, request: HttpRequest) -> HttpResponse:
        try:
            lti_launch = self._launch(request)
            user = services.account_for(lti_launch=lti_launch, role=Role.PROCTOR)
            link = services.placement_make(
                lti_launch=lti_launch, user=user, same=request.POST.get("choice") == "same"
            )
        except LaunchRefused as refusal:
            return refused(request, refusal.code, refusal.message)
        except LtiException as error:
            return refused(request, "placement", f"The exam could not be placed: {error}")
        request.session.pop(PLACEMENT_SESSION_KEY, None)
        return HttpResponseRedirect(enter_as_staff(request, link, user))

    def _launch(self, request: HttpRequest) -> LtiLaunch:
        launch_id = request.session.get(PLACEMENT_SESSION_KEY)
        if not launch_id:
            raise LaunchRefused("no_launch", "Open the exam again from your course.")
        lti_launch = get_launch_from_request(request, launch_id)
        if not lti_launch.is_resource_launch:
            raise LaunchRefused("no_launch", "Open the exam again from your course.")
        return lti_launch
