"""Marking in a real browser: a marker opens a completed session, sees the evidence, overrides
one target with a rationale, locks the marks and downloads the CSV whose row matches the screen.

The completed session is produced on the test database by the real runtime controller driven by
the simulator's bot stand-in and a scripted candidate (``tests/marking/exams.py``): a realistic
stored log, marked by the ``exam_completed`` hand-off exactly as in production, with a known
misconception and an absent target to check in detail. ``test_exam_to_marks.py`` moderates a
session taken end to end in the browser through the live bot. Elements are found by role, label
and accessible name; axe-core runs on the workspace.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from config.celery import app
from publishing.services import version_publish
from tests.browser.helpers import SignIn, axe_violations, screenshot
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory
from tests.marking.exams import completed_session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TARGET = "Limitation on negative edge weights"


@pytest.fixture
def marked_session(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    """(marker, session): a completed, marked session of the marker's published cs201."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True  # marking runs on commit, in this process
    # Nobody watches this session live, and Playwright's event loop runs in this thread.
    monkeypatch.setattr("sessions.broadcast.publish_events", lambda *args, **kwargs: None)
    try:
        marker = AuthorFactory(display_name="Mara Marker")
        draft = DraftPackageFactory(owner=marker)
        version = version_publish(draft=draft, user=marker).version
        candidate = CandidateFactory(display_name="Casey Candidate")
        session = completed_session(version=version, candidate=candidate, profile="mixed")
        yield marker, session
    finally:
        app.conf.task_always_eager = before


def test_marker_moderates_locks_and_exports(
    page: Page, sign_in: SignIn, marked_session: tuple[Any, Any]
) -> None:
    marker, session = marked_session
    sign_in(marker)
    page.goto("/marking/")
    page.get_by_role("link", name="Casey Candidate").click()
    expect(page.get_by_role("heading", name="Marks: Casey Candidate", level=1)).to_be_visible()
    expect(page.locator("#mark-state")).to_have_text("Needs review")

    # the evidence: the transcript, the marker's reasons, highlighted turns
    greedy = page.get_by_role("article", name="Greedy selection of the closest unsettled vertex")
    expect(greedy.get_by_text("Why (marker):")).to_be_visible()
    expect(greedy.locator("[data-testid=level]")).to_have_text("Satisfactory")
    greedy.get_by_role("button", name="Highlight evidence").click()
    expect(greedy.get_by_role("button", name="Highlight evidence")).to_have_attribute(
        "aria-pressed", "true"
    )
    highlighted = page.locator(".turn.highlight")
    expect(highlighted.first).to_be_visible()
    expect(highlighted.first).to_contain_text("largest distance")  # the misconception turn
    expect(highlighted.nth(1)).to_contain_text("smallest tentative distance")  # corrected
    screenshot(page, "evidence")
    assert axe_violations(page) == []

    # override one target with a rationale
    target = page.get_by_role("article", name=TARGET)
    expect(target.locator("[data-testid=level]")).to_have_text("Absent")
    target.get_by_label(f"New level for {TARGET}").select_option("partial")
    target.get_by_label(f"Rationale for {TARGET}").fill(
        "Mentioned negative edges in the wrap-up; partial credit."
    )
    target.get_by_role("button", name="Record override").click()
    target = page.get_by_role("article", name=TARGET)
    expect(target.locator("[data-testid=level]")).to_have_text("Partial")
    expect(target.get_by_text("Rationale: Mentioned negative edges")).to_be_visible()
    expect(target.get_by_text("Deterministic marker")).to_be_visible()  # history kept
    expect(target.get_by_text("Moderator override (Mara Marker)")).to_be_visible()

    # lock
    page.get_by_label("Moderation note").fill("Moderated after listening to the recording.")
    page.get_by_role("button", name="Lock marks").click()
    expect(page.locator("#mark-state")).to_have_text("Locked")
    expect(page.get_by_role("button", name="Record override")).to_have_count(0)
    screenshot(page, "locked")

    # the CSV row matches the screen
    score = page.locator("#final-score").inner_text().rstrip("%")
    levels = {
        article.get_attribute("data-key"): article.locator("[data-testid=level]").inner_text()
        for article in page.locator("article.target").all()
    }
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download CSV").click()
    path = download_info.value.path()
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert len(rows) == 1
    row = rows[0]
    assert row["session_id"] == str(session.pk)
    assert row["candidate_name"] == "Casey Candidate"
    assert row["exam_score_percent"] == score
    assert row["state"] == "locked"
    assert row["level:tgt-negative-weights"] == "partial"
    for key, shown in levels.items():
        assert row[f"level:{key}"] == shown.lower(), key

    # the printable report and the cohort view
    page.get_by_role("link", name="Printable report").click()
    expect(page.get_by_text("reproduces these marks exactly")).to_be_visible()
    expect(page.get_by_role("heading", name="Evidence excerpts")).to_be_visible()
    screenshot(page, "report")
    page.goto(f"/marking/assessments/{session.sitting.version_id}/")
    expect(page.get_by_role("heading", name="Interaction fairness")).to_be_visible()
    screenshot(page, "cohort")
    assert axe_violations(page) == []
