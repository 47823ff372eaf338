"""``manage.py seed_demo``: what `make run` shows a newcomer, created once and reused after."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.invitation_tokens import read_token
from accounts.models import Invitation, User
from publishing.models import PublishedVersion
from sessions.models import ExamSession, Sitting

pytestmark = pytest.mark.django_db


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def invitation_url(printed: str) -> str:
    match = re.search(r"https?://\S+/accounts/invite/\S+/", printed)
    assert match, printed
    return match.group(0)


def invited(printed: str) -> object:
    """The invitation a printed link opens."""
    return read_token(invitation_url(printed).rstrip("/").rsplit("/", 1)[1])


def test_seed_schedules_the_demo_exam_and_the_invitation_lands_in_it() -> None:
    printed = seed()
    for username in ("admin", "author", "proctor"):
        assert f"username {username}" in printed
    sitting = Sitting.objects.get()
    session = ExamSession.objects.get()
    assert session.sitting == sitting and session.state == "scheduled"
    assert list(sitting.proctors.values_list("username", flat=True)) == ["proctor"]
    invitation = Invitation.objects.get()
    assert invitation.candidate == session.candidate
    assert invitation.next_path == f"/exam/{session.pk}/"
    assert session.invitation == invitation, "the proctor's roster shows the demo as invited"

    client = Client()
    path = invitation_url(printed).split("://", 1)[1].split("/", 1)[1]
    response = client.post("/" + path)
    assert response.status_code == 302
    assert response["Location"] == f"/exam/{session.pk}/"


def test_a_second_seed_reuses_everything() -> None:
    first = seed()
    second = seed()
    # The token is signed with a timestamp, so the links may differ; the invitation may not.
    assert invited(first) == invited(second) == Invitation.objects.get().pk
    assert User.objects.count() == 4
    assert PublishedVersion.objects.count() == 1
    assert Sitting.objects.count() == 1
    assert ExamSession.objects.count() == 1
    assert Invitation.objects.count() == 1


def test_a_finished_demo_exam_gets_a_fresh_session_and_invitation() -> None:
    seed()
    ExamSession.objects.update(state="completed")
    printed = seed()
    assert ExamSession.objects.count() == 2
    assert Sitting.objects.count() == 2, "a candidate sits a sitting once: a new demo sitting"
    fresh = ExamSession.objects.exclude(state="completed").get()
    assert Invitation.objects.get(next_path=f"/exam/{fresh.pk}/")
    assert str(fresh.pk) in printed


def test_seed_prints_the_lti_registration_urls() -> None:
    printed = seed()
    sitting = Sitting.objects.get()
    for line in (
        "OpenID Connect login initiation URL: http",
        "/lti/login/<registration uuid>/",
        "Launch / redirect / target link URI: http",
        "/lti/launch/",
        "Public keyset (JWKS) URL: http",
        "/lti/jwks/",
        f"viva_sitting={sitting.pk}",
    ):
        assert line in printed, line


def test_the_demo_exam_asks_about_the_sample_report() -> None:
    """Issue #35: the demo package has a grounded node and the demo candidate's session has the
    sample report, so the embedded default shows the feature without a key."""
    seed()
    session = ExamSession.objects.get()
    (material,) = session.materials.all()
    assert material.kind == "report" and material.file_type == "text"
    assert "We chose Dijkstra's algorithm instead of Bellman-Ford" in material.text
    seed()
    assert session.materials.count() == 1
