"""Landing pages of the proctor and candidate areas."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.access import area_required
from accounts.roles import Area
from publishing.models import PublishedVersion


@area_required(Area.PROCTOR)
def proctor_home(request: HttpRequest) -> HttpResponse:
    """The proctor's start page: published versions that sittings can be scheduled from."""
    versions = PublishedVersion.objects.visible_to(request.user).select_related("draft")[:50]
    return render(request, "sessions/proctor_home.html", {"versions": versions})


@area_required(Area.EXAM)
def candidate_home(request: HttpRequest) -> HttpResponse:
    """The candidate's start page after an invitation link signed them in."""
    return render(request, "sessions/candidate_home.html", {})
