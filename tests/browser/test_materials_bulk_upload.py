"""Staff's bulk upload of candidates' reports in a real browser (issue #35): a proctor of a
sitting whose exam asks about each candidate's report goes from the proctoring page to the
sitting's materials and its Upload button by Tab and Enter, uploads one ZIP (a folder of
reports named by candidate: a Word document made with python-docx, named by username; a
Markdown file, named by email; a PDF named for nobody in the sitting; and the metadata macOS
Finder adds, ``__MACOSX/`` and ``.DS_Store``), and reads, line by line, which files were
stored for whom and which was refused and why, the metadata only counted in one sentence.
Each stored report is then the material of its candidate's session (the database, the staff
page and the candidate's own report step), and nothing was stored for the unknown name.
axe-core finds no violation of any impact before or after the upload. Elements are found by
role, label and accessible name."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from accounts.models import User
from sessions.models import CandidateMaterial, ExamSession
from tests.browser.exam_journey import Exam, schedule_exam, through_the_briefing
from tests.browser.helpers import SignIn, axe_violations, screenshot, second_person_page
from tests.factories import CandidateFactory, ProctorFactory
from tests.sessions.material_files import REPORT_LINES, docx_bytes, pdf_bytes, zip_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")
TITLE = "CS201 with your report"
MARKDOWN_REPORT = (
    "# Timetable solver\n\n"
    "We chose constraint propagation instead of plain backtracking because it prunes most "
    "clashes early.\n\n"
    "Our results show a full week is solved in under two seconds.\n"
)
NOT_IN_THE_SITTING = "Not stored. No candidate of this sitting has this name."


def accessible(page: Page, name: str) -> None:
    violations = axe_violations(page, impacts=ALL_IMPACTS)
    assert violations == [], f"{name}: {json.dumps(violations, indent=2)}"
    screenshot(page, name)


def tab_to(page: Page, target: Locator, limit: int = 40) -> None:
    """Press Tab until ``target`` has focus (keyboard-only navigation)."""
    for _ in range(limit):
        if target.evaluate("(el) => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{target} is not reachable with Tab")


def sitting_of_two(exam: Exam) -> ExamSession:
    """Ada (the exam's candidate, username alovelace) and Grace (ghopper) in one sitting, which
    a new proctor proctors; Grace's session."""
    ada = exam.session.candidate
    ada.username, ada.email = "alovelace", "ada.lovelace@example.test"
    ada.save(update_fields=["username", "email"])
    grace = CandidateFactory(
        username="ghopper", email="grace.hopper@example.test", display_name="Grace Hopper"
    )
    return ExamSession.objects.create(sitting=exam.session.sitting, candidate=grace)


def open_the_materials_page(page: Page) -> None:
    """Proctoring → the sitting → its candidates' materials, by Tab and Enter."""
    page.goto("/proctor/")
    tab_to(page, page.get_by_role("link", name=TITLE, exact=True))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1, name=TITLE)).to_be_visible()
    tab_to(page, page.get_by_role("link", name="Candidates' materials"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1, name="Candidates' materials")).to_be_visible()


def upload_with_the_keyboard(page: Page, archive: bytes) -> None:
    """Tab to the labelled file field, give it the ZIP, Tab to Upload, Enter. (Chromium opens
    its own file dialog on Space; waiting for that dialog's event missed 1 run in 7 on a busy
    machine, and the dialog is the browser's, so the file is set on the focused field.)"""
    field = page.get_by_label("Upload in bulk: a ZIP file")
    tab_to(page, field)
    field.set_input_files({"name": "reports.zip", "mimeType": "application/zip", "buffer": archive})
    expect(field).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Upload", exact=True)).to_be_focused()
    page.keyboard.press("Enter")


def assert_stored(exam: Exam, grace_session: ExamSession, uploader: User) -> None:
    """Ada's Word report and Grace's Markdown are their sessions' materials, uploaded by
    ``uploader`` in bulk; nothing else was stored."""
    ada = CandidateMaterial.objects.get(session=exam.session)
    assert (ada.file_type, ada.source, ada.filename) == ("docx", "staff_bulk", "alovelace.docx")
    assert REPORT_LINES[1] in ada.text and ada.uploaded_by == uploader
    grace = CandidateMaterial.objects.get(session=grace_session)
    assert (grace.file_type, grace.source) == ("text", "staff_bulk")
    assert "constraint propagation" in grace.text and "Dijkstra" not in grace.text
    assert CandidateMaterial.objects.count() == 2


def their_report_is_on_their_upload_step(candidate: Page, exam: Exam) -> None:
    """Ada's journey goes from the briefing straight to the answer mode (her report is there);
    her upload step, opened at its address, names the file staff uploaded for her."""
    through_the_briefing(candidate, exam)
    expect(candidate.get_by_role("heading", level=1, name="How will you answer?")).to_be_visible()
    candidate.goto(f"/exam/{exam.session.pk}/material/")
    expect(candidate.get_by_role("status")).to_contain_text("Uploaded: alovelace.docx")


def test_a_proctor_uploads_a_sittings_reports_in_one_zip(
    page: Page, browser: Browser, live_asgi_server: str, sign_in: SignIn
) -> None:
    exam = schedule_exam(package="cs201-own-report", title=TITLE)
    grace_session = sitting_of_two(exam)
    proctor = ProctorFactory()
    exam.session.sitting.proctors.add(proctor)
    archive = zip_bytes(
        {
            "reports/alovelace.docx": docx_bytes(),
            "reports/grace.hopper@example.test.md": MARKDOWN_REPORT.encode(),
            "reports/aturing.pdf": pdf_bytes(),
            "reports/.DS_Store": b"\x00\x00\x00\x01Bud1",
            "__MACOSX/reports/._alovelace.docx": b"\x00\x05\x16\x07",
        }
    )

    sign_in(proctor)
    open_the_materials_page(page)
    stored = page.get_by_role("table", name="Uploaded materials")
    expect(stored.get_by_role("row", name="alovelace")).to_contain_text("none yet")
    accessible(page, "before")
    upload_with_the_keyboard(page, archive)

    lines = page.get_by_role("table", name="Bulk upload").get_by_role("row")
    expect(lines).to_have_count(4)  # the header and one line per candidate's file
    expect(page.get_by_text("Skipped 2 system files (macOS/Windows metadata).")).to_be_visible()
    for number, cells in enumerate(
        (
            ["reports/alovelace.docx", "alovelace", "Stored."],
            ["reports/grace.hopper@example.test.md", "ghopper", "Stored."],
            ["reports/aturing.pdf", "aturing", NOT_IN_THE_SITTING],
        ),
        start=1,
    ):
        expect(lines.nth(number).get_by_role("cell")).to_have_text(cells)
    ada_row = stored.get_by_role("row", name="alovelace")
    expect(ada_row).to_contain_text("alovelace.docx (")
    expect(ada_row).to_contain_text("staff (bulk upload)")
    expect(stored.get_by_role("row", name="ghopper")).to_contain_text(
        "grace.hopper@example.test.md"
    )
    accessible(page, "after")

    assert_stored(exam, grace_session, proctor)
    with second_person_page(browser, live_asgi_server) as candidate:
        their_report_is_on_their_upload_step(candidate, exam)
