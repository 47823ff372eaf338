"""A proctor's pause and an instruction sent during it, in two real browsers (issue 15).

Seen live: an immediate instruction sent while the exam was paused was shown to the proctor as
delivered "now" but never spoken; after the resume it swallowed the candidate's next turn, the
instruction queue stayed stuck and marking flagged an interruption that never happened; and the
candidate could lift the pause the proctor had set.

Here the candidate (text mode, the offline examiner, the bot inline in the live server or on a
Celery worker) is at the core question when the proctor pauses from the session page. The
candidate is told why they wait and is offered no way to resume; the instruction the proctor
sends meanwhile is reported as waiting for the resume, spoken right after it, once; the
candidate's next answer is theirs (answered by the examiner, stored once), and the log holds
no interruption.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from sessions.models import SessionEvent
from tests.browser.exam_journey import (
    ANSWERS,
    EXAMINER_TIMEOUT,
    Exam,
    answer,
    bot_runner,
    examiner_turns,
    reach_the_core_question,
    schedule_exam,
    wait_for_examiner,
    wait_until_quiet,
)
from tests.browser.helpers import second_person_page
from tests.factories import PASSWORD, ProctorFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INSTRUCTION = "Please keep your camera pointed at your desk."
TIMEOUT_MS = EXAMINER_TIMEOUT * 1000


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


@pytest.fixture
def proctored_exam() -> tuple[Exam, object]:
    """The CS201 exam of one candidate, in a sitting a proctor supervises."""
    exam = schedule_exam()
    proctor = ProctorFactory(display_name="Priya Proctor")
    exam.session.sitting.proctors.add(proctor)
    return exam, proctor


@pytest.fixture
def proctor_page(browser: Browser, live_asgi_server: str) -> Iterator[Page]:
    with second_person_page(browser, live_asgi_server) as page:
        yield page


def proctor_act(
    page: Page, form_name: str, button: str, reason: str, expected: str | re.Pattern[str]
) -> None:
    """Fill the reason of an action form on the session page, press its button, and wait for
    the outcome the page reports."""
    form = page.get_by_role("form", name=form_name, exact=True)
    form.get_by_role("textbox", name=re.compile("^(Reason|What happened)$")).fill(reason)
    form.get_by_role("button", name=button, exact=True).click()
    expect(page.get_by_role("status", name="Action status", exact=True)).to_have_text(
        expected, timeout=TIMEOUT_MS
    )


def _payloads(exam: Exam, type_: str) -> list[dict[str, object]]:
    rows = SessionEvent.objects.filter(session=exam.session, type=type_).order_by("seq")
    return [dict(row.payload) for row in rows]


def open_session_page(page: Page, exam: Exam, proctor: object) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(proctor.username)  # type: ignore[attr-defined]
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    page.goto(f"/proctor/sessions/{exam.session.pk}/")
    expect(page.get_by_role("status", name="Live updates", exact=True)).to_have_text(
        "Live: events appear as they happen."
    )


def test_a_proctor_pause_holds_the_candidate_and_an_instruction_sent_meanwhile_follows_resume(
    page: Page, proctor_page: Page, proctored_exam: tuple[Exam, object]
) -> None:
    exam, proctor = proctored_exam
    candidate = page
    reach_the_core_question(candidate, exam)
    open_session_page(proctor_page, exam, proctor)

    # The proctor pauses: the candidate is told why they wait and cannot resume.
    proctor_act(
        proctor_page, "Pause or resume", "Pause the exam", "Noise in the room.", "Pause: done."
    )
    expect(
        candidate.get_by_text(
            "Your proctor paused the exam. Both clocks have stopped. "
            "Only your proctor can resume it: please wait.",
            exact=True,
        )
    ).to_be_visible(timeout=TIMEOUT_MS)
    expect(candidate.get_by_role("textbox", name="Type your answer")).to_be_disabled()
    expect(candidate.get_by_role("button", name="Resume the exam")).to_have_count(0)

    # An immediate instruction while paused: reported as waiting for the resume, not spoken.
    instruct = proctor_page.get_by_role("form", name="Instruct the examiner", exact=True)
    instruct.get_by_role("textbox", name="Instruction", exact=True).fill(INSTRUCTION)
    instruct.get_by_role("radio", name=re.compile("^Now: spoken at once")).check()
    proctor_act(
        proctor_page,
        "Instruct the examiner",
        "Send the instruction",
        "The camera shows the ceiling.",
        re.compile(
            "^Instruction sent: the exam is paused, so the examiner delivers it right "
            "after the resume\\.$"
        ),
    )
    time.sleep(2)
    assert not any(INSTRUCTION in text for text in examiner_turns(candidate))

    # The proctor resumes: the instruction is spoken right after the welcome back, once.
    proctor_act(proctor_page, "Pause or resume", "Resume the exam", "Quiet again.", "Resume: done.")
    expect(candidate.get_by_role("textbox", name="Type your answer")).to_be_enabled(
        timeout=TIMEOUT_MS
    )
    expect(candidate.get_by_role("list", name="Transcript so far", exact=True)).to_contain_text(
        INSTRUCTION, timeout=TIMEOUT_MS
    )
    wait_until_quiet(candidate)
    turns = examiner_turns(candidate)
    welcome = max(i for i, text in enumerate(turns) if "Welcome back" in text)
    spoken = [i for i, text in enumerate(turns) if INSTRUCTION in text]
    assert len(spoken) == 1 and spoken[0] > welcome, turns

    # The candidate's next answer is theirs: stored once and answered by the examiner.
    before = len(examiner_turns(candidate))
    reply_to = ANSWERS["q-dijkstra"][0]
    answer(candidate, reply_to)
    wait_for_examiner(candidate, before)
    wait_until_quiet(candidate)
    assert not any(INSTRUCTION in text for text in examiner_turns(candidate)[before:])

    finals = [e for e in _payloads(exam, "transcript_final") if e.get("text") == reply_to]
    assert len(finals) == 1, finals
    statuses = [e["status"] for e in _payloads(exam, "proctor_instruction")]
    assert statuses == ["issued", "delivered"], statuses
    paused_by = [
        e.get("reason") for e in _payloads(exam, "exam_state_changed") if e["toState"] == "paused"
    ]
    assert len(paused_by) == 1, paused_by
    assert not [
        e for e in _payloads(exam, "recovery_started") if e.get("recoveryType") == "interruption"
    ]
    refused = [e for e in _payloads(exam, "candidate_command_received") if not e.get("accepted")]
    assert refused == [], refused
