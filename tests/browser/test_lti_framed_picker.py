"""The Deep Linking picker inside the LMS's frame (docs/lms.md, "Inside the LMS's frame"), in a
real Chromium against the independent platform peer (tests/support/lti_platform).

The platform is ``http://127.0.0.1:<p>``; the tool is addressed as ``http://localhost:<t>``:
another host, so another site for cookies and ``SameSite``. A page of the platform's origin
frames the tool's login initiation in an ``<iframe>`` (as Moodle's and Canvas's content
selection do); the instructor picks an exam inside the frame and the platform receives the
signed deep-linking response. The CSP names the platform's origin on the picker and stays
``frame-ancestors 'none'`` everywhere else."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
import requests
from django.core.management import call_command
from lti_tool.models import LtiRegistration
from playwright.sync_api import Page, expect

from publishing.services import version_publish
from sessions.models import Sitting
from tests.browser.helpers import screenshot
from tests.conftest import LOOPBACK
from tests.factories import AuthorFactory, DraftPackageFactory
from tests.support.lti_platform import running_platform
from tests.support.processes import asgi_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


@pytest.fixture(scope="module")
def platform_base() -> Iterator[str]:
    with running_platform() as base:
        yield base


@pytest.fixture(scope="module")
def tool(django_db_setup: None) -> Iterator[str]:
    """The tool (its own daphne: it fetches the platform's keys on 127.0.0.1, which the outbound
    guard allows only when told), addressed on another site than the platform's: localhost."""
    allowed = ",".join(LOOPBACK)
    with asgi_server(DJANGO_ALLOW_ASYNC_UNSAFE="", VIVA_OUTBOUND_ALLOWED_NETWORKS=allowed) as at:
        yield f"http://{at}".replace("127.0.0.1", "localhost")


@pytest.fixture
def registered(platform_base: str, tool: str) -> LtiRegistration:
    call_command(
        "lti_register",
        name="Framing LMS",
        issuer=platform_base,
        client_id="viva-framed",
        auth_url=f"{platform_base}/auth",
        token_url=f"{platform_base}/token",
        keyset_url=f"{platform_base}/jwks",
        deployment=["deployment-1"],
        base_url=tool,
    )
    registration = LtiRegistration.objects.get(issuer=platform_base)
    jwks = requests.get(f"{tool}/lti/jwks/", timeout=10).json()
    setup = {
        "clientId": "viva-framed",
        "deploymentId": "deployment-1",
        "loginUrl": f"{tool}/lti/login/{registration.uuid}/",
        "launchUrl": f"{tool}/lti/launch/",
        "jwks": jwks,
        "members": [],
    }
    requests.post(f"{platform_base}/test/setup", json=setup, timeout=10).raise_for_status()
    return registration


def test_the_picker_works_inside_the_platforms_frame(
    page: Page, platform_base: str, tool: str, registered: LtiRegistration
) -> None:
    author = AuthorFactory()
    version = version_publish(draft=DraftPackageFactory(owner=author), user=author).version
    spec: dict[str, Any] = {
        "user": "ines",
        "role": "Instructor",
        "link": "link-framed",
        "deep_link": "1",
        "context": "course-7",
    }
    login_url = requests.get(f"{platform_base}/test/launch", params=spec, timeout=10).json()[
        "loginUrl"
    ]
    page.goto(f"{platform_base}/test/course_frame?{urlencode({'src': login_url})}")
    # The platform's authorization endpoint answers (inside the frame) a form to the tool's
    # launch URL; a real LMS submits it by script.
    auth = page.frame_locator("iframe").locator("form")
    expect(auth).to_have_count(1)
    platform_frame = next(f for f in page.frames if f.url.startswith(f"{platform_base}/auth"))
    with page.expect_response(lambda r: r.url.startswith(f"{tool}/lti/deep-link/")) as picked:
        platform_frame.evaluate("document.forms[0].submit()")
    picker = picked.value
    ancestors = picker.headers["content-security-policy"]
    assert f"frame-ancestors {platform_base}" in ancestors, ancestors
    assert picker.status == 200
    framed = page.frame_locator("iframe")
    framed.get_by_label(version.title, exact=False).check()
    framed.get_by_label("Title in the course").fill("Framed viva")
    screenshot(page, "lti-framed-picker")
    with page.expect_response(lambda r: r.url.startswith(f"{tool}/lti/deep-link/")) as chosen:
        framed.get_by_role("button", name="Create the exam link").click()
    assert chosen.value.status == 200, chosen.value.text()
    # The deep-linking response (a form posting to the platform) is framed and may post there.
    policy = chosen.value.headers["content-security-policy"]
    assert f"frame-ancestors {platform_base}" in policy, policy
    assert f"form-action 'self' {platform_base}" in policy, policy
    with page.expect_response(f"{platform_base}/deeplink/return") as returned:
        framed.get_by_role("button", name="Add to the course").click()
    assert returned.value.status == 200
    expect(framed.get_by_text("Content added to the course.")).to_be_visible()
    (items,) = requests.get(f"{platform_base}/test/deep_links", timeout=10).json()[-1:]
    (item,) = items
    sitting = Sitting.objects.get(title="Framed viva")
    assert item["custom"] == {"viva_sitting": str(sitting.pk)}
    (frame,) = page.main_frame.child_frames
    assert frame.url == f"{platform_base}/deeplink/return"


def test_pages_outside_the_lti_flow_are_never_framed(
    page: Page, tool: str, registered: LtiRegistration
) -> None:
    for path in ("/accounts/login/", "/lti/deep-link/"):
        response = requests.get(f"{tool}{path}", timeout=10)
        policy = response.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in policy, (path, policy)
