"""A practice sitting in a real browser (issue #35): the candidate takes the CS201 exam in text
mode with the offline examiner, lands on the attempt's feedback (each evidence target's label
and the level reached, no rubric text), presses "Practise again" with the keyboard and starts a
second attempt. Nothing of it is marked for the record. Elements are found by role, label and
accessible name; every wait is on page or database state; axe-core checks each new page."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from marking.models import PracticeFeedback, SessionMark
from sessions.models import ExamSession, Sitting
from tests.browser.exam_journey import (
    EXAMINER_TIMEOUT,
    TEXT_MODE,
    Exam,
    answer_until_finished,
    bot_runner,
    examiner_turns,
    go_through_the_journey,
    schedule_exam,
)
from tests.browser.helpers import axe_violations, eventually, screenshot
from tests.factories import example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


@pytest.fixture
def exam() -> Exam:
    """One candidate's first attempt in a practice sitting of CS201, and their invitation."""
    exam = schedule_exam(title="CS201 practice")
    Sitting.objects.filter(pk=exam.session.sitting_id).update(is_practice=True)
    return exam


def accessible(page: Page, name: str) -> None:
    violations = axe_violations(page)
    assert violations == [], f"{name}: {json.dumps(violations, indent=2)}"
    screenshot(page, f"practice-{name}")


def rubric_texts() -> list[str]:
    texts: list[str] = []
    for node in example_document()["nodes"]:
        for target in node.get("evidenceTargets", []):
            texts.append(target["description"])
            for level in target.get("rubricDescriptor", {}).get("levels", {}).values():
                texts.append(level["description"])
    return texts


def test_a_practice_attempt_shows_feedback_and_the_candidate_practises_again(
    page: Page, exam: Exam
) -> None:
    go_through_the_journey(page, exam, shots=False)
    expect(page.get_by_role("note").filter(has_text="Practice, attempt 1")).to_be_visible()
    answer_until_finished(page, exam.session)
    page.get_by_role("link", name="Continue to the completion page").click()

    heading = page.get_by_role("heading", level=1, name=re.compile("Practice feedback"))
    expect(heading).to_contain_text("attempt 1", timeout=EXAMINER_TIMEOUT * 1000)
    table = page.get_by_role("table", name="What was assessed, and the level you reached")
    rows = table.get_by_role("row")
    targets = PracticeFeedback.objects.get(session=exam.session).targets
    expect(rows).to_have_count(len(targets) + 1)  # the header row and one per target
    for target in targets:
        expect(table.get_by_role("rowheader", name=target["label"])).to_be_visible()
    content = page.content()
    for text in rubric_texts():
        assert text not in content
    accessible(page, "feedback")

    page.get_by_role("link", name="Back to my exams").click()
    expect(page.get_by_role("heading", level=1, name="My exams")).to_be_visible()
    expect(page.get_by_text("Practice, attempt 1")).to_be_visible()
    expect(page.get_by_role("button", name="Practise again CS201 practice")).to_be_visible()
    accessible(page, "home")
    page.get_by_role("link", name="See your feedback of CS201 practice").click()
    expect(heading).to_contain_text("attempt 1")

    again = page.get_by_role("button", name="Practise again")
    again.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1, name="Identity and consent")).to_be_visible()
    expect(page.get_by_role("note").filter(has_text="Practice, attempt 2")).to_be_visible()
    accessible(page, "second-attempt-identity")
    second = ExamSession.objects.get(follows=exam.session)
    assert second.attempt == 2 and page.url.endswith(f"/exam/{second.pk}/identity/")

    page.get_by_role(
        "checkbox", name=f"I am {exam.candidate_name} and I am taking this exam myself."
    ).check()
    page.get_by_role("checkbox", name=re.compile("I understand what is recorded")).check()
    page.get_by_role("button", name="Continue to the briefing").click()
    page.get_by_role("button", name="I have read the briefing").click()
    page.get_by_role("radio", name=TEXT_MODE).check()
    page.get_by_role("button", name="Go to the exam room").click()
    start = page.get_by_role("button", name="Start the exam")
    expect(start).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    start.click()
    expect(page.get_by_role("heading", name="Your answer")).to_be_visible(
        timeout=EXAMINER_TIMEOUT * 1000
    )
    assert eventually(lambda: examiner_turns(page), EXAMINER_TIMEOUT), "no second attempt"
    second.refresh_from_db()
    assert second.state == "in_progress"
    assert not SessionMark.objects.filter(session__sitting=exam.session.sitting).exists()
