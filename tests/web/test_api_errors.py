"""Every API endpoint answers as documented (docs/permissions.md, "The API contract") where
Django would answer its HTML 400: a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is the JSON 413
(web/api/body_limit.py, web/api/errors.py), and an id of the wrong shape in the path is the
JSON 404 (web/api/errors.py). Walks the URL patterns, so a new endpoint is covered."""

from __future__ import annotations

import io
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from tests.factories import AdminFactory

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")
PARAMETER = re.compile(r"<(?:(\w+):)?(\w+)>")


def api_operations() -> Iterator[tuple[str, str, str]]:
    """(route name, path pattern, method) of every operation under /api/v1/."""

    def walk(patterns: list[Any], prefix: str) -> Iterator[tuple[str, str, str]]:
        for item in patterns:
            if isinstance(item, URLResolver):
                yield from walk(item.url_patterns, prefix + str(item.pattern))
            elif isinstance(item, URLPattern):
                route = prefix + str(item.pattern)
                view = getattr(item.callback, "view_class", None)
                if not route.startswith("api/v1/") or view is None:
                    continue
                for method in METHODS:
                    if hasattr(view, method):
                        yield str(item.name), "/" + route, method

    yield from walk(get_resolver().url_patterns, "")


OPERATIONS = sorted(set(api_operations()))
WITH_ID = [op for op in OPERATIONS if PARAMETER.search(op[1])]


def fill(route: str, value: str) -> str:
    return PARAMETER.sub(value, route)


@pytest.fixture
def admin() -> Client:
    client = Client()
    client.force_login(AdminFactory())
    return client


def send(client: Client, method: str, path: str, body: bytes) -> Any:
    return client.generic(method.upper(), path, body, content_type="application/json")


def assert_error(response: Any, status: int, code: str, where: str) -> None:
    assert response.status_code == status, (
        f"{where}: {response.status_code} {response.content[:200]!r}"
    )
    assert response["Content-Type"].startswith("application/json"), where
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}, where
    assert body["error"]["code"] == code, where


def test_the_walk_finds_the_api() -> None:
    assert len(OPERATIONS) > 40 and len(WITH_ID) > 30
    assert ("api-package-detail", "/api/v1/packages/<str:draft_id>/", "get") in OPERATIONS


@pytest.mark.parametrize(("name", "route", "method"), WITH_ID, ids=lambda v: str(v))
@pytest.mark.parametrize("malformed", ["not-a-uuid", "123", "%20"])
def test_a_malformed_id_is_not_found(
    admin: Client, name: str, route: str, method: str, malformed: str
) -> None:
    path = fill(route, malformed)
    response = send(admin, method, path, b"{}")
    assert_error(response, 404, "not_found", f"{method.upper()} {path}")


@pytest.mark.parametrize(("name", "route", "method"), OPERATIONS, ids=lambda v: str(v))
def test_a_body_over_the_limit_is_the_json_413(
    admin: Client, name: str, route: str, method: str
) -> None:
    path = fill(route, str(uuid.uuid4()))
    body = b'{"document": "' + b"x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE + b'"}'
    response = send(admin, method, path, body)
    assert_error(response, 413, "too_large", f"{method.upper()} {path}")
    anonymous = send(Client(), method, path, body)  # refused before anything, sign-in included
    assert_error(anonymous, 413, "too_large", f"anonymous {method.upper()} {path}")


def test_a_form_body_over_the_limit_is_the_json_413(admin: Client) -> None:
    body = "email=" + "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = admin.post(
        "/api/v1/invitations/", body, content_type="application/x-www-form-urlencoded"
    )
    assert_error(response, 413, "too_large", "form body")


def test_multipart_fields_over_the_limit_are_the_json_413(admin: Client) -> None:
    """Multipart is read by the view (file parts do not count against the limit); its form
    fields over the limit are still the JSON 413."""
    from tests.sessions.factories import SittingFactory

    sitting = SittingFactory()
    upload = io.BytesIO(b"email,name\nwalk@example.test,Walk\n")
    upload.name = "candidates.csv"
    response = admin.post(
        f"/api/v1/sittings/{sitting.pk}/candidates/import/",
        {"file": upload, "note": "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE},
    )
    assert_error(response, 413, "too_large", "multipart field")


def test_a_body_within_the_limit_still_reaches_the_view(admin: Client) -> None:
    response = send(admin, "post", "/api/v1/validate/", b"{}")
    assert response.status_code != 413
