"""The API refuses a request body over Django's limit with the documented JSON 413.

Django raises ``RequestDataTooBig`` when a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2.5 MiB)
is read, and answers it with its HTML 400 page. :class:`ApiBodyLimitMiddleware` reads the body
of every ``/api/`` request first (except multipart, whose file parts Django does not count
against the limit; its form fields over the limit reach ``web.api.errors.exception_handler``),
so an oversized body is a 413 with the API's error body before any view runs, whatever the
endpoint, the method or the object named: nothing is acted on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

TOO_LARGE = "The request body is larger than the server accepts."


def too_large_body() -> dict[str, object]:
    return {"error": {"code": "too_large", "message": TOO_LARGE, "details": {}}}


class ApiBodyLimitMiddleware:
    """See the module docstring."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        multipart = (request.content_type or "").startswith("multipart/")
        if request.path.startswith("/api/") and not multipart:
            try:
                request.body  # noqa: B018 - reading it applies DATA_UPLOAD_MAX_MEMORY_SIZE
            except RequestDataTooBig:
                logger.warning("API request body too large: %s %s", request.method, request.path)
                return JsonResponse(too_large_body(), status=413)
        return self.get_response(request)
