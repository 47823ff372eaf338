"""LTI 1.3 against an independent platform (``lti1p3platform``, run as a separate process on
127.0.0.1, tests/support/lti_platform): OIDC login initiation, resource-link launches as learner
and instructor, each tampering case refused with a clear page and a log line, the locked mark
posted to the platform's gradebook (pending at lock, the score at release) and re-posted when
moderation changes it.

The person's browser is Django's test client for our pages and ``requests`` for the platform's;
our tool talks to the platform over HTTP (JWKS, token endpoint, AGS)."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from django.core.management import call_command
from django.test import Client
from lti_tool.models import LtiRegistration

from lti.models import GradePassback, SittingLink
from marking import services as marking
from marking.models import SessionMark
from publishing.services import version_publish
from sessions.models import ExamSession, Sitting
from tests.factories import AdminFactory, AuthorFactory, DraftPackageFactory
from tests.marking.exams import completed_session
from tests.support.lti_platform import running_platform

pytestmark = pytest.mark.django_db(transaction=True)

LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
CLIENT_ID = "viva-tool"
DEPLOYMENT = "deployment-1"


@pytest.fixture(scope="module")
def platform_base() -> Iterator[str]:
    with running_platform() as base:
        yield base


@pytest.fixture
def platform(platform_base: str, client: Client) -> dict[str, Any]:
    """Register the platform in the tool (management command) and the tool in the platform."""
    call_command(
        "lti_register",
        name="Test LMS",
        issuer=platform_base,
        client_id=CLIENT_ID,
        auth_url=f"{platform_base}/auth",
        token_url=f"{platform_base}/token",
        keyset_url=f"{platform_base}/jwks",
        deployment=[DEPLOYMENT],
        base_url="http://testserver",
    )
    registration = LtiRegistration.objects.get(issuer=platform_base)
    jwks = client.get("/lti/jwks/").json()
    assert jwks["keys"], "the tool publishes its keys"
    setup = {
        "clientId": CLIENT_ID,
        "deploymentId": DEPLOYMENT,
        "loginUrl": f"http://testserver/lti/login/{registration.uuid}/",
        "launchUrl": "http://testserver/lti/launch/",
        "jwks": jwks,
        "members": [
            {
                "user_id": "alice",
                "roles": [LEARNER],
                "name": "Alice A",
                "email": "alice@uni.example",
            },
            {"user_id": "bob", "roles": [LEARNER], "name": "Bob B", "email": "bob@uni.example"},
            {"user_id": "gone", "roles": [LEARNER], "name": "Gone G", "status": "Inactive"},
            {"user_id": "ines", "roles": [INSTRUCTOR], "name": "Ines I"},
        ],
    }
    requests.post(f"{platform_base}/test/setup", json=setup, timeout=10).raise_for_status()
    return {"base": platform_base, "registration": registration}


@pytest.fixture
def sitting() -> Sitting:
    author = AuthorFactory()
    version = version_publish(draft=DraftPackageFactory(owner=author), user=author).version
    return Sitting.objects.create(version=version, title="CS201 orals", created_by=author)


def launch(
    client: Client, base: str, *, user: str, role: str, link: str = "link-1", **extra: Any
) -> tuple[Any, dict[str, str]]:
    """One launch through the platform; returns our launch response and the form posted."""
    params = {"user": user, "role": role, "link": link, **extra}
    if "custom" in params:
        params["custom"] = json.dumps(params["custom"])
    login_url = requests.get(f"{base}/test/launch", params=params, timeout=10).json()["loginUrl"]
    parts = urlsplit(login_url)
    redirect = client.get(f"{parts.path}?{parts.query}")
    assert redirect.status_code == 302, redirect.content
    page = requests.get(redirect["Location"], timeout=10)
    assert page.status_code == 200, page.text
    form = {
        name: html.unescape(value)
        for name, value in re.findall(r'name="(\w+)" value="([^"]*)"', page.text)
    }
    action = re.search(r'action="([^"]+)"', page.text)
    assert action and urlsplit(action.group(1)).path == "/lti/launch/"
    return client.post("/lti/launch/", form), form


def test_learner_lands_in_their_own_exam_session(
    platform: dict[str, Any], sitting: Sitting, client: Client
) -> None:
    response, _ = launch(
        client,
        platform["base"],
        user="alice",
        role="Learner",
        custom={"viva_sitting": str(sitting.pk)},
    )
    assert response.status_code == 302, response.content.decode()
    session = ExamSession.objects.get(sitting=sitting)
    assert response["Location"] == f"/exam/{session.pk}/"
    assert session.candidate.role == "candidate" and session.candidate.email == "alice@uni.example"
    assert client.get(response["Location"])["Location"].endswith("/identity/")
    link = SittingLink.objects.get(sitting=sitting)
    assert link.ags_lineitems.startswith(platform["base"])
    # A second launch of the same person comes back to the same session.
    client.logout()
    again, _ = launch(client, platform["base"], user="alice", role="Learner")
    assert again["Location"] == f"/exam/{session.pk}/"
    assert ExamSession.objects.filter(sitting=sitting).count() == 1


def test_instructor_lands_in_the_proctor_view_and_a_line_item_is_created(
    platform: dict[str, Any], sitting: Sitting, client: Client
) -> None:
    response, _ = launch(
        client,
        platform["base"],
        user="ines",
        role="Instructor",
        custom={"viva_sitting": str(sitting.pk)},
    )
    assert response.status_code == 302, response.content.decode()
    assert response["Location"] == f"/proctor/sittings/{sitting.pk}/"
    assert client.get(response["Location"]).status_code == 200
    assert sitting.proctors.get().role == "proctor"
    items = requests.get(f"{platform['base']}/test/lineitems", timeout=10).json()
    assert any(item["tag"] == f"viva-{sitting.pk}" for item in items.values())


@pytest.mark.parametrize(
    ("tamper", "words"),
    [
        ("issuer", "launch was refused"),
        ("audience", "launch was refused"),
        ("deployment", "not activated"),
        ("expired", "launch was refused"),
        ("unsigned", "launch was refused"),
        ("signature", "launch was refused"),
    ],
)
def test_tampered_launches_are_refused_with_a_page_and_a_log_line(
    platform: dict[str, Any],
    sitting: Sitting,
    client: Client,
    caplog: pytest.LogCaptureFixture,
    tamper: str,
    words: str,
) -> None:
    response, _ = launch(
        client,
        platform["base"],
        user="mallory",
        role="Learner",
        tamper=tamper,
        custom={"viva_sitting": str(sitting.pk)},
    )
    assert response.status_code == 403
    assert words in response.content.decode()
    assert "LTI launch refused" in caplog.text
    assert "_auth_user_id" not in client.session
    assert not ExamSession.objects.exists()


def test_a_replayed_launch_is_refused(
    platform: dict[str, Any], sitting: Sitting, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    first, form = launch(
        client,
        platform["base"],
        user="bob",
        role="Learner",
        custom={"viva_sitting": str(sitting.pk)},
    )
    assert first.status_code == 302
    client.logout()
    replay = client.post("/lti/launch/", form)
    assert replay.status_code == 403
    assert "LTI launch refused" in caplog.text
    assert "_auth_user_id" not in client.session


def test_a_link_without_an_exam_is_refused_clearly(
    platform: dict[str, Any], client: Client
) -> None:
    response, _ = launch(client, platform["base"], user="carol", role="Learner", link="link-x")
    assert response.status_code == 403
    assert "not connected to an exam yet" in response.content.decode()


def test_released_mark_is_posted_and_reposted_after_moderation(
    platform: dict[str, Any], client: Client, eager: None
) -> None:
    author = AuthorFactory()
    version = version_publish(draft=DraftPackageFactory(owner=author), user=author).version
    sitting = Sitting.objects.create(version=version, title="CS201 orals", created_by=author)
    custom = {"viva_sitting": str(sitting.pk)}
    launch(client, platform["base"], user="ines", role="Instructor", link="link-g", custom=custom)
    client.logout()
    launch(client, platform["base"], user="dana", role="Learner", link="link-g")
    own = ExamSession.objects.get(sitting=sitting, candidate__email="dana@uni.example")
    learner = own.candidate
    own.delete()  # the scripted exam below takes its place
    session = completed_session(version=version, candidate=learner, profile="mixed")
    ExamSession.objects.filter(pk=session.pk).update(sitting=sitting)
    client.logout()  # her next launch finds the scripted session (her course's link)
    launch(client, platform["base"], user="dana", role="Learner", link="link-g")
    mark = SessionMark.objects.get(session=session)
    marking.marks_lock(mark=mark, user=author)

    def platform_scores() -> list[dict[str, Any]]:
        scores = requests.get(f"{platform['base']}/test/scores", timeout=10).json()
        return [s for item in scores.values() for s in item if s["userId"] == "dana"]

    (pending,) = platform_scores()  # locked, not released: no score yet
    assert pending["gradingProgress"] == "PendingManual" and "scoreGiven" not in pending
    marking.result_release(mark=mark, user=author)
    first = platform_scores()[1:]
    mark.refresh_from_db()
    assert len(first) == 1
    assert first[0]["scoreGiven"] == pytest.approx(round(mark.final_score * 100, 2))
    assert first[0]["scoreMaximum"] == 100 and first[0]["gradingProgress"] == "FullyGraded"

    marking.appeal_open(mark=mark, user=author, reason="Candidate asked for a review.")
    target = next(iter(marking.current_decisions(mark)))
    current = marking.current_decisions(mark)[target].level
    new_level = "excellent" if current != "excellent" else "absent"
    marking.decision_override(
        mark=mark, target_key=target, level=new_level, rationale="Moderated on appeal.", user=author
    )
    marking.marks_lock(mark=mark, user=author, note="Appeal upheld in part.")
    assert len(platform_scores()) == 2  # the released grade stands until the new release
    marking.result_release(mark=mark, user=author)
    mark.refresh_from_db()
    second = platform_scores()[1:]
    assert len(second) == 2
    assert second[1]["scoreGiven"] == pytest.approx(round(mark.final_score * 100, 2))
    assert second[1]["scoreGiven"] != second[0]["scoreGiven"]
    assert list(GradePassback.objects.values_list("cycle", "kind", "status")) == [
        (1, "pending", "posted"),
        (1, "score", "posted"),
        (2, "score", "posted"),
    ]


def test_instructor_launch_syncs_the_roster_into_the_sitting(
    platform: dict[str, Any], sitting: Sitting, client: Client
) -> None:
    custom = {"viva_sitting": str(sitting.pk)}
    launch(client, platform["base"], user="ines", role="Instructor", link="link-r", custom=custom)
    sessions = ExamSession.objects.filter(sitting=sitting).select_related("candidate")
    assert sorted(s.candidate.email for s in sessions) == ["alice@uni.example", "bob@uni.example"]
    assert {s.candidate.role for s in sessions} == {"candidate"}
    assert SittingLink.objects.get(sitting=sitting).roster_synced_at is not None
    # Alice's own launch later lands in the session the roster sync made for her.
    alice = sessions.get(candidate__email="alice@uni.example")
    client.logout()
    response, _ = launch(client, platform["base"], user="alice", role="Learner", link="link-r")
    assert response["Location"] == f"/exam/{alice.pk}/"
    assert ExamSession.objects.filter(sitting=sitting).count() == 2


def test_deep_linking_places_a_published_assessment_in_the_course(
    platform: dict[str, Any], client: Client
) -> None:
    author = AuthorFactory()
    version = version_publish(draft=DraftPackageFactory(owner=author), user=author).version
    response, _ = launch(
        client, platform["base"], user="ines", role="Instructor", link="link-dl", deep_link="1"
    )
    assert response.status_code == 302
    assert response["Location"].startswith("/lti/deep-link/?picker=")
    page = client.get("/lti/deep-link/")
    assert page.status_code == 200 and version.title in page.content.decode()
    assert client.post("/lti/deep-link/", {"title": "x"}).status_code == 400
    chosen = client.post("/lti/deep-link/", {"version": str(version.pk), "title": "Viva week 5"})
    assert chosen.status_code == 200
    text = chosen.content.decode()
    action = re.search(r'action="([^"]+)">\s*<input type="hidden" name="JWT"', text).group(1)
    jwt_value = re.search(r'name="JWT" value="([^"]+)"', text).group(1)
    assert action == f"{platform['base']}/deeplink/return"
    assert requests.post(action, data={"JWT": jwt_value}, timeout=10).status_code == 200
    (items,) = requests.get(f"{platform['base']}/test/deep_links", timeout=10).json()
    (item,) = items
    sitting = Sitting.objects.get(title="Viva week 5")
    assert sitting.version == version
    assert item["type"] == "ltiResourceLink" and item["title"] == "Viva week 5"
    assert item["custom"] == {"viva_sitting": str(sitting.pk)}
    assert item["lineItem"]["scoreMaximum"] == 100
    # The platform launches the placed link with the custom parameter it was given.
    client.logout()
    response, _ = launch(
        client,
        platform["base"],
        user="erin",
        role="Learner",
        link="link-placed",
        custom=item["custom"],
    )
    session = ExamSession.objects.get(sitting=sitting, candidate__email="erin@uni.example")
    assert response["Location"] == f"/exam/{session.pk}/"


def test_a_learner_cannot_open_the_exam_picker(platform: dict[str, Any], client: Client) -> None:
    response, _ = launch(
        client, platform["base"], user="lee", role="Learner", link="link-dl2", deep_link="1"
    )
    assert response.status_code == 403
    assert "Only instructors can place an exam" in response.content.decode()
    assert client.get("/lti/deep-link/").status_code == 403


def test_dynamic_registration_registers_the_platform_inactive_until_activated(
    platform_base: str, sitting: Sitting, client: Client
) -> None:
    config = f"{platform_base}/.well-known/openid-configuration"
    client.force_login(AdminFactory())  # an administrator registers (or a viva_token URL)
    refused = client.get(
        "/lti/register/", {"openid_configuration": config, "registration_token": "wrong"}
    )
    assert (
        refused.status_code == 502
        and not LtiRegistration.objects.filter(client_id="dyn-client").exists()
    )
    page = client.get(
        "/lti/register/", {"openid_configuration": config, "registration_token": "reg-token-1"}
    )
    assert page.status_code == 200, page.content.decode()
    assert "must activate the deployment" in page.content.decode()
    registration = LtiRegistration.objects.get(client_id="dyn-client")
    assert (registration.issuer, registration.keyset_url) == (
        platform_base,
        f"{platform_base}/jwks",
    )
    deployment = registration.deployments.get()
    assert deployment.deployment_id == "dyn-deployment" and not deployment.is_active
    (sent,) = requests.get(f"{platform_base}/test/registration_requests", timeout=10).json()[-1:]
    assert sent["initiate_login_uri"] == f"http://testserver/lti/login/{registration.uuid}/"
    assert sent["jwks_uri"] == "http://testserver/lti/jwks/"
    assert sent["token_endpoint_auth_method"] == "private_key_jwt"

    # The platform now launches with what it registered: refused until activated.
    setup = {
        "clientId": "dyn-client",
        "deploymentId": "dyn-deployment",
        "loginUrl": sent["initiate_login_uri"],
        "launchUrl": sent["redirect_uris"][0],
        "jwks": client.get("/lti/jwks/").json(),
    }
    requests.post(f"{platform_base}/test/setup", json=setup, timeout=10).raise_for_status()
    custom = {"viva_sitting": str(sitting.pk)}
    response, _ = launch(
        client, platform_base, user="fay", role="Learner", link="l-dyn", custom=custom
    )
    assert response.status_code == 403 and "not activated" in response.content.decode()
    deployment.is_active = True
    deployment.save()
    response, _ = launch(
        client, platform_base, user="fay", role="Learner", link="l-dyn", custom=custom
    )
    assert response.status_code == 302 and response["Location"].startswith("/exam/")


def test_dynamic_registration_refuses_a_configuration_from_elsewhere(client: Client) -> None:
    client.force_login(AdminFactory())
    response = client.get("/lti/register/", {"openid_configuration": "file:///etc/passwd"})
    assert response.status_code == 502
    assert not LtiRegistration.objects.exists()
