"""Start windows (sessions.windows): the sitting's window and late-start cut-off are enforced on
the journey pages, the session socket and the voice offer; per-candidate overrides need a reason;
an exam already started is never stopped by its window."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from publishing.models import PublishedVersion
from publishing.services import version_publish
from sessions import scheduling, windows
from sessions.models import ExamSession, Sitting, WindowOverride
from tests.factories import (
    AuthorFactory,
    CandidateFactory,
    DraftPackageFactory,
    ProctorFactory,
    example_document,
)

pytestmark = pytest.mark.django_db

JOURNEY = ("entry", "identity", "briefing", "setup", "room")


@pytest.fixture
def version() -> PublishedVersion:
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=example_document())
    return version_publish(draft=draft, user=author).version


def _session(
    version: PublishedVersion, *, opens: datetime | None = None, cutoff: datetime | None = None
) -> ExamSession:
    sitting = Sitting.objects.create(
        version=version,
        title="CS201 orals",
        created_by=version.published_by,
        scheduled_for=opens,
        start_cutoff_at=cutoff,
    )
    return ExamSession.objects.create(sitting=sitting, candidate=CandidateFactory())


def url(session: ExamSession, step: str) -> str:
    return reverse(f"exam_sessions:exam-{step}", kwargs={"session_id": session.pk})


def test_before_the_window_every_step_shows_when_it_opens(
    client: Client, version: PublishedVersion
) -> None:
    opens = timezone.now() + timedelta(hours=2)
    session = _session(version, opens=opens, cutoff=opens + timedelta(minutes=30))
    client.force_login(session.candidate)
    for step in JOURNEY:
        assert client.get(url(session, step))["Location"] == url(session, "window"), step
    # Posting a step does not get past the window either.
    assert client.post(url(session, "identity"), {"identity": "yes", "consent": "yes"})[
        "Location"
    ] == url(session, "window")
    session.refresh_from_db()
    assert session.identity_confirmed_at is None
    page = client.get(url(session, "window"))
    assert page.status_code == 403
    text = page.content.decode()
    assert "not open yet" in text
    assert opens.strftime("%H:%M") in text and str(opens.year) in text
    home = client.get(reverse("exam_sessions:candidate-home")).content.decode()
    assert "Opens " in home and "Open the exam" not in home


def test_after_the_cut_off_the_candidate_is_refused_with_a_clear_page(
    client: Client, version: PublishedVersion
) -> None:
    now = timezone.now()
    session = _session(version, opens=now - timedelta(hours=2), cutoff=now - timedelta(minutes=1))
    client.force_login(session.candidate)
    assert client.get(url(session, "room"))["Location"] == url(session, "window")
    page = client.get(url(session, "window"))
    assert page.status_code == 403
    assert "start window has closed" in page.content.decode()
    assert "contact your proctor" in page.content.decode()


def test_inside_the_window_the_journey_goes_on(client: Client, version: PublishedVersion) -> None:
    now = timezone.now()
    session = _session(version, opens=now - timedelta(minutes=5), cutoff=now + timedelta(hours=1))
    client.force_login(session.candidate)
    assert client.get(url(session, "entry"))["Location"] == url(session, "identity")
    assert client.get(url(session, "identity")).status_code == 200
    # The window page sends a candidate inside the window on.
    assert client.get(url(session, "window"))["Location"] == url(session, "identity")


def test_a_started_exam_is_not_stopped_by_the_cut_off(
    client: Client, version: PublishedVersion
) -> None:
    now = timezone.now()
    session = _session(version, opens=now - timedelta(hours=2), cutoff=now - timedelta(minutes=1))
    ExamSession.objects.filter(pk=session.pk).update(
        state="in_progress",
        identity_confirmed_at=now,
        consent_given_at=now,
        briefing_seen_at=now,
        exam_mode="text",
    )
    session.refresh_from_db()
    assert windows.may_start(session)
    client.force_login(session.candidate)
    assert client.get(url(session, "entry"))["Location"] == url(session, "room")


def test_an_override_with_a_reason_gives_one_candidate_their_own_window(
    client: Client, version: PublishedVersion
) -> None:
    now = timezone.now()
    session = _session(version, opens=now - timedelta(hours=2), cutoff=now - timedelta(minutes=1))
    other = ExamSession.objects.create(sitting=session.sitting, candidate=CandidateFactory())
    proctor = ProctorFactory()
    session.sitting.proctors.add(proctor)
    staff = Client()
    staff.force_login(proctor)
    target = reverse("exam_sessions:proctor-window", kwargs={"session_id": session.pk})
    # No reason: refused, nothing stored.
    staff.post(target, {"start_cutoff_at": (now + timedelta(hours=1)).isoformat()})
    assert not WindowOverride.objects.exists()
    staff.post(
        target,
        {"start_cutoff_at": (now + timedelta(hours=1)).isoformat(), "reason": "Train delayed"},
    )
    override = WindowOverride.objects.get()
    assert override.reason == "Train delayed" and override.created_by == proctor
    client.force_login(session.candidate)
    assert client.get(url(session, "entry"))["Location"] == url(session, "identity")
    # The other candidate of the sitting keeps the sitting's window.
    client.force_login(other.candidate)
    assert client.get(url(other, "entry"))["Location"] == url(other, "window")


def test_another_sittings_proctor_cannot_override(
    client: Client, version: PublishedVersion
) -> None:
    session = _session(version)
    client.force_login(ProctorFactory())
    target = reverse("exam_sessions:proctor-window", kwargs={"session_id": session.pk})
    assert client.post(target, {"reason": "because I can"}).status_code == 404
    assert not WindowOverride.objects.exists()


def test_override_refused_once_started_and_for_a_reversed_window(version: PublishedVersion) -> None:
    session = _session(version)
    user = version.published_by
    now = timezone.now()
    with pytest.raises(ValidationError, match="after the window opens"):
        windows.window_override(
            session=session, user=user, opens_at=now, closes_at=now, reason="reversed window"
        )
    ExamSession.objects.filter(pk=session.pk).update(state="in_progress")
    with pytest.raises(ValidationError, match="already started"):
        windows.window_override(
            session=session, user=user, opens_at=None, closes_at=None, reason="too late now"
        )


def test_scheduling_refuses_a_cut_off_before_the_start(version: PublishedVersion) -> None:
    now = timezone.now()
    with pytest.raises(ValidationError):
        scheduling.sitting_create(
            user=version.published_by,
            version=version,
            title="x",
            scheduled_for=now,
            start_cutoff_at=now - timedelta(minutes=1),
        )


def test_proctor_schedules_a_window_from_the_page(
    client: Client, version: PublishedVersion
) -> None:
    client.force_login(version.published_by)
    response = client.post(
        reverse("exam_sessions:proctor-home"),
        {
            "version": str(version.pk),
            "title": "Window test",
            "scheduled_for": "2030-06-01T09:00",
            "start_cutoff_at": "2030-06-01T09:30",
        },
    )
    assert response.status_code == 302
    sitting = Sitting.objects.get(title="Window test")
    assert sitting.start_cutoff_at - sitting.scheduled_for == timedelta(minutes=30)


@given(
    opens=st.one_of(st.none(), st.integers(-1000, 1000)),
    length=st.one_of(st.none(), st.integers(1, 1000)),
    at=st.integers(-3000, 3000),
)
def test_window_status_is_open_exactly_between_opening_and_cut_off(
    opens: int | None, length: int | None, at: int
) -> None:
    base = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    start = None if opens is None else base + timedelta(minutes=opens)
    anchor = start or base
    end = None if length is None else anchor + timedelta(minutes=length)
    now = base + timedelta(minutes=at)
    status = windows.Window(start, end).status(now)
    before = start is not None and now < start
    after = end is not None and now >= end
    expected = (
        windows.WindowStatus.NOT_YET
        if before
        else windows.WindowStatus.CLOSED
        if after
        else windows.WindowStatus.OPEN
    )
    assert status is expected
