"""A launch's claims longer than the columns django-lti stores them in (``lti.claims``), sent by
the independent platform (tests/support/lti_platform): display text is cut, optional values left
out, and an identifier over LTI's 255 characters refuses the launch clearly; never a 500. The
same for the members of a course's roster (Names and Role Provisioning)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import requests
from django.test import Client
from lti_tool.models import LtiContext, LtiUser

from sessions.models import ExamSession, Sitting
from tests.lti.test_platform_launches import (
    INSTRUCTOR,
    LEARNER,
    launch,
    platform,
    platform_base,
    sitting,
)
from tests.lti.test_refusals import assert_refused

__all__ = ["platform", "platform_base", "sitting"]

pytestmark = pytest.mark.django_db(transaction=True)

CONTEXT = "https://purl.imsglobal.org/spec/lti/claim/context"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
LONG_SERVICE_URL = "https://lms.uni.example/api/lti/courses/1/" + "x" * 200
AVATAR = "https://cdn.example.edu/avatars/" + "a" * 260 + ".png?signature=" + "s" * 40


def test_long_display_values_are_cut_or_left_out_and_the_learner_gets_in(
    platform: dict[str, Any], sitting: Sitting, caplog: pytest.LogCaptureFixture
) -> None:
    claims = {
        "name": "N" * 600,
        "given_name": "G" * 501,
        "email": "x" * 250 + "@uni.example",
        "picture": AVATAR,  # a signed CDN URL: longer than django-lti's 200
        CONTEXT: {"id": "course-1", "label": "L" * 300, "title": "T" * 600},
    }
    with caplog.at_level(logging.WARNING):
        response, _ = launch(
            Client(),
            platform["base"],
            user="alice",
            role="Learner",
            custom={"viva_sitting": str(sitting.pk)},
            claims=json.dumps(claims),
        )
    assert response.status_code == 302, response.content[:300]
    session = ExamSession.objects.get(sitting=sitting)
    assert response["Location"] == f"/exam/{session.pk}/"
    alice = LtiUser.objects.get(sub="alice")
    assert (alice.name, alice.given_name) == ("N" * 500, "G" * 500)
    assert alice.picture_url == "" and alice.email == ""  # left out: nothing stored before
    course = LtiContext.objects.get(id_on_platform="course-1")
    assert (course.label, course.title) == ("L" * 255, "T" * 500)
    assert "LTI launch claims over their columns" in caplog.text


def test_an_identifier_over_255_characters_is_a_clear_refusal(
    platform: dict[str, Any], sitting: Sitting, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="lti.views")
    response, _ = launch(
        Client(),
        platform["base"],
        user="u" * 256,
        role="Learner",
        custom={"viva_sitting": str(sitting.pk)},
    )
    assert_refused(response, caplog, 403)
    assert "longer than LTI allows" in response.content.decode()
    assert not LtiUser.objects.filter(sub__startswith="uuu").exists()


@pytest.mark.parametrize(
    "claim",
    [
        {NRPS: {"context_memberships_url": LONG_SERVICE_URL, "service_versions": ["2.0"]}},
        {AGS: {"lineitems": LONG_SERVICE_URL, "scope": []}},
        {AGS: {"lineitem": LONG_SERVICE_URL, "scope": []}},
    ],
    ids=["roster", "line items", "line item"],
)
def test_a_service_url_longer_than_the_tool_keeps_is_a_clear_refusal(
    platform: dict[str, Any], sitting: Sitting, caplog: pytest.LogCaptureFixture, claim: Any
) -> None:
    """A roster or grade service URL over django-lti's 200 characters cannot be stored, and
    dropping it would break roster and grade sync unseen: the launch is refused, saying why
    (an LMS administrator can act on it), never a 500."""
    caplog.set_level(logging.WARNING, logger="lti.views")
    response, _ = launch(
        Client(),
        platform["base"],
        user="alice",
        role="Learner",
        custom={"viva_sitting": str(sitting.pk)},
        claims=json.dumps({CONTEXT: {"id": "course-1"}, **claim}),
    )
    assert_refused(response, caplog, 403)
    assert "longer than the tool can keep" in response.content.decode()
    assert not ExamSession.objects.filter(sitting=sitting).exists()


def test_roster_members_with_long_values_are_stored_bounded_or_skipped(
    platform: dict[str, Any], sitting: Sitting, client: Client
) -> None:
    """The instructor's launch reads the roster: a member's long email is left out, one whose
    user id is over 255 characters is skipped; the others get their sessions."""
    members = [
        {"user_id": "alice", "roles": [LEARNER], "name": "A" * 600, "email": "y" * 260},
        {"user_id": "v" * 256, "roles": [LEARNER], "name": "Too long an id"},
        {"user_id": "bob", "roles": [LEARNER], "name": "Bob B", "email": "bob@uni.example"},
        {"user_id": "ines", "roles": [INSTRUCTOR], "name": "Ines I"},
    ]
    requests.post(
        f"{platform['base']}/test/members", json={"members": members}, timeout=10
    ).raise_for_status()
    response, _ = launch(
        client,
        platform["base"],
        user="ines",
        role="Instructor",
        custom={"viva_sitting": str(sitting.pk)},
    )
    assert response.status_code == 302, response.content[:300]
    emails = sorted(s.candidate.display_name for s in ExamSession.objects.filter(sitting=sitting))
    assert emails == ["A" * 150, "Bob B"]
    assert LtiUser.objects.get(sub="alice").email == ""
