"""A backing service that cannot be reached is a clear 503, never a traceback.

:class:`ServiceUnavailableMiddleware` turns an outage of Redis (the cache behind sign-in
throttling, the channel layer, the Celery broker) or of the database, raised by a view, into a
``503 Service Unavailable`` with ``Retry-After``: a short page for people, or the REST API's
error shape (``{"error": {"code": "service_unavailable", "message": ...}}``) for API clients.
The outage is logged once per request. The session socket does the same at its handshake
(``sessions.consumers``: an ``unavailable`` error frame, then close code 4013, "try again
later"; the page reconnects by itself).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS: Final = 10
OUTAGES: Final = (
    RedisConnectionError,
    RedisTimeoutError,
    BrokerError,
    OperationalError,
    InterfaceError,
    ConnectionRefusedError,
)
"""Exceptions that mean a backing service is down, not that the request is wrong."""
MESSAGE: Final = (
    "The service is briefly unavailable. Nothing you sent before this was lost; please try "
    "again in a few seconds."
)


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a backing service being unreachable."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, OUTAGES) or type(current).__name__ == "BotServiceUnavailable":
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def unavailable_response(request: HttpRequest) -> HttpResponse:
    """The 503 for ``request``: JSON for the API and JSON clients, else a page."""
    accepts = request.headers.get("Accept", "")
    if request.path.startswith("/api/") or "application/json" in accepts:
        response: HttpResponse = JsonResponse(
            {"error": {"code": "service_unavailable", "message": MESSAGE}}, status=503
        )
    else:
        response = HttpResponse(render_to_string("503.html", {"message": MESSAGE}), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class ServiceUnavailableMiddleware:
    """See the module docstring."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not is_outage(exc):
            return None
        logger.error("service unavailable on %s %s: %r", request.method, request.path, exc)
        return unavailable_response(request)
