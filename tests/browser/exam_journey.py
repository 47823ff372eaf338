"""The candidate's way through an exam in the browser, shared by the browser tests that need a
candidate: schedule an exam with an invitation link, walk the journey (invitation → identity and
consent → briefing → text mode → the room), answer like a candidate until the completion page.
Elements are found by role, label and accessible name only."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from playwright.sync_api import Locator, Page, expect

from accounts.services import invitation_create
from publishing.services import version_publish
from sessions.models import ExamSession, SessionEvent, Sitting
from tests.browser.helpers import axe_violations, eventually, screenshot
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory, example_document
from tests.support.processes import ROOT, celery_worker

DOCS_SCREENS = ROOT / "docs" / "screens"

EXAMINER_TIMEOUT = 30.0
"""Seconds the offline examiner may take for one turn (it answers in well under one)."""

ANSWERS: dict[str, list[str]] = {
    "warmup": ["I enjoyed the part of the course on graph algorithms the most."],
    "q-dijkstra": [
        "It keeps a tentative distance for every vertex, repeatedly settles the unvisited vertex "
        "whose tentative distance is smallest, and then relaxes each outgoing edge of it.",
        "With a binary heap as the priority queue the running time is O((V+E) log V); with a "
        "plain array instead it becomes O(V^2).",
        "A negative edge could invalidate a distance that was already settled, so for negative "
        "weights I would use Bellman-Ford.",
        "That is everything I know about it.",
    ],
    "scn-delivery-routes": [
        "I would model the depot and every shop as vertices and each road as a weighted edge "
        "whose weight is the travel time.",
        "Travel times are never negative, so a single-source shortest-path algorithm such as "
        "Dijkstra from the depot fits and gives the fastest route to every shop.",
        "That is my whole approach.",
    ],
    "scn-network-latency": [
        "I would model each office as a vertex and each network link as a weighted edge whose "
        "weight is its latency.",
        "Latencies are never negative, so a single-source shortest-path algorithm such as "
        "Dijkstra from headquarters gives the lowest-latency path to every office.",
        "That is my whole approach.",
    ],
    "wrapup": ["No, I have nothing to add. Thank you."],
}


# --- fixtures and helpers ------------------------------------------------------------------------


@contextmanager
def bot_runner(**env: str) -> Iterator[str]:
    """Where the examiner bots run: inline in the live server (the embedded default), or a real
    Celery worker on the bots queue when the settings say ``celery`` (Postgres + Redis). ``env``
    is the bot settings the live server was given: a worker runs the bots, so it needs them too."""
    if settings.VIVA_BOT_RUNNER != "celery":
        yield "inline"
        return
    with celery_worker(queues="bots,marking,default", **env) as name:
        yield name


@dataclass
class Exam:
    session: ExamSession
    invitation_path: str
    candidate_name: str = "Ada Lovelace"


def schedule_exam(
    *,
    author: object | None = None,
    candidate_name: str = "Ada Lovelace",
    package: str = "cs201-graph-algorithms",
    title: str = "CS201 oral examinations",
) -> Exam:
    """A published exam of ``author`` (a new author by default) from the example ``package``,
    one candidate's session in a sitting of it (``title``), and the candidate's invitation
    link."""
    author = author or AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=example_document(package))
    version = version_publish(draft=draft, user=author).version
    sitting = Sitting.objects.create(version=version, title=title, created_by=author)
    candidate = CandidateFactory(display_name=candidate_name)
    session = ExamSession.objects.create(sitting=sitting, candidate=candidate)
    invite = invitation_create(
        candidate=candidate, created_by=author, next_path=f"/exam/{session.pk}/"
    )
    return Exam(session=session, invitation_path=invite.path, candidate_name=candidate_name)


def check_step(page: Page, name: str) -> None:
    """axe-core finds no serious or critical violation; a screenshot of the step is kept."""
    violations = axe_violations(page)
    assert violations == [], f"{name}: {json.dumps(violations, indent=2)}"
    path = screenshot(page, name)
    if os.environ.get("VIVA_SCREENS_DOCS") == "1":
        keep_for_review(path, DOCS_SCREENS / f"exam-room-{name}.png")


def keep_for_review(source: Path, target: Path) -> None:
    """Copy a screenshot to docs/screens/, as a small palette PNG when Pillow is there."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        from PIL import Image
    except ImportError:
        shutil.copyfile(source, target)
        return
    with Image.open(source) as image:
        small = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        small.save(target, optimize=True)


def transcript(page: Page) -> Locator:
    return page.get_by_role("list", name="Transcript so far").get_by_role("listitem")


def examiner_turns(page: Page) -> list[str]:
    """The examiner's finished turns (one still being spoken shows "…")."""
    texts = transcript(page).all_inner_texts()
    return [t for t in texts if not t.startswith("You") and not t.endswith("…")]


def candidate_turns(page: Page) -> list[str]:
    return [t for t in transcript(page).all_inner_texts() if t.startswith("You")]


def current_node(session: ExamSession) -> str | None:
    row = SessionEvent.objects.filter(session=session, type="node_entered").order_by("-seq").first()
    return row.payload["nodeId"] if row else None


def finished(page: Page) -> bool:
    return page.get_by_role("link", name="Continue to the completion page").is_visible()


TEXT_MODE = "Text: type your answers"
VOICE_MODE = "Voice: speak your answers"


def choose_answer_mode(page: Page, exam: Exam, mode: str) -> None:
    """Invitation link → identity and consent → briefing → ``mode`` (:data:`TEXT_MODE` or
    :data:`VOICE_MODE`) chosen on the answer-mode page, without screenshots or checks on the way
    (:func:`go_through_the_journey` has them)."""
    page.goto(exam.invitation_path)
    page.get_by_role("button", name="Continue to my exam").click()
    page.get_by_role("checkbox", name=re.compile(f"I am {exam.candidate_name}")).check()
    page.get_by_role("checkbox", name=re.compile("I understand what is recorded")).check()
    page.get_by_role("button", name="Continue to the briefing").click()
    page.get_by_role("button", name="I have read the briefing").click()
    page.get_by_role("radio", name=mode).check()


def start_voice_exam(page: Page, exam: Exam) -> None:
    """Invitation → consent → briefing → voice mode → the room, started (the microphone check
    ticked by hand)."""
    choose_answer_mode(page, exam, VOICE_MODE)
    # The check's own microphone stream would play the file from its start (each capture does),
    # and a fake microphone's file may open with silence: the candidate ticks the box by hand,
    # as they may.
    page.get_by_role("checkbox", name=re.compile("My microphone moved")).check()
    page.get_by_role("button", name="Go to the exam room").click()
    expect(page.get_by_text("Audio connected.")).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    start = page.get_by_role("button", name="Start the exam")
    expect(start).to_be_enabled(timeout=EXAMINER_TIMEOUT * 1000)
    start.click()


def through_the_briefing(page: Page, exam: Exam) -> None:
    """Invitation link → identity and consent → briefing read, without the checks and
    screenshots of :func:`go_through_the_journey` (tests whose subject comes after it)."""
    page.goto(exam.invitation_path)
    page.get_by_role("button", name="Continue to my exam").click()
    page.get_by_role(
        "checkbox", name=f"I am {exam.candidate_name} and I am taking this exam myself."
    ).check()
    page.get_by_role("checkbox", name=re.compile("I understand what is recorded")).check()
    page.get_by_role("button", name="Continue to the briefing").click()
    page.get_by_role("button", name="I have read the briefing").click()


def go_through_the_journey(page: Page, exam: Exam, *, shots: bool = True) -> None:
    """Invitation link → identity and consent → briefing → text mode → the room, started."""
    step = check_step if shots else (lambda page, name: None)
    page.goto(exam.invitation_path)
    expect(page.get_by_role("heading", name="Your exam invitation")).to_be_visible()
    step(page, "01-invitation")
    page.get_by_role("button", name="Continue to my exam").click()

    expect(page.get_by_role("heading", level=1, name="Identity and consent")).to_be_visible()
    expect(page.get_by_role("heading", name="What is recorded")).to_be_visible()
    step(page, "02-identity-consent")
    page.get_by_role(
        "checkbox", name=f"I am {exam.candidate_name} and I am taking this exam myself."
    ).check()
    page.get_by_role("checkbox", name=re.compile("I understand what is recorded")).check()
    page.get_by_role("button", name="Continue to the briefing").click()

    expect(page.get_by_role("heading", level=1, name="Briefing")).to_be_visible()
    expect(page.get_by_text("The exam has 4 parts")).to_be_visible()
    step(page, "03-briefing")
    page.get_by_role("button", name="I have read the briefing").click()

    expect(page.get_by_role("heading", level=1, name="How will you answer?")).to_be_visible()
    page.get_by_role("radio", name="Text: type your answers").check()
    step(page, "04-answer-mode")
    page.get_by_role("button", name="Go to the exam room").click()

    expect(page.get_by_role("heading", level=1, name="Exam room")).to_be_visible()
    expect(page.get_by_role("heading", name="Waiting for the examiner")).to_be_visible()
    start = page.get_by_role("button", name="Start the exam")
    expect(start).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    step(page, "05-waiting-for-examiner")
    start.click()
    expect(page.get_by_role("heading", name="Your answer")).to_be_visible(
        timeout=EXAMINER_TIMEOUT * 1000
    )


def wait_for_examiner(page: Page, before: int) -> None:
    """Until the examiner has said something new (or the exam is over)."""
    assert eventually(
        lambda: len(examiner_turns(page)) > before or finished(page), EXAMINER_TIMEOUT
    ), "the examiner did not answer"
    # Let a multi-utterance turn (bridge + next opening) arrive in full.
    time.sleep(0.3)


def wait_until_quiet(page: Page, quiet: float = 1.5) -> None:
    """Until the transcript has not changed for ``quiet`` seconds (a turn the examiner is still
    sending, such as a bridge followed by a follow-up, has arrived in full)."""
    last = transcript(page).all_inner_texts()
    since = time.monotonic()
    deadline = since + EXAMINER_TIMEOUT
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = transcript(page).all_inner_texts()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
    raise AssertionError("the transcript never settled")


def reach_the_core_question(page: Page, exam: Exam) -> None:
    """Walk the journey (text mode), answer the warm-up, and wait at the core question
    (``q-dijkstra``) until the examiner has finished asking it."""
    go_through_the_journey(page, exam, shots=False)
    wait_for_examiner(page, 0)
    answer(page, ANSWERS["warmup"][0])
    assert eventually(
        lambda: SessionEvent.objects.filter(
            session=exam.session, type="node_entered", payload__nodeId="q-dijkstra"
        ).exists(),
        EXAMINER_TIMEOUT,
    ), "the exam never reached the core question"
    wait_until_quiet(page)


def answer_until_finished(
    page: Page, session: ExamSession, answers: Mapping[str, list[str]] = ANSWERS
) -> None:
    """Answer each question as a candidate would until the exam finishes (``answers`` by node,
    each used in turn), waiting after each answer for the examiner's next words (or the end)
    and for the transcript to settle; no fixed pause."""
    used: dict[str, int] = {}
    assert eventually(lambda: examiner_turns(page), EXAMINER_TIMEOUT), "the examiner is silent"
    wait_until_quiet(page)
    for _ in range(30):
        if finished(page):
            return
        node = current_node(session) or "warmup"
        options = answers.get(node, ["That is my answer."])
        text = options[min(used.get(node, 0), len(options) - 1)]
        used[node] = used.get(node, 0) + 1
        before = len(examiner_turns(page))
        answer(page, text)
        assert eventually(
            lambda before=before: len(examiner_turns(page)) > before or finished(page),
            EXAMINER_TIMEOUT,
        ), "the examiner did not answer"
        if not finished(page):
            wait_until_quiet(page)
    raise AssertionError("the exam did not finish")


def answer(page: Page, text: str) -> None:
    page.get_by_role("textbox", name="Type your answer").fill(text)
    page.get_by_role("button", name="Send answer").click()


def take_the_exam(
    page: Page, exam: Exam, *, after_each: Callable[[int], None] | None = None
) -> list[str]:
    """Answer every question until the exam finishes; returns the answers sent."""
    sent: list[str] = []
    used: dict[str, int] = {}
    wait_for_examiner(page, 0)
    for turn in range(30):
        if finished(page):
            return sent
        node = current_node(exam.session) or "warmup"
        options = ANSWERS.get(node, ["That is my answer."])
        text = options[min(used.get(node, 0), len(options) - 1)]
        used[node] = used.get(node, 0) + 1
        before = len(examiner_turns(page))
        answer(page, text)
        sent.append(text)
        if after_each is not None:
            after_each(turn)
        wait_for_examiner(page, before)
    raise AssertionError(f"the exam did not finish after {len(sent)} answers")
