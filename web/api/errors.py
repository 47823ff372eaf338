"""One error body for every API failure.

``{"error": {"code": "not_found", "message": "Not found.", "details": {...}}}``; ``details`` holds
field errors for validation failures (field name → list of messages).
"""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def _first_message(detail: object) -> str:
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    if isinstance(detail, dict) and detail:
        key, value = next(iter(detail.items()))
        message = _first_message(value)
        return message if key in {"non_field_errors", "detail"} else f"{key}: {message}"
    return str(detail)


@csrf_exempt  # nothing is done here: a write to no endpoint is a 404, not a CSRF page
def no_such_endpoint(request: HttpRequest, *args: object, **kwargs: object) -> JsonResponse:
    """Any /api/ path no route matches (an unknown endpoint, or an id of the wrong shape where
    the route wants a UUID): 404 with the shared body, never an HTML page."""
    body = {"error": {"code": "not_found", "message": "No such API endpoint.", "details": {}}}
    return JsonResponse(body, status=status.HTTP_404_NOT_FOUND)


def exception_handler(exc: Exception, context: dict[str, object]) -> Response | None:
    """DRF exception handler producing the shared error body."""
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    details: object
    if isinstance(exc, exceptions.ValidationError):
        code = "invalid"
        details = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        message = _first_message(exc.detail)
    elif isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        details = {}
        message = str(exc.detail)
    else:  # pragma: no cover - drf only returns responses for APIException
        code, details, message = "error", {}, str(exc)
    if response.status_code == status.HTTP_429_TOO_MANY_REQUESTS and isinstance(
        exc, exceptions.Throttled
    ):
        details = {"retryAfterSeconds": getattr(exc, "wait", None)}  # not in DRF's stubs
    response.data = {"error": {"code": code, "message": message, "details": details}}
    return response


def unprocessable_response(code: str, message: str, details: Mapping[str, object]) -> Response:
    """422 with the shared error body (a well-formed request the server will not act on)."""
    return Response(
        {"error": {"code": code, "message": message, "details": dict(details)}},
        status=status.HTTP_422_UNPROCESSABLE_ENTITY,
    )
