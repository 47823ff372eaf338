"""Every LTI refusal is the clear refusal page (``lti.refusal_page.refused``): a 4xx, a logged
reason, and no session left behind (no ``sessionid`` cookie, no ``django_session`` row) — for
login initiation naming an unknown registration, issuer or client id, and for launches the
tool refuses."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from lti_tool.models import Key, LtiDeployment, LtiRegistration

from tests.lti.test_platform_launches import launch, platform, platform_base

__all__ = ["platform", "platform_base"]  # the independent platform's fixtures

pytestmark = pytest.mark.django_db

ISSUER = "https://lms.example.edu"
CLIENT_ID = "viva-tool"


@pytest.fixture
def registration() -> LtiRegistration:
    Key.objects.generate()
    registration = LtiRegistration.objects.create(
        name="LMS",
        issuer=ISSUER,
        client_id=CLIENT_ID,
        auth_url=f"{ISSUER}/auth",
        token_url=f"{ISSUER}/token",
        keyset_url=f"{ISSUER}/jwks",
        is_active=True,
    )
    LtiDeployment.objects.create(registration=registration, deployment_id="1", is_active=True)
    return registration


def assert_refused(response: Any, caplog: pytest.LogCaptureFixture, status: int) -> None:
    """The refusal page, its log line, and no session."""
    assert response.status_code == status, response.content[:500]
    assert "This link could not be opened" in response.content.decode()
    assert "Traceback" not in response.content.decode()
    assert settings.SESSION_COOKIE_NAME not in response.cookies
    assert Session.objects.count() == 0
    assert any("LTI launch refused" in r.getMessage() for r in caplog.records)


def login_params(**overrides: str) -> dict[str, str]:
    return {
        "iss": ISSUER,
        "client_id": CLIENT_ID,
        "login_hint": "alice",
        "target_link_uri": "http://testserver/lti/launch/",
        "lti_deployment_id": "1",
        **overrides,
    }


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize(
    ("case", "overrides"),
    [
        ("unknown registration", {}),
        ("unknown issuer", {"iss": "https://other.example.edu"}),
        ("unknown client id", {"client_id": "someone-else"}),
        ("no issuer", {"iss": ""}),
        ("no target", {"target_link_uri": ""}),
    ],
)
def test_login_initiation_refuses_what_it_does_not_know(
    registration: LtiRegistration,
    caplog: pytest.LogCaptureFixture,
    method: str,
    case: str,
    overrides: dict[str, str],
) -> None:
    caplog.set_level(logging.WARNING, logger="lti.views")
    target = uuid.uuid4() if case == "unknown registration" else registration.uuid
    client = Client(raise_request_exception=False)
    response = getattr(client, method)(f"/lti/login/{target}/", login_params(**overrides))
    assert_refused(response, caplog, 400)


def test_login_initiation_for_a_known_registration_still_redirects(
    registration: LtiRegistration,
) -> None:
    response = Client().get(f"/lti/login/{registration.uuid}/", login_params())
    assert response.status_code == 302
    assert response["Location"].startswith(f"{ISSUER}/auth?")


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/collect",  # the platform would post the id token there
        "http://testserver.evil.example/lti/launch/",
        "javascript:alert(1)",
        "//evil.example/lti/launch/",
    ],
)
def test_login_initiation_for_a_target_elsewhere_is_refused(
    registration: LtiRegistration, caplog: pytest.LogCaptureFixture, target: str
) -> None:
    """The platform posts the id token (the person's name, email, roles) to the login's
    ``target_link_uri``: one not on this site is refused (LTI 1.3 §5.1.1.1: the tool checks
    it), never sent on as the redirect_uri."""
    caplog.set_level(logging.WARNING, logger="lti.views")
    response = Client().get(
        f"/lti/login/{registration.uuid}/", login_params(target_link_uri=target)
    )
    assert_refused(response, caplog, 400)
    assert "not this tool" in response.content.decode()


@pytest.mark.parametrize(
    "form",
    [
        {},
        {"id_token": "not-a-jwt"},
        {"id_token": "eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.", "state": "forged"},
    ],
)
def test_a_refused_launch_leaves_no_session(
    registration: LtiRegistration, caplog: pytest.LogCaptureFixture, form: dict[str, str]
) -> None:
    caplog.set_level(logging.WARNING, logger="lti.views")
    response = Client(raise_request_exception=False).post("/lti/launch/", form)
    assert response.status_code in (400, 403)
    assert_refused(response, caplog, response.status_code)


def test_the_exam_picker_without_a_launch_leaves_no_session(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="lti.views")
    response = Client().get("/lti/deep-link/")
    assert_refused(response, caplog, 403)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("link", "extra", "words"),
    [
        ("link-unplaced", {}, "not connected to an exam yet"),  # refused after the checks
        ("link-1", {"tamper": "signature"}, "The launch was refused"),
        # The LMS's "privacy" link (LTI Data Privacy Launch): not offered, refused clearly.
        ("link-1", {"privacy_for": "carol"}, "no data privacy page for your LMS"),
    ],
)
def test_a_signed_launch_the_tool_refuses_leaves_no_session(
    platform: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
    link: str,
    extra: dict[str, str],
    words: str,
) -> None:
    """A real platform's launch (tests/support/lti_platform), refused by the tool: the
    launch had already put its id in the session when the refusal came."""
    caplog.set_level(logging.WARNING, logger="lti.views")
    client = Client()
    response, _ = launch(client, platform["base"], user="carol", role="Learner", link=link, **extra)
    assert words in response.content.decode()
    assert_refused(response, caplog, 403)
