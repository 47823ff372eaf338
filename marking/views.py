"""The marking area's start page."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.access import area_required
from accounts.roles import Area


@area_required(Area.MARKING)
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "marking/home.html", {})
