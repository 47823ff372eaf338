"""Two independent LTI platforms (``lti1p3platform``, tests/support/lti_platform: separate
processes, two issuers) registered in the tool, and what a person does in them: launch a
course's link, place an exam with Deep Linking, read the gradebook. Used by
``test_tenancy.py`` and ``test_grade_sync.py``."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from django.core.management import call_command
from django.test import Client
from lti_tool.models import LtiRegistration

from publishing.models import PublishedVersion
from publishing.services import version_publish
from sessions.models import Sitting
from tests.factories import AuthorFactory, DraftPackageFactory
from tests.support.lti_platform import running_platform

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
CLIENT_ID = "viva-tool"
DEPLOYMENTS = ["deployment-1", "deployment-2"]


def member(user: str, role: str = "Learner") -> dict[str, Any]:
    return {
        "user_id": user,
        "roles": [LIS + role],
        "name": user.title(),
        "email": f"{user}@uni.example",
    }


@dataclass
class Lms:
    """One platform registered in the tool."""

    base: str
    registration: LtiRegistration

    def launch(
        self,
        client: Client,
        *,
        user: str,
        role: str = "Learner",
        context: str = "course-1",
        link: str = "link-1",
        **extra: Any,
    ) -> Any:
        """One launch through the platform (OIDC login, the signed id token); our response."""
        params = {"user": user, "role": role, "link": link, "context": context, **extra}
        if "custom" in params:
            params["custom"] = json.dumps(params["custom"])
        answer = requests.get(f"{self.base}/test/launch", params=params, timeout=10)
        parts = urlsplit(answer.json()["loginUrl"])
        redirect = client.get(f"{parts.path}?{parts.query}")
        assert redirect.status_code == 302, redirect.content
        page = requests.get(redirect["Location"], timeout=10)
        assert page.status_code == 200, page.text
        form = {
            name: html.unescape(value)
            for name, value in re.findall(r'name="(\w+)" value="([^"]*)"', page.text)
        }
        return client.post("/lti/launch/", form)

    def place(
        self,
        client: Client,
        *,
        instructor: str,
        context: str,
        version: PublishedVersion | None = None,
        sitting: Sitting | None = None,
        title: str = "",
    ) -> dict[str, Any]:
        """Deep Linking: the instructor picks a new exam of ``version`` (or ``sitting``, one
        they run elsewhere) in the picker; the platform accepts the signed response. Returns
        the content item (its ``custom`` names the sitting)."""
        response = self.launch(
            client, user=instructor, role="Instructor", context=context, deep_link="1"
        )
        assert response.status_code == 302
        assert response["Location"].startswith("/lti/deep-link/?picker=")
        choice = {"sitting": str(sitting.pk)} if sitting else {"version": str(version.pk)}
        chosen = client.post("/lti/deep-link/", {**choice, "title": title})
        assert chosen.status_code == 200, chosen.content.decode()
        text = chosen.content.decode()
        action = re.search(r'action="([^"]+)">\s*<input type="hidden" name="JWT"', text)
        jwt_value = re.search(r'name="JWT" value="([^"]+)"', text)
        assert action and jwt_value
        accepted = requests.post(action.group(1), data={"JWT": jwt_value.group(1)}, timeout=10)
        assert accepted.status_code == 200
        (item,) = requests.get(f"{self.base}/test/deep_links", timeout=10).json()[-1]
        client.logout()
        return dict(item)

    def scores(self, sitting: Sitting, *, user: str | None = None) -> list[Any]:
        """Scores the platform received at ``sitting``'s line items (tag ``viva-<id>``), each
        with the ``context`` (course) of its line item."""
        items = requests.get(f"{self.base}/test/lineitems", timeout=10).json()
        received = requests.get(f"{self.base}/test/scores", timeout=10).json()
        return [
            {**score, "context": items[key]["context"]}
            for key, scores in received.items()
            for score in scores
            if items[key].get("tag") == f"viva-{sitting.pk}"
            and (user is None or score["userId"] == user)
        ]

    def fail_scores(self, count: int, status: int = 503) -> None:
        """The platform refuses the next ``count`` score posts with ``status``."""
        answer = requests.post(
            f"{self.base}/test/fail_scores", json={"count": count, "status": status}, timeout=10
        )
        answer.raise_for_status()


def register(
    base: str,
    client: Client,
    members: dict[str, list[dict[str, Any]]],
    client_id: str = CLIENT_ID,
) -> Lms:
    """Register the platform in the tool (``lti_register``) and the tool in the platform,
    with each course's members (Names and Role Provisioning). Another ``client_id`` is a
    second registration of the same issuer (the platform then launches through it)."""
    call_command(
        "lti_register",
        name=f"LMS {base} {client_id}",
        issuer=base,
        client_id=client_id,
        auth_url=f"{base}/auth",
        token_url=f"{base}/token",
        keyset_url=f"{base}/jwks",
        deployment=DEPLOYMENTS,
        base_url="http://testserver",
    )
    registration = LtiRegistration.objects.get(issuer=base, client_id=client_id)
    setup = {
        "clientId": client_id,
        "deploymentId": DEPLOYMENTS[0],
        "loginUrl": f"http://testserver/lti/login/{registration.uuid}/",
        "launchUrl": "http://testserver/lti/launch/",
        "jwks": client.get("/lti/jwks/").json(),
        "members": [],
        "contextMembers": members,
    }
    requests.post(f"{base}/test/setup", json=setup, timeout=10).raise_for_status()
    return Lms(base=base, registration=registration)


@pytest.fixture(scope="module")
def platform_bases() -> Iterator[tuple[str, str]]:
    with ExitStack() as stack:
        first = stack.enter_context(running_platform())
        second = stack.enter_context(running_platform())
        yield first, second


COURSE_MEMBERS = {
    "course-1": [member("alice"), member("ines", "Instructor")],
    "course-2": [member("bob"), member("ines", "Instructor")],
    "course-9": [member("zed"), member("mallory", "Instructor")],
}


@pytest.fixture
def lms_pair(platform_bases: tuple[str, str], client: Client) -> tuple[Lms, Lms]:
    """Two registered LMSs (each with two deployments; courses 1, 2 and 9)."""
    return (
        register(platform_bases[0], client, COURSE_MEMBERS),
        register(platform_bases[1], client, COURSE_MEMBERS),
    )


@pytest.fixture
def version() -> PublishedVersion:
    author = AuthorFactory()
    return version_publish(draft=DraftPackageFactory(owner=author), user=author).version
