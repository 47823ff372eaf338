"""Tenancy of LMS placements (issue #32) against two independent LTI platforms (two
registrations, two deployments each, several courses): a sitting belongs to the registration,
deployment and course that placed it; a launch from anywhere else never binds to it. A learner
is refused; an instructor is refused too, with the offer of a copy for their own course."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from lti.models import LaunchAccount, Placement, SittingLink
from publishing.models import PublishedVersion
from sessions.models import ExamSession, Sitting
from tests.lti.lms import COURSE_MEMBERS, Lms, lms_pair, platform_bases, register, version

__all__ = ["lms_pair", "platform_bases", "version"]

pytestmark = pytest.mark.django_db(transaction=True)


def placed(lms: Lms, client: Client, version: PublishedVersion) -> tuple[Sitting, dict[str, Any]]:
    """Ines places an exam in course 1 of ``lms`` and opens it once (her roster: Alice)."""
    item = lms.place(client, instructor="ines", context="course-1", version=version)
    sitting = Sitting.objects.get(pk=item["custom"]["viva_sitting"])
    opened = lms.launch(client, user="ines", role="Instructor", custom=item["custom"])
    assert opened["Location"] == f"/proctor/sittings/{sitting.pk}/"
    client.logout()
    return sitting, item["custom"]


def state(sitting: Sitting) -> tuple[list[str], list[str], int]:
    """Who proctors the sitting, whose sessions it holds, how many links bind it."""
    return (
        sorted(u.username for u in sitting.proctors.all()),
        sorted(s.candidate.email for s in ExamSession.objects.filter(sitting=sitting)),
        SittingLink.objects.filter(sitting=sitting).count(),
    )


def test_deep_linking_records_the_placement(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion
) -> None:
    lms, _ = lms_pair
    sitting, _ = placed(lms, client, version)
    (placement,) = Placement.objects.filter(sitting=sitting)
    assert placement.how == "deep_link"
    assert placement.context.id_on_platform == "course-1"
    assert placement.context.deployment.deployment_id == "deployment-1"
    assert placement.context.deployment.registration == lms.registration
    assert state(sitting)[1] == ["alice@uni.example"]


@pytest.mark.parametrize(
    ("where", "context", "deployment"),
    [
        ("another course", "course-9", ""),
        ("another deployment", "course-1", "deployment-2"),
        ("another LMS", "course-1", ""),
    ],
)
def test_a_learner_naming_another_courses_sitting_is_refused(
    lms_pair: tuple[Lms, Lms],
    client: Client,
    version: PublishedVersion,
    caplog: pytest.LogCaptureFixture,
    where: str,
    context: str,
    deployment: str,
) -> None:
    first, second = lms_pair
    sitting, custom = placed(first, client, version)
    before = state(sitting)
    lms = second if where == "another LMS" else first
    extra = {"deployment": deployment} if deployment else {}
    response = lms.launch(
        client, user="zed", context=context, link="copied-link", custom=custom, **extra
    )
    assert response.status_code == 403
    page = response.content.decode()
    assert "Ask your instructor to place the exam in this course" in page
    assert "placed_elsewhere" in page and "LTI launch refused: placed_elsewhere" in caplog.text
    assert "_auth_user_id" not in client.session
    assert state(sitting) == before
    assert not ExamSession.objects.filter(candidate__email="zed@uni.example").exists()


@pytest.mark.parametrize("where", ["another course", "another LMS"])
def test_an_instructor_of_another_course_gets_neither_the_sitting_nor_its_roster(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion, where: str
) -> None:
    first, second = lms_pair
    sitting, custom = placed(first, client, version)
    before = state(sitting)
    lms = second if where == "another LMS" else first
    context = "course-9" if where == "another course" else "course-1"
    response = lms.launch(
        client, user="mallory", role="Instructor", context=context, link="l9", custom=custom
    )
    assert response.status_code == 403
    page = response.content.decode()
    assert "This exam was placed in another course" in page
    assert "Make a copy of this exam for this course" in page
    assert "Place the same exam in this course too" not in page  # she does not run it
    assert "_auth_user_id" not in client.session
    assert state(sitting) == before
    # Asking for the same exam anyway is refused; nothing changes.
    same = client.post("/lti/placement/", {"choice": "same"})
    assert same.status_code == 403 and "Only an instructor of this exam" in same.content.decode()
    assert state(sitting) == before


def test_a_course_copy_offers_the_instructor_a_copy_of_the_exam(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion
) -> None:
    lms, _ = lms_pair
    sitting, custom = placed(lms, client, version)
    before = state(sitting)
    # The course was copied into course 9: its link carries the same custom parameter.
    offer = lms.launch(
        client, user="mallory", role="Instructor", context="course-9", link="l9", custom=custom
    )
    assert offer.status_code == 403
    made = client.post("/lti/placement/", {"choice": "copy"})
    assert made.status_code == 302, made.content.decode()
    copy = Sitting.objects.exclude(pk=sitting.pk).get(version=version)
    assert made["Location"] == f"/proctor/sittings/{copy.pk}/"
    assert copy.title == sitting.title
    (placement,) = Placement.objects.filter(sitting=copy)
    assert (placement.how, placement.copied_from, placement.context.id_on_platform) == (
        "copy",
        sitting,
        "course-9",
    )
    assert state(copy)[1] == ["zed@uni.example"]  # course 9's roster, in its own sitting
    assert state(sitting) == before
    # The copied link now opens the copy, for its learners too.
    client.logout()
    again = lms.launch(client, user="zed", context="course-9", link="l9", custom=custom)
    zed = ExamSession.objects.get(candidate__email="zed@uni.example")
    assert again["Location"] == f"/exam/{zed.pk}/" and zed.sitting == copy


def test_an_instructor_who_runs_the_exam_may_place_it_in_another_of_their_courses(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion
) -> None:
    lms, _ = lms_pair
    sitting, custom = placed(lms, client, version)
    offer = lms.launch(
        client, user="ines", role="Instructor", context="course-2", link="l2", custom=custom
    )
    assert offer.status_code == 403
    assert "Place the same exam in this course too" in offer.content.decode()
    added = client.post("/lti/placement/", {"choice": "same"})
    assert added["Location"] == f"/proctor/sittings/{sitting.pk}/"
    contexts = Placement.objects.filter(sitting=sitting).values_list(
        "context__id_on_platform", flat=True
    )
    assert sorted(contexts) == ["course-1", "course-2"]
    assert state(sitting)[1] == ["alice@uni.example", "bob@uni.example"]


def test_an_unplaced_sitting_is_claimed_by_the_first_course_only(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion
) -> None:
    lms, other = lms_pair
    sitting = Sitting.objects.create(
        version=version, title="Manual", created_by=version.draft.owner
    )
    custom = {"viva_sitting": str(sitting.pk)}
    first = lms.launch(client, user="alice", context="course-1", link="m1", custom=custom)
    assert first.status_code == 302
    (placement,) = Placement.objects.filter(sitting=sitting)
    assert placement.how == "first_launch"
    client.logout()
    assert lms.launch(client, user="zed", context="course-9", custom=custom).status_code == 403
    assert other.launch(client, user="alice", custom=custom).status_code == 403
    assert Placement.objects.filter(sitting=sitting).count() == 1


def test_a_second_registration_of_the_same_issuer_has_accounts_of_its_own(
    lms_pair: tuple[Lms, Lms], client: Client, version: PublishedVersion
) -> None:
    """One LMS registered twice (two client ids of one issuer: Canvas developer keys per
    sub-account, Blackboard's shared issuer): the same person launching through both gets an
    account per registration (a registration's users are its own), never a server error."""
    first, _ = lms_pair
    _, custom = placed(first, client, version)
    assert first.launch(client, user="alice", custom=custom).status_code == 302
    client.logout()
    second = register(first.base, client, COURSE_MEMBERS, client_id="viva-tool-2")
    assert second.registration != first.registration
    other, _ = placed(second, client, version)  # Ines again, through the second registration
    assert (
        second.launch(client, user="alice", custom={"viva_sitting": str(other.pk)}).status_code
        == 302
    )
    accounts = LaunchAccount.objects.filter(lti_user__sub__in=["ines", "alice"])
    assert accounts.count() == 4
    assert len({a.user_id for a in accounts}) == 4
    assert {a.lti_user.registration for a in accounts} == {first.registration, second.registration}
