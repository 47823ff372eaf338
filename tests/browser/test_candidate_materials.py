"""Vivas on the candidate's own work in a real browser (issue #35): the candidate uploads their
report (a small PDF made in the test) in the journey, is told clearly when a file cannot be
used, takes the text exam with the offline examiner, and is asked about a passage of the report;
the marker's page shows that passage with the answer and the evidence tied to it. Elements are
found by role, label and accessible name; every wait is on page or database state; axe-core
checks the upload step and the marker's page."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from ioa.materials import grounded_question, normalise
from marking import services as marking_services
from sessions.models import CandidateMaterial, SessionEvent
from tests.browser.exam_journey import (
    ANSWERS,
    EXAMINER_TIMEOUT,
    TEXT_MODE,
    Exam,
    answer_until_finished,
    bot_runner,
    examiner_turns,
    schedule_exam,
    through_the_briefing,
)
from tests.browser.helpers import axe_violations, screenshot, second_person_page
from tests.factories import PASSWORD
from tests.sessions.material_files import pdf_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OWN_ANSWERS = {
    **ANSWERS,
    "q-own-design": [
        "The choice in my report: I chose Dijkstra's algorithm instead of the alternative I "
        "considered, Bellman-Ford, and the reason is that all edge weights are positive.",
        "The main limitation of my approach is that the planner does not handle closed roads; "
        "I would change it to recompute routes, that is what I would do differently.",
        "That is all I can say about my report.",
    ],
}


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


def accessible(page: Page, name: str) -> None:
    violations = axe_violations(page)
    assert violations == [], f"{name}: {json.dumps(violations, indent=2)}"
    screenshot(page, f"materials-{name}")


def upload_the_report(page: Page, exam: Exam) -> None:
    """Invitation → identity → briefing → the report (a refused file first) → text mode."""
    through_the_briefing(page, exam)

    expect(page.get_by_role("heading", level=1, name="Upload your report")).to_be_visible()
    expect(page.get_by_text("At most 10 MB")).to_be_visible()
    accessible(page, "upload")
    report = page.get_by_label("Your report", exact=True)
    report.set_input_files(
        {"name": "report.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4 no"}
    )
    page.get_by_role("button", name="Upload and continue").click()
    expect(page.get_by_role("alert")).to_contain_text("The PDF file is damaged")
    accessible(page, "upload-refused")
    page.get_by_label("Your report", exact=True).set_input_files(
        {"name": "report.pdf", "mimeType": "application/pdf", "buffer": pdf_bytes()}
    )
    page.get_by_role("button", name="Upload and continue").press("Enter")

    expect(page.get_by_role("heading", level=1, name="How will you answer?")).to_be_visible()
    material = CandidateMaterial.objects.get(session=exam.session)
    assert material.file_type == "pdf" and material.source == "candidate"
    page.get_by_role("radio", name=TEXT_MODE).check()
    page.get_by_role("button", name="Go to the exam room").click()
    start = page.get_by_role("button", name="Start the exam")
    expect(start).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    start.click()


def test_a_candidate_is_examined_on_a_passage_of_their_report(
    page: Page, browser: Browser, live_asgi_server: str
) -> None:
    exam = schedule_exam(package="cs201-own-report", title="CS201 with your report")
    upload_the_report(page, exam)
    answer_until_finished(page, exam.session, OWN_ANSWERS)

    drawn = SessionEvent.objects.get(session=exam.session, type="passage_drawn").payload
    material = CandidateMaterial.objects.get(session=exam.session)
    assert drawn["outcome"] == "drawn" and drawn["text"] in normalise(material.text)
    question = grounded_question(drawn["text"], drawn["cue"], "en")
    assert any(question in turn for turn in examiner_turns(page)), examiner_turns(page)

    marking_services.session_mark(session_id=exam.session.pk)
    marker = exam.session.sitting.version.draft.owner
    with second_person_page(browser, live_asgi_server) as marking:
        marking.goto("/accounts/login/")
        marking.get_by_label("Username").fill(marker.username)
        marking.get_by_label("Password").fill(PASSWORD)
        marking.get_by_role("button", name="Sign in").click()
        marking.wait_for_url(lambda url: "/accounts/login/" not in url)
        marking.goto(f"/marking/sessions/{exam.session.pk}/")
        section = marking.get_by_role("region", name="Questions on the candidate's own work")
        expect(section.locator("blockquote")).to_have_text(drawn["text"])
        expect(section).to_contain_text("tgt-explains-own-choice")
        expect(section).to_contain_text(OWN_ANSWERS["q-own-design"][0])
        accessible(marking, "marker")
