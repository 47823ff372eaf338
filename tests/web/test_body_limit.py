"""A request body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` sent to a page (not the API) is the site's
clear 413 page (web/body_limit.py), with a log line and no session left, never Django's bare
"Bad Request (400)": the LTI launch, login initiation and exam picker, the SAML assertion
consumer service, the sign-in form... Walks the URL patterns, so a new page is covered."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db

PARAMETER = re.compile(r"<(?:(\w+):)?(\w+)>")
FILLS = {"uuid": "00000000-0000-4000-8000-000000000000", "int": "1", "path": "x"}
BARE_400 = "<h1>Bad Request (400)</h1>"
TOO_LARGE = "larger than this site accepts"


def page_routes() -> Iterator[str]:
    """Every route of the site outside the API, its parameters filled."""

    def walk(patterns: list[Any], prefix: str) -> Iterator[str]:
        for item in patterns:
            if isinstance(item, URLResolver):
                yield from walk(item.url_patterns, prefix + str(item.pattern))
            elif isinstance(item, URLPattern):
                route = prefix + str(item.pattern)
                if route.startswith(("api/", "^api/")) or route.startswith("^"):
                    continue
                yield "/" + PARAMETER.sub(lambda m: FILLS.get(m.group(1) or "", "x"), route)

    return walk(get_resolver().url_patterns, "")


def oversized_form() -> str:
    return "id_token=" + "a" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def assert_too_large(response: Any, caplog: pytest.LogCaptureFixture, what: str) -> None:
    assert response.status_code == 413, (what, response.status_code)
    assert TOO_LARGE in response.content.decode(), what
    assert response.cookies.get(settings.SESSION_COOKIE_NAME) is None, what
    lines = [r.getMessage() for r in caplog.records if "body too large" in r.getMessage()]
    assert lines, what


@pytest.mark.parametrize(
    "path",
    [
        "/lti/launch/",
        "/lti/deep-link/",
        "/lti/login/00000000-0000-4000-8000-000000000000/",
        "/accounts/login/",
        "/accounts/saml/acs/",
    ],
)
def test_an_oversized_form_is_the_clear_413_page(
    client: Client, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    with caplog.at_level(logging.WARNING):
        response = client.post(
            path, oversized_form(), content_type="application/x-www-form-urlencoded"
        )
    assert_too_large(response, caplog, path)


def test_oversized_multipart_fields_are_the_413_page_too(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Multipart bodies are read by the view (file parts do not count against the limit);
    their fields over the limit are refused the same way, wherever they are read."""
    with caplog.at_level(logging.WARNING):
        response = client.post("/lti/launch/", {"id_token": "a" * (3 << 20)})
    assert_too_large(response, caplog, "multipart launch")


def test_no_page_answers_djangos_bare_400_to_an_oversized_body(client: Client) -> None:
    routes = sorted(set(page_routes()))
    assert "/lti/launch/" in routes and "/accounts/saml/acs/" in routes
    for path in routes:
        response = client.post(
            path, oversized_form(), content_type="application/x-www-form-urlencoded"
        )
        assert response.status_code != 400 or BARE_400 not in response.content.decode(), path
        if response.status_code == 413:
            assert TOO_LARGE in response.content.decode(), path
