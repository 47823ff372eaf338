"""The OpenAPI schema's answers that no view spells out: the error body on every refusal.

Every API failure has one body (``web.api.errors``): ``{"error": {"code", "message",
"details"}}``. :class:`ApiAutoSchema` documents it for each status an operation can answer,
from the operation's shape rather than by hand per view:

* 401 and 403 when the operation needs a signed-in user (no credentials; a role outside the
  area, or a session request without its CSRF token), 429 when it is throttled;
* 400, 413 and 415 when it takes a request body (invalid, too large, not a media type it parses;
  ``web.api.parsers``);
* 404 when its path names an object (someone else's answers 404 too) or when it pages (a page
  past the end); 400 and 404 when it reads query parameters (a malformed or unknown filter);
* any other error status a view declares (409, 422, 502, 504) gets the body unless the view
  documents another one.

tests/config/test_api_schema.py checks the result; the schemathesis run in
tests/config/test_api_contract.py checks the live answers against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class ErrorDetailSerializer(serializers.Serializer[object]):
    code = serializers.CharField(help_text="Machine-readable, e.g. not_found, invalid, throttled.")
    message = serializers.CharField(help_text="The first problem, in words.")
    details = serializers.DictField(
        help_text="Field errors (field name → messages) or the error's own facts."
    )


@extend_schema_serializer(component_name="Error")
class ErrorSerializer(serializers.Serializer[object]):
    """The one body of every API failure."""

    error = ErrorDetailSerializer()


ERROR_DESCRIPTIONS = {
    "400": "Invalid request: malformed body, parameter or field (details name the fields).",
    "401": "No credentials, or invalid ones.",
    "403": "Your role cannot use this operation (or a session request lacks its CSRF token).",
    "404": "No such object, or not one you may see.",
    "409": "Conflicts with the object's current state.",
    "413": "The request body is too large.",
    "415": "The request body's media type is not accepted.",
    "422": "Refused by validation; details carry the report.",
    "429": "Too many requests; details.retryAfterSeconds says when to retry.",
    "502": "The examiner bot failed to carry out the request.",
    "504": "Sent to the examiner bot, but not confirmed in time.",
}


class ApiAutoSchema(AutoSchema):
    """drf-spectacular's AutoSchema plus the shared error body (module docstring)."""

    # Any: drf-spectacular is untyped; its response bodies are OpenAPI JSON.
    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        for code in sorted(self.error_codes() | {c for c in responses if c >= "400"}):
            documented = responses.get(code)
            if documented is not None and _has_specific_body(documented):
                continue
            description = (documented or {}).get("description") or ERROR_DESCRIPTIONS.get(
                code, "Refused."
            )
            body = self._get_response_for_code(ErrorSerializer, code, direction=direction)
            responses[code] = {**body, "description": description}
        return responses

    def error_codes(self) -> set[str]:
        """The refusals this operation can answer, from its shape (module docstring)."""
        codes: set[str] = set()
        if self._needs_sign_in():
            codes |= {"401", "403"}
        if self.view.get_throttles():
            codes.add("429")
        if self.method in BODY_METHODS:
            codes |= {"400", "413", "415"}
        if "{" in self.path:
            codes.add("404")
        if self.method == "GET" and self._get_paginator():
            codes.add("404")
        if self._query_parameters():
            codes |= {"400", "404"}
        return codes

    def _needs_sign_in(self) -> bool:
        if not self.view.get_authenticators():
            return False
        return not all(isinstance(p, AllowAny) for p in self.view.get_permissions())

    def _query_parameters(self) -> bool:
        return any(getattr(p, "location", None) == "query" for p in self.get_override_parameters())


def _has_specific_body(response: Mapping[str, object]) -> bool:
    """Whether a documented answer has a body other than a free-form object."""
    content = response.get("content", {})
    if not isinstance(content, Mapping):
        return False
    for media in content.values():
        schema = media.get("schema", {}) if isinstance(media, Mapping) else {}
        if schema and schema != {"type": "object", "additionalProperties": {}}:
            return True
    return False
