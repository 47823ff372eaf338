"""One error body for every API failure.

``{"error": {"code": "not_found", "message": "Not found.", "details": {...}}}``; ``details`` holds
field errors for validation failures (field name → list of messages).

Two refusals Django would otherwise answer with its HTML 400 page get the API's body here
(issue #32): a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is a 413 ``too_large`` (usually refused
earlier, by ``web.body_limit``), too many form fields or files a 400. And an id in the path
that is not of the id's shape (``/api/v1/packages/not-a-uuid/``) names no object: 404, as the
schema says, never a 400 about the value.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import (
    PermissionDenied,
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from web.api.body_limit import TOO_LARGE


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


def _malformed_path_id(exc: DjangoValidationError, context: dict[str, object]) -> bool:
    """Whether ``exc`` is a lookup refusing a value the URL path gave (an id of the wrong
    shape): that path names no object."""
    kwargs = context.get("kwargs")
    params = getattr(exc, "params", None)
    if not isinstance(kwargs, dict) or not isinstance(params, dict) or "value" not in params:
        return False
    return any(str(params["value"]) == str(value) for value in kwargs.values())


def _django_refusal(exc: Exception, context: dict[str, object]) -> Exception:
    """Django's own refusals as DRF's exceptions (the shared body, the right status)."""
    if isinstance(exc, DjangoValidationError) and _malformed_path_id(exc, context):
        return exceptions.NotFound()
    if isinstance(exc, RequestDataTooBig):
        refusal = exceptions.ParseError(detail=TOO_LARGE, code="too_large")
        refusal.status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
        return refusal
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return exceptions.ParseError(detail=str(exc), code="too_many_fields")
    return exc


def exception_handler(exc: Exception, context: dict[str, object]) -> Response | None:
    """DRF exception handler producing the shared error body."""
    exc = _django_refusal(exc, context)
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
