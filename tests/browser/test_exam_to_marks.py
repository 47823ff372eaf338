"""From the exam to the marks, in real browsers: a candidate takes the CS201 exam in text mode
with the offline examiner (the live bot: inline in the server, or on a Celery worker with
Postgres + Redis); its ``exam_completed`` hands the session to marking; the marker then opens
that session, sees the evidence, overrides one target with a rationale, locks the marks and
downloads the CSV whose row matches the screen. Elements are found by role, label and
accessible name.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from marking.models import SessionMark
from sessions.models import SessionEvent
from tests.browser.exam_journey import (
    EXAMINER_TIMEOUT,
    bot_runner,
    go_through_the_journey,
    schedule_exam,
    take_the_exam,
)
from tests.browser.helpers import SignIn, axe_violations, eventually, screenshot, second_person_page
from tests.factories import AuthorFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CANDIDATE = "Casey Candidate"


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


@pytest.fixture
def candidate_page(browser: Browser, live_asgi_server: str) -> Iterator[Page]:
    """The candidate's own browser context (the marker signs in on ``page``)."""
    with second_person_page(browser, live_asgi_server) as page:
        yield page


def test_the_marker_moderates_the_exam_the_candidate_just_took(
    page: Page, candidate_page: Page, sign_in: SignIn
) -> None:
    marker = AuthorFactory(display_name="Mara Marker")
    exam = schedule_exam(author=marker, candidate_name=CANDIDATE)

    # the candidate takes the exam to the completion page
    go_through_the_journey(candidate_page, exam, shots=False)
    answers = take_the_exam(candidate_page, exam)
    assert answers, "the candidate answered nothing"
    candidate_page.get_by_role("link", name="Continue to the completion page").click()
    expect(candidate_page.get_by_role("heading", level=1)).to_contain_text("complete")
    session = exam.session
    assert SessionEvent.objects.filter(session=session, type="exam_completed").count() == 1

    # exam_completed hands the session to marking (on the marking queue, or inline)
    assert eventually(
        lambda: SessionMark.objects.filter(session=session).exists(), EXAMINER_TIMEOUT
    ), "the completed exam was not marked"

    sign_in(marker)
    page.goto("/marking/")
    page.get_by_role("link", name=CANDIDATE).click()
    expect(page.get_by_role("heading", name=f"Marks: {CANDIDATE}", level=1)).to_be_visible()

    # the evidence of the live exam: the candidate's own words are on the page
    targets = page.locator("article.target")
    expect(targets.first).to_be_visible()
    first_answer = answers[0][:40]
    expect(page.get_by_text(first_answer).first).to_be_visible()
    screenshot(page, "e2e-evidence")
    assert axe_violations(page) == []

    # override one target with a rationale
    target = targets.first
    name = target.get_by_role("heading", level=3).inner_text().strip()
    key = target.get_attribute("data-key")
    assert name and key
    shown = target.locator("[data-testid=level]").inner_text().strip().lower()
    new_level = "partial" if shown != "partial" else "satisfactory"
    target.get_by_label(f"New level for {name}").select_option(new_level)
    target.get_by_label(f"Rationale for {name}").fill("Checked against the transcript.")
    target.get_by_role("button", name="Record override").click()
    target = page.get_by_role("article", name=name)
    expect(target.locator("[data-testid=level]")).to_have_text(new_level.capitalize())
    expect(target.get_by_text("Moderator override (Mara Marker)")).to_be_visible()

    # lock
    page.get_by_label("Moderation note").fill("Moderated from the live exam.")
    page.get_by_role("button", name="Lock marks").click()
    expect(page.locator("#mark-state")).to_have_text("Locked")
    screenshot(page, "e2e-locked")

    # the CSV row matches the screen
    score = page.locator("#final-score").inner_text().rstrip("%")
    levels: dict[str, Any] = {
        article.get_attribute("data-key"): article.locator("[data-testid=level]").inner_text()
        for article in page.locator("article.target").all()
    }
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download CSV").click()
    rows = list(csv.DictReader(io.StringIO(download_info.value.path().read_text(encoding="utf-8"))))
    assert len(rows) == 1
    row = rows[0]
    assert row["session_id"] == str(session.pk)
    assert row["candidate_name"] == CANDIDATE
    assert row["exam_score_percent"] == score
    assert row["state"] == "locked"
    assert row[f"level:{key}"] == new_level
    for target_key, level in levels.items():
        assert row[f"level:{target_key}"] == level.lower(), target_key
