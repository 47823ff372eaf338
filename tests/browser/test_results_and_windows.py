"""Windows and results in a real browser: a candidate outside the start window sees when the exam
opens; a marker releases locked marks with the keyboard; the candidate reads the result and
lodges an appeal with the keyboard; the marker sees it. axe-core runs on each new page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from accounts.services import invitation_create
from config.celery import app
from marking import services
from marking.models import SessionMark
from publishing.services import version_publish
from sessions.models import ExamSession, Sitting
from tests.browser.helpers import SignIn, axe_violations, screenshot
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory
from tests.marking.exams import completed_session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def assert_axe_clean(page: Page, name: str) -> None:
    violations = axe_violations(page)
    screenshot(page, name)
    assert violations == [], f"{name}: {json.dumps(violations, indent=2)}"


@pytest.fixture
def locked_session(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    monkeypatch.setattr("sessions.broadcast.publish_events", lambda *args, **kwargs: None)
    try:
        marker = AuthorFactory(display_name="Mara Marker")
        draft = DraftPackageFactory(owner=marker)
        version = version_publish(draft=draft, user=marker).version
        candidate = CandidateFactory(display_name="Casey Candidate")
        session = completed_session(version=version, candidate=candidate, profile="mixed")
        services.marks_lock(mark=SessionMark.objects.get(session=session), user=marker)
        yield marker, session
    finally:
        app.conf.task_always_eager = before


def test_release_result_and_appeal_with_the_keyboard(
    page: Page, sign_in: SignIn, locked_session: tuple[Any, Any]
) -> None:
    marker, session = locked_session
    sign_in(marker)
    page.goto(f"/marking/sessions/{session.pk}/")
    release = page.get_by_role("button", name="Release the result to the candidate")
    release.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#release-state")).to_contain_text("Released to the candidate")
    page.get_by_role("button", name="Sign out").click()

    invite = invitation_create(
        candidate=session.candidate, created_by=marker, next_path=f"/exam/{session.pk}/result/"
    )
    page.goto(invite.path)
    page.get_by_role("button", name="Continue to my exam").click()
    page.wait_for_url(f"**/exam/{session.pk}/result/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Your result")
    expect(page.get_by_text("Your score:")).to_be_visible()
    assert_axe_clean(page, "result-released")
    reason = page.get_by_label("Why you are appealing")
    reason.focus()
    page.keyboard.type("The examiner cut me off during question 2.")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Your appeal is being considered.")).to_be_visible()
    assert_axe_clean(page, "result-appealed")

    mark = SessionMark.objects.get(session=session)
    assert mark.state == SessionMark.State.APPEALED
    assert mark.appeals.get().opened_by == session.candidate


def test_window_page_says_when_the_exam_opens(page: Page) -> None:
    author = AuthorFactory()
    version = version_publish(draft=DraftPackageFactory(owner=author), user=author).version
    opens = timezone.now() + timedelta(days=1)
    sitting = Sitting.objects.create(
        version=version,
        title="CS201 orals",
        created_by=author,
        scheduled_for=opens,
        start_cutoff_at=opens + timedelta(minutes=30),
    )
    session = ExamSession.objects.create(sitting=sitting, candidate=CandidateFactory())
    invite = invitation_create(
        candidate=session.candidate, created_by=author, next_path=f"/exam/{session.pk}/"
    )
    page.goto(invite.path)
    page.get_by_role("button", name="Continue to my exam").click()
    page.wait_for_url(f"**/exam/{session.pk}/window/")
    expect(page.get_by_role("heading", level=1)).to_have_text("The exam is not open yet")
    expect(page.get_by_text(opens.strftime("%H:%M")).first).to_be_visible()
    assert_axe_clean(page, "window-not-open")
