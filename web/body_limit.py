"""A request body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is a 413 everywhere, never Django's bare
HTML 400.

Django raises ``RequestDataTooBig`` when a body over the limit (2.5 MiB) is read, and answers it
with its plain "Bad Request (400)" page. Here:

* :class:`BodyLimitMiddleware` reads the body of every request first (except multipart, whose
  file parts Django does not count against the limit), so an oversized body is refused before
  any view runs, whatever the page, the method or the object named: nothing is acted on;
* :func:`bad_request` (the site's ``handler400``) answers the same for a body read over the
  limit later (a multipart form's fields, read by the view or by the CSRF check).

The refusal (:func:`too_large`) on ``/api/`` is the API's JSON 413 ``too_large``; on any other
page (an LMS's launch, login initiation or exam picker, the SAML assertion consumer service, the
sign-in form) the site's clear 413 page (``templates/413.html``). Either logs
``request body too large: <method> <path>`` and leaves no session (``web.no_session``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults

from web.api.body_limit import too_large_body
from web.no_session import forget_session

logger = logging.getLogger(__name__)


def too_large(request: HttpRequest) -> HttpResponse:
    """The 413 for an oversized body (module docstring)."""
    logger.warning("request body too large: %s %s", request.method, request.path)
    forget_session(request)
    if request.path.startswith("/api/"):
        return JsonResponse(too_large_body(), status=413)
    return render(request, "413.html", status=413)


class BodyLimitMiddleware:
    """See the module docstring; placed after the session middleware (the refusal ends a
    session it would start)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not (request.content_type or "").startswith("multipart/"):
            try:
                request.body  # noqa: B018 - reading it applies DATA_UPLOAD_MAX_MEMORY_SIZE
            except RequestDataTooBig:
                return too_large(request)
        return self.get_response(request)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """The site's ``handler400``: an oversized body is :func:`too_large`; any other bad
    request Django's own 400."""
    if isinstance(exception, RequestDataTooBig):
        return too_large(request)
    return defaults.bad_request(request, exception or Exception())
