"""The proctor dashboard in a real browser, next to a real exam: one browser context is the
proctor, another the candidate (text mode, the offline examiner; the bot runs inline in the live
daphne server, or on a real Celery worker when the settings say so).

The proctor schedules a sitting, adds the candidate and sends the invitation; the candidate
follows the link into the exam while the proctor's live overview shows the session appear and
progress. From the session view the proctor sends an immediate instruction (the candidate sees
it spoken in the captions), extends the time, pauses and resumes; the session log then holds
each action with the proctor as the acting party and the reason.

Elements are found by role and accessible name only. axe-core runs on every dashboard page
(no serious or critical violation) and screenshots of each step go to test-artifacts/screens/.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import Browser, Page, expect

from proctoring.actions import proctor_id
from publishing.services import version_publish
from sessions.models import ExamSession, ProctorActionRequest, SessionEvent
from tests.browser.helpers import (
    artifact_name,
    axe_violations,
    remember_artifact_name,
    screenshot,
)
from tests.factories import AuthorFactory, DraftPackageFactory, ProctorFactory, example_document
from tests.support.processes import celery_worker

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXAMINER_TIMEOUT = 30_000
"""Milliseconds the examiner (offline, in the bot) may take for one turn."""
INSTRUCTION = "Please take your time and speak in full sentences."


@pytest.fixture(scope="module", autouse=True)
def bot_runner(live_asgi_server: str) -> Iterator[str]:
    """Bots run inline in the live server, or on a real Celery worker when configured so."""
    if settings.VIVA_BOT_RUNNER != "celery":
        yield "inline"
        return
    with celery_worker(queues="bots,marking,default") as name:
        yield name


@pytest.fixture
def candidate_page(browser: Browser, live_asgi_server: str) -> Iterator[Page]:
    """The candidate's own browser context; fails the test on a CSP violation or a page error."""
    context = browser.new_context(
        base_url=live_asgi_server, viewport={"width": 1280, "height": 900}, locale="en-GB"
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"uncaught exception: {error}"))
    page.on(
        "console",
        lambda message: (
            problems.append(message.text)
            if message.type == "error" and "Content Security Policy" in message.text
            else None
        ),
    )
    try:
        yield page
    finally:
        context.close()
    assert problems == [], problems


def check(page: Page, name: str) -> None:
    """No serious or critical axe violation; a screenshot of the step."""
    violations = axe_violations(page)
    assert violations == [], f"{name}: {json.dumps(violations, indent=2)}"
    screenshot(page, name)


def overview_row(page: Page, name: str) -> Any:
    return page.get_by_role("table", name=re.compile("Candidates of")).get_by_role(
        "row", name=re.compile(name)
    )


def form(page: Page, name: str) -> Any:
    return page.get_by_role("form", name=name, exact=True)


def act(page: Page, form_name: str, button: str, reason: str, expected: str) -> None:
    """Fill the reason of an action form, press its button, wait for the outcome."""
    action = form(page, form_name)
    action.get_by_role("textbox", name=re.compile("^(Reason|What happened)$")).fill(reason)
    action.get_by_role("button", name=button, exact=True).click()
    expect(page.get_by_role("status", name="Action status", exact=True)).to_have_text(
        expected, timeout=EXAMINER_TIMEOUT
    )


def test_a_proctor_watches_and_steers_a_live_exam(
    page: Page, candidate_page: Page, sign_in: Any, request: pytest.FixtureRequest
) -> None:
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=example_document())
    version = version_publish(draft=draft, user=author).version
    proctor = ProctorFactory(display_name="Priya Proctor")

    # --- the proctor schedules a sitting --------------------------------------------------------
    sign_in(proctor)
    page.goto("/proctor/")
    expect(page.get_by_role("heading", level=1, name="Proctoring")).to_be_visible()
    check(page, "01-proctor-home")
    page.get_by_role("combobox", name="Published assessment", exact=True).select_option(
        label=f"{version.title} (version {version.number})"
    )
    page.get_by_role("textbox", name="Title of the sitting", exact=True).fill(
        "CS201 morning sitting"
    )
    page.get_by_role("button", name="Schedule the sitting", exact=True).click()
    expect(page.get_by_role("heading", level=1, name=re.compile("^Candidates:"))).to_be_visible()

    # The live overview, open in a second tab before anyone is on the roster.
    overview = page.context.new_page()
    remember_artifact_name(overview, artifact_name(request.node))
    overview.goto(page.url.replace("candidates/", ""))
    expect(overview.get_by_role("status", name="Live updates", exact=True)).to_have_text(
        re.compile("^Live: 0 candidates")
    )
    check(overview, "02-overview-empty")

    # --- the candidate is added and invited -------------------------------------------------------
    page.get_by_role("textbox", name="Email address", exact=True).fill("ada@example.test")
    page.get_by_role("textbox", name="Name", exact=True).fill("Ada Lovelace")
    page.get_by_role("checkbox", name="Text mode (types the answers)", exact=True).check()
    page.get_by_role("button", name="Add the candidate", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("Ada Lovelace added to the sitting.")
    # The session appears on the open overview without a reload.
    row = overview_row(overview, "Ada Lovelace")
    expect(row).to_contain_text("Not invited")
    page.get_by_role("button", name="Send invitation links", exact=True).click()
    link = page.get_by_role("textbox", name="Invitation link for Ada Lovelace", exact=True).first
    expect(link).to_be_visible()
    check(page, "03-roster-invited")
    invitation_path = "/" + link.input_value().split("://", 1)[1].split("/", 1)[1]
    expect(row).to_contain_text("Invited")
    session = ExamSession.objects.get(candidate__username="ada@example.test")

    # --- the candidate goes into the exam; the overview follows -----------------------------------
    candidate = candidate_page
    candidate.goto(invitation_path)
    candidate.get_by_role("button", name="Continue to my exam", exact=True).click()
    candidate.get_by_role(
        "checkbox", name="I am Ada Lovelace and I am taking this exam myself.", exact=True
    ).check()
    candidate.get_by_role("checkbox", name=re.compile("I understand what is recorded")).check()
    candidate.get_by_role("button", name="Continue to the briefing", exact=True).click()
    candidate.get_by_role("button", name="I have read the briefing", exact=True).click()
    candidate.get_by_role("radio", name="Text: type your answers", exact=True).check()
    candidate.get_by_role("button", name="Go to the exam room", exact=True).click()
    expect(row).to_contain_text("Waiting", timeout=EXAMINER_TIMEOUT)
    start = candidate.get_by_role("button", name="Start the exam", exact=True)
    expect(start).to_be_visible(timeout=EXAMINER_TIMEOUT)
    start.click()
    expect(candidate.get_by_role("heading", name="Your answer", exact=True)).to_be_visible(
        timeout=EXAMINER_TIMEOUT
    )
    expect(row).to_contain_text("In progress", timeout=EXAMINER_TIMEOUT)
    expect(row).to_contain_text("warmup")
    candidate.get_by_role("textbox", name="Type your answer", exact=True).fill(
        "I enjoyed the part of the course on graph algorithms the most."
    )
    candidate.get_by_role("button", name="Send answer", exact=True).click()
    expect(row).to_contain_text("q-dijkstra", timeout=EXAMINER_TIMEOUT)
    check(overview, "04-overview-in-progress")

    # --- the session view -------------------------------------------------------------------------
    overview.get_by_role("link", name="Ada Lovelace", exact=True).click()
    steer = overview
    expect(steer.get_by_role("heading", level=1, name="Session of Ada Lovelace")).to_be_visible()
    expect(steer.get_by_role("status", name="Live updates", exact=True)).to_have_text(
        "Live: events appear as they happen."
    )
    transcript = steer.get_by_role("list", name="Live transcript", exact=True)
    expect(transcript).to_contain_text("graph algorithms the most")
    expect(steer.get_by_role("list", name="Event timeline", exact=True)).to_contain_text(
        "node_entered"
    )
    check(steer, "05-session-view")

    # An immediate instruction: spoken now, in the candidate's captions.
    instruct = form(steer, "Instruct the examiner")
    instruct.get_by_role("textbox", name="Instruction", exact=True).fill(INSTRUCTION)
    instruct.get_by_role("radio", name=re.compile("^Now: spoken at once")).check()
    act(
        steer,
        "Instruct the examiner",
        "Send the instruction",
        "The candidate is answering in fragments.",
        "Instruction sent: the examiner delivers it now.",
    )
    expect(candidate.get_by_role("list", name="Transcript so far", exact=True)).to_contain_text(
        INSTRUCTION, timeout=EXAMINER_TIMEOUT
    )
    expect(transcript).to_contain_text(INSTRUCTION)

    # More time for the whole exam.
    extend = form(steer, "Extend time")
    extend.get_by_role("spinbutton", name="Minutes to add", exact=True).fill("3")
    extend.get_by_role("radio", name="The whole exam", exact=True).check()
    act(
        steer,
        "Extend time",
        "Extend time",
        "The fire alarm interrupted the exam.",
        "Added 180 seconds to the exam.",
    )

    # Pause, then resume.
    act(steer, "Pause or resume", "Pause the exam", "A short break was agreed.", "Pause: done.")
    answer_box = candidate.get_by_role("textbox", name="Type your answer", exact=True)
    expect(answer_box).to_be_disabled(timeout=EXAMINER_TIMEOUT)
    said = candidate.get_by_role("list", name="Transcript so far", exact=True)
    expect(said).to_contain_text("Your proctor has paused the examination.")
    expect(steer.get_by_role("definition").filter(has_text="Paused")).to_be_visible()
    check(steer, "06-session-paused")
    act(steer, "Pause or resume", "Resume the exam", "The break is over.", "Resume: done.")
    expect(answer_box).to_be_enabled(timeout=EXAMINER_TIMEOUT)
    expect(said).to_contain_text("Welcome back. Let's continue.")

    # The overview saw it all; axe once more on the live page.
    steer.go_back()
    row = overview_row(steer, "Ada Lovelace")
    expect(row).to_contain_text("In progress")
    check(steer, "07-overview-after-actions")

    # --- the session log records each action with the proctor and the reason --------------------
    me = proctor_id(proctor)
    actions = [
        (e.payload["action"], e.payload["actor"], e.payload["reason"], e.correlation_id)
        for e in SessionEvent.objects.filter(session=session, type="proctor_action").order_by("seq")
    ]
    requests = {
        r.action: str(r.pk)
        for r in ProctorActionRequest.objects.filter(session=session, status="applied")
    }
    assert actions == [
        ("extend_time", me, "The fire alarm interrupted the exam.", requests["extend_time"]),
        ("pause", me, "A short break was agreed.", requests["pause"]),
        ("resume", me, "The break is over.", requests["resume"]),
    ]
    extension = SessionEvent.objects.get(
        session=session, type="proctor_action", payload__action="extend_time"
    )
    assert (extension.payload["seconds"], extension.payload["scope"]) == (180, "exam")
    issued = SessionEvent.objects.get(
        session=session, type="proctor_instruction", payload__status="issued"
    )
    assert issued.payload["proctorId"] == me
    assert issued.payload["reason"] == "The candidate is answering in fragments."
    assert issued.payload["mode"] == "immediate" and issued.payload["text"] == INSTRUCTION
    assert issued.correlation_id == requests["instruct"]
    assert SessionEvent.objects.filter(
        session=session, type="proctor_instruction", payload__status="delivered"
    ).exists()
    spoken = SessionEvent.objects.filter(
        session=session, type="examiner_utterance_final", payload__text=INSTRUCTION
    )
    assert spoken.exists()
