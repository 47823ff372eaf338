"""The exam picker without cookies (``lti.picker_state``) and its framing policy
(``lti.framing``), against the independent platform (tests/support/lti_platform). The framed
flow in a real browser: tests/browser/test_lti_framed_picker.py."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse

from lti import framing
from publishing.services import version_publish
from sessions.models import Sitting
from tests.factories import AuthorFactory, DraftPackageFactory
from tests.lti.test_platform_launches import (  # noqa: F401 (fixtures)
    launch,
    platform,
    platform_base,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_picker_needs_no_cookie_and_its_token_places_once(
    platform: dict[str, Any],  # noqa: F811
    client: Client,
) -> None:
    author = AuthorFactory()
    version = version_publish(draft=DraftPackageFactory(owner=author), user=author).version
    response, _ = launch(
        client, platform["base"], user="ines", role="Instructor", link="link-c", deep_link="1"
    )
    picker_url = response["Location"]
    token = re.search(r"picker=([^&]+)", picker_url)
    assert token
    framed = Client(enforce_csrf_checks=True)  # the frame: no session, no CSRF cookie
    page = framed.get(picker_url)
    assert page.status_code == 200 and version.title in page.content.decode()
    policy = page["Content-Security-Policy"]
    assert f"frame-ancestors {platform['base']}" in policy
    picker = page.context["picker"]
    chosen = framed.post(
        "/lti/deep-link/", {"picker": picker, "version": str(version.pk), "title": "No cookie"}
    )
    assert chosen.status_code == 200, chosen.content.decode()
    assert f"form-action 'self' {platform['base']}" in chosen["Content-Security-Policy"]
    again = framed.post(
        "/lti/deep-link/", {"picker": picker, "version": str(version.pk), "title": "Twice"}
    )
    assert again.status_code == 403 and b"This exam picker was used" in again.content
    # The refusal is readable in the LMS's frame; a forged token's names no platform.
    assert f"frame-ancestors {platform['base']}" in again["Content-Security-Policy"]
    assert Sitting.objects.filter(title__in=["No cookie", "Twice"]).count() == 1
    forged = framed.get(f"/lti/deep-link/?picker={picker[:-2]}xx")
    assert forged.status_code == 403
    assert "frame-ancestors 'none'" in forged["Content-Security-Policy"]


def test_the_session_picker_still_checks_csrf(
    platform: dict[str, Any],  # noqa: F811
) -> None:
    checked = Client(enforce_csrf_checks=True)
    launch(checked, platform["base"], user="ines", role="Instructor", link="link-s", deep_link="1")
    assert checked.get("/lti/deep-link/").status_code == 200
    refused = checked.post("/lti/deep-link/", {"title": "x"})
    assert refused.status_code == 403 and b"The form expired" in refused.content


def test_a_refused_launch_is_readable_in_the_platforms_frame(
    platform: dict[str, Any],  # noqa: F811
    client: Client,
) -> None:
    response, form = launch(
        client, platform["base"], user="lee", role="Learner", link="link-l", deep_link="1"
    )
    assert response.status_code == 403
    assert f"frame-ancestors {platform['base']}" in response["Content-Security-Policy"]
    forged = client.post("/lti/launch/", {**form, "id_token": form["id_token"][:-4] + "AAAA"})
    assert forged.status_code == 403
    assert "frame-ancestors 'none'" in forged["Content-Security-Policy"]


def test_other_pages_are_never_framed(client: Client) -> None:
    for path in (reverse("lti:deep-link"), "/accounts/login/"):
        assert "frame-ancestors 'none'" in client.get(path)["Content-Security-Policy"]


def test_origins_are_http_origins_only() -> None:
    assert framing.origin_of("https://Moodle.Uni.example/mod/lti/auth.php") == (
        "https://moodle.uni.example"
    )
    for bad in ("", "javascript:alert(1)", "https://user@host/", "data:text/html,x"):
        assert framing.origin_of(bad) is None


def test_the_login_state_cookie_is_partitioned_where_browsers_keep_it() -> None:
    def login_response(host: str) -> str:
        response = HttpResponse()
        response.set_cookie("lti1p3-state-1", "state-1", max_age=300, httponly=True)
        response.set_cookie("other", "x")
        framing.framed_cookies(RequestFactory().get("/", HTTP_HOST=host), response)
        return response.cookies.output()

    framed = login_response("localhost:8000")
    state, other = framed.splitlines()
    assert state.startswith("Set-Cookie: lti1p3-state-1=state-1;") and "Max-Age=300" in state
    assert state.endswith("HttpOnly; Max-Age=300; Path=/; SameSite=None; Secure; Partitioned")
    assert other == "Set-Cookie: other=x; Path=/"
    assert "Partitioned" not in login_response("127.0.0.1:8000")


def test_a_title_the_sitting_cannot_take_is_a_form_error_not_a_server_error(
    platform: dict[str, Any],  # noqa: F811
    client: Client,
) -> None:
    """The picker's free-text title over the sitting's 300 characters: the picker again with
    the error (400, readable in the frame), nothing placed, the token still usable."""
    author = AuthorFactory()
    version = version_publish(draft=DraftPackageFactory(owner=author), user=author).version
    response, _ = launch(
        client, platform["base"], user="ines", role="Instructor", link="link-t", deep_link="1"
    )
    framed = Client(enforce_csrf_checks=True)
    picker = framed.get(response["Location"]).context["picker"]
    choice = {"picker": picker, "version": str(version.pk)}
    long = framed.post("/lti/deep-link/", {**choice, "title": "x" * 301})
    assert long.status_code == 400, long.status_code
    assert "At most 300 characters." in long.content.decode()
    assert f"frame-ancestors {platform['base']}" in long["Content-Security-Policy"]
    assert not Sitting.objects.exists()
    fine = framed.post("/lti/deep-link/", {**choice, "title": "x" * 300})
    assert fine.status_code == 200 and Sitting.objects.get().title == "x" * 300
