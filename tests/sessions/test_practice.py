"""Practice sittings' attempts (sessions.practice, issue #35): "Practise again" makes the next
attempt once, only in a practice sitting, only after the attempt is over and only while the
start window is open; the candidate's home shows the newest attempt; a normal sitting keeps one
session per candidate; staff create practice sittings on the form and the API and see them
marked as practice."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from publishing.models import PublishedVersion
from publishing.services import version_publish
from sessions import practice, scheduling, services, windows
from sessions.models import ExamSession, Sitting
from tests.factories import (
    AuthorFactory,
    CandidateFactory,
    DraftPackageFactory,
    ProctorFactory,
    example_document,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def version() -> PublishedVersion:
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=example_document())
    return version_publish(draft=draft, user=author).version


def sitting_of(version: PublishedVersion, *, is_practice: bool = True, **window: Any) -> Sitting:
    return Sitting.objects.create(
        version=version,
        title="Graphs practice",
        created_by=version.published_by,
        is_practice=is_practice,
        **window,
    )


def over(session: ExamSession) -> ExamSession:
    """The attempt ended (the state the event store projects from ``exam_completed``)."""
    ExamSession.objects.filter(pk=session.pk).update(state="completed")
    session.refresh_from_db()
    return session


def first_attempt(sitting: Sitting) -> ExamSession:
    return ExamSession.objects.create(sitting=sitting, candidate=CandidateFactory())


def again(client: Client, session: ExamSession) -> Any:
    return client.post(f"/exam/{session.pk}/practise-again/")


def test_practise_again_makes_the_next_attempt_once(
    client: Client, version: PublishedVersion
) -> None:
    first = first_attempt(sitting_of(version))
    services.accommodations_set(session=first, extra_time_multiplier="1.50")
    over(first)
    client.force_login(first.candidate)
    one, two = again(client, first), again(client, first)
    second = ExamSession.objects.get(follows=first)
    assert one.status_code == two.status_code == 302
    assert one["Location"] == two["Location"] == f"/exam/{second.pk}/identity/"
    assert (second.attempt, second.state, str(second.extra_time_multiplier)) == (
        2,
        "scheduled",
        "1.50",
    )
    third = practice.practice_again(session=over(second))
    assert third.attempt == 3 and third.follows_id == second.pk
    assert practice.attempts_of(third) == [first, second, third]


def test_an_attempt_not_over_cannot_be_repeated(client: Client, version: PublishedVersion) -> None:
    first = first_attempt(sitting_of(version))
    client.force_login(first.candidate)
    response = again(client, first)
    assert response.status_code == 400
    assert "Finish this attempt" in response.content.decode()
    assert ExamSession.objects.count() == 1


def test_no_new_attempt_once_the_window_closed(client: Client, version: PublishedVersion) -> None:
    sitting = sitting_of(version, start_cutoff_at=timezone.now() + timedelta(hours=1))
    first = over(first_attempt(sitting))
    client.force_login(first.candidate)
    assert 'action="/exam/' in client.get("/exam/").content.decode()  # offered while open
    Sitting.objects.filter(pk=sitting.pk).update(start_cutoff_at=timezone.now())
    response = again(client, first)
    assert response.status_code == 400 and "not open now" in response.content.decode()
    assert ExamSession.objects.count() == 1
    assert "Practise again" not in client.get("/exam/").content.decode()


def test_a_candidates_window_override_counts_for_every_attempt(version: PublishedVersion) -> None:
    sitting = sitting_of(version, start_cutoff_at=timezone.now() - timedelta(hours=1))
    first = first_attempt(sitting)
    later = timezone.now() + timedelta(hours=2)
    windows.window_override(
        session=first,
        user=ProctorFactory(),
        opens_at=None,
        closes_at=later,
        reason="Train cancelled",
    )
    second = practice.practice_again(session=over(first))
    assert windows.window_for(second).closes_at == later
    assert windows.may_start(second)
    other = first_attempt(sitting)  # another candidate keeps the sitting's window
    assert not windows.may_start(other)


def test_a_normal_sitting_keeps_one_session_per_candidate(
    client: Client, version: PublishedVersion
) -> None:
    sitting = sitting_of(version, is_practice=False)
    session = over(scheduling.candidate_add(sitting=sitting, email="ada@example.test"))
    with pytest.raises(ValidationError):
        scheduling.candidate_add(sitting=sitting, email="ada@example.test")
    client.force_login(session.candidate)
    response = again(client, session)
    assert response.status_code == 400
    assert "Only a practice sitting" in response.content.decode()
    assert ExamSession.objects.filter(sitting=sitting).count() == 1
    done = client.get(f"/exam/{session.pk}/done/")
    assert done.status_code == 200 and "Your exam is complete" in done.content.decode()
    home = client.get("/exam/").content.decode()
    assert "Practice" not in home and "My result" in home


def test_nobody_repeats_another_candidates_attempt(
    client: Client, version: PublishedVersion
) -> None:
    first = over(first_attempt(sitting_of(version)))
    client.force_login(CandidateFactory())
    assert again(client, first).status_code == 404
    assert ExamSession.objects.count() == 1


def test_the_home_page_shows_the_newest_attempt_with_its_number(
    client: Client, version: PublishedVersion
) -> None:
    first = over(first_attempt(sitting_of(version)))
    second = practice.practice_again(session=first)
    client.force_login(first.candidate)
    home = client.get("/exam/").content.decode()
    assert "Practice, attempt 2" in home and "Practice, attempt 1" not in home
    assert f"/exam/{second.pk}/identity/" in home and f"/exam/{first.pk}/" not in home
    journey = client.get(f"/exam/{second.pk}/identity/").content.decode()
    assert 'id="practice-banner"' in journey and "Practice, attempt 2" in journey
    over(second)
    home = client.get("/exam/").content.decode()
    assert f"/exam/{second.pk}/result/" in home and "See your feedback" in home
    assert f'action="/exam/{second.pk}/practise-again/"' in home


def test_a_practice_sitting_never_waits_for_a_proctor(version: PublishedVersion) -> None:
    with pytest.raises(ValidationError):
        scheduling.sitting_create(
            user=version.published_by,
            version=version,
            title="Practice",
            is_practice=True,
            proctor_authorises_start=True,
        )
    sitting = scheduling.sitting_create(
        user=version.published_by, version=version, title="Practice", is_practice=True
    )
    assert sitting.is_practice and not sitting.proctor_authorises_start


def test_a_proctor_schedules_a_practice_sitting_on_the_form(
    client: Client, version: PublishedVersion
) -> None:
    proctor = ProctorFactory()
    client.force_login(proctor)
    response = client.post(
        "/proctor/",
        {"version": str(version.pk), "title": "Graphs practice", "is_practice": "on"},
    )
    assert response.status_code == 302, response.content.decode()
    sitting = Sitting.objects.get(title="Graphs practice")
    assert sitting.is_practice
    first = over(scheduling.candidate_add(sitting=sitting, email="ada@example.test"))
    practice.practice_again(session=first)
    home = client.get("/proctor/").content.decode()
    row = home.split("Graphs practice</a>")[1].split("</tr>")[0]
    assert '<span class="badge">Practice</span>' in row
    assert "<td>1</td>" in row  # one candidate, two attempts
    page = client.get(f"/proctor/sittings/{sitting.pk}/").content.decode()
    assert "A practice sitting" in page
    roster = client.get(f"/proctor/sittings/{sitting.pk}/candidates/").content.decode()
    assert "Attempt 1" in roster and "Attempt 2" in roster


def test_the_api_creates_and_lists_practice_sittings(
    client: Client, version: PublishedVersion
) -> None:
    client.force_login(ProctorFactory())
    response = client.post(
        "/api/v1/sittings/",
        {"versionId": str(version.pk), "title": "Practice", "isPractice": True},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["isPractice"] is True
    assert Sitting.objects.get(pk=response.json()["id"]).is_practice
    normal = client.post(
        "/api/v1/sittings/", {"versionId": str(version.pk)}, content_type="application/json"
    )
    assert normal.json()["isPractice"] is False


def test_an_lms_launch_enters_the_newest_attempt(version: PublishedVersion) -> None:
    first = over(first_attempt(sitting_of(version)))
    second = practice.practice_again(session=first)
    found, created = practice.session_for_candidate(
        sitting=first.sitting, candidate=first.candidate
    )
    assert (found, created) == (second, False)
    newcomer = CandidateFactory()
    made, created = practice.session_for_candidate(sitting=first.sitting, candidate=newcomer)
    assert created and made.attempt == 1
