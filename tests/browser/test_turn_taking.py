"""Live turn-taking in Chromium (issue 15), text mode, on the embedded default: a real daphne
server with the examiner bot inline, the offline examiner, the candidate's real browser.

* A candidate typing a long answer is not "silent": no "Take your time" while they type, the
  silence clock counts from their last keystroke, the half-typed answer survives a reload.
* A candidate who leaves: after the grace period the exam pauses itself (nothing is said to the
  empty room, no part skipped); back within the window, it resumes at the same part and the
  question is asked again; never back, the exam ends ``aborted`` (``candidate_absent``) after the
  absence limit, with no closing spoken and no normal completion.

The server of this module runs with short windows (grace 3 s, absence limit 30 s) so the
scenarios take seconds; the package gives the core question a 15-s text-mode silence window.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from accounts.services import invitation_create
from publishing.services import version_publish
from sessions.models import ExamSession, SessionEvent, Sitting
from tests.browser.exam_journey import (
    EXAMINER_TIMEOUT,
    Exam,
    bot_runner,
    examiner_turns,
    reach_the_core_question,
)
from tests.browser.helpers import eventually
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory, example_document
from tests.support.processes import asgi_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT_SILENCE_SEC = 15
GRACE_SEC = 3
ABSENCE_LIMIT_SEC = 30
PROMPT = "Take your time. Whenever you are ready, please go ahead."


WINDOWS = {
    "VIVA_CONNECTION_GRACE_SECONDS": str(GRACE_SEC),
    "VIVA_ABSENCE_LIMIT_SECONDS": str(ABSENCE_LIMIT_SEC),
}


@pytest.fixture(scope="module")
def live_asgi_server(django_db_setup: None) -> Iterator[str]:
    """This module's own server: short connection windows (see the module docstring)."""
    with asgi_server(DJANGO_ALLOW_ASYNC_UNSAFE="", **WINDOWS) as address:
        yield f"http://{address}"


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner(**WINDOWS) as name:  # the bots' controller applies the windows
        yield name


@pytest.fixture
def exam() -> Exam:
    """The CS201 exam, its core question with a 15-s text-mode silence window."""
    document = example_document()
    for node in document["nodes"]:
        for handler in node.get("recoveryHandlers", []):
            if handler["scenario"] == "silence":
                handler["textAfterSec"] = TEXT_SILENCE_SEC
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=document)
    version = version_publish(draft=draft, user=author).version
    sitting = Sitting.objects.create(version=version, title="CS201 orals", created_by=author)
    candidate = CandidateFactory(display_name="Ada Lovelace")
    session = ExamSession.objects.create(sitting=sitting, candidate=candidate)
    invite = invitation_create(
        candidate=candidate, created_by=author, next_path=f"/exam/{session.pk}/"
    )
    return Exam(session=session, invitation_path=invite.path)


def _events(exam: Exam, type_: str) -> list[dict[str, object]]:
    rows = SessionEvent.objects.filter(session=exam.session, type=type_).order_by("seq")
    return [dict(row.payload) for row in rows]


def _prompts(page: Page) -> int:
    return sum(1 for text in examiner_turns(page) if PROMPT in text)


def test_typing_a_long_answer_is_not_silence_and_the_draft_survives_a_reload(
    page: Page, exam: Exam
) -> None:
    reach_the_core_question(page, exam)
    box = page.get_by_role("textbox", name="Type your answer")
    words = [
        *("Dijkstra keeps a priority queue of tentative distances and always settles the",),
        *("closest unsettled vertex, then relaxes its outgoing edges",),
    ]
    # 32 s of steady typing: more than twice the 15-s silence window.
    started = time.monotonic()
    index = 0
    while time.monotonic() - started < 32:
        box.press_sequentially(words[index % len(words)] + " ", delay=60)
        index += 1
        time.sleep(0.7)
    timeline = [
        (row.type, row.payload.get("state") or row.payload.get("recoveryType"), row.timestamp)
        for row in SessionEvent.objects.filter(session=exam.session).order_by("seq")
        if row.type in ("candidate_activity", "recovery_started", "examiner_utterance_final")
    ]
    assert _prompts(page) == 0, f"the examiner prompted a candidate who was typing: {timeline}"
    composing = _events(exam, "candidate_activity")
    assert composing and composing[0]["activity"] == "composing"
    assert composing[0]["state"] == "started"
    assert not _events(exam, "recovery_started")
    draft = box.input_value()
    assert len(draft) > 40

    # A reload keeps the half-typed answer in the box.
    page.reload()
    box = page.get_by_role("textbox", name="Type your answer")
    expect(box).to_have_value(draft, timeout=EXAMINER_TIMEOUT * 1000)
    expect(page.get_by_text("Your unsent answer was written for the previous part")).to_be_hidden()

    # The candidate stops typing: the silence clock counts from their last keystroke.
    last_key = time.monotonic()
    assert eventually(lambda: _prompts(page) > 0, TEXT_SILENCE_SEC + 25), "no silence prompt"
    waited = time.monotonic() - last_key
    assert waited >= TEXT_SILENCE_SEC - 1, f"prompted {waited:.1f} s after the last keystroke"
    rows = SessionEvent.objects.filter(
        session=exam.session, type__in=("candidate_activity", "candidate_connection_changed")
    ).order_by("seq")
    timeline = [(row.type, row.payload.get("state") or row.payload.get("status")) for row in rows]
    assert timeline[-1] != ("candidate_activity", "started"), timeline
    # The exam is still at the core question: nothing was skipped.
    assert _events(exam, "node_entered")[-1]["nodeId"] == "q-dijkstra"
    assert box.input_value() == draft


def test_leaving_pauses_the_exam_and_coming_back_resumes_the_same_question(
    page: Page, exam: Exam
) -> None:
    reach_the_core_question(page, exam)
    room = page.url
    spoken_before = len(_events(exam, "examiner_utterance_final"))
    page.goto("about:blank")  # the candidate closes the exam room

    def paused() -> bool:
        return any(
            e.get("reason") == "candidate_disconnected" for e in _events(exam, "exam_state_changed")
        )

    assert eventually(paused, GRACE_SEC + 15), "the exam did not pause itself"
    time.sleep(2)
    # Nothing was said into the empty room, no part was skipped.
    finals = _events(exam, "examiner_utterance_final")
    assert len(finals) == spoken_before
    assert _events(exam, "node_entered")[-1]["nodeId"] == "q-dijkstra"
    assert not [e for e in _events(exam, "recovery_started") if e["recoveryType"] == "silence"]

    page.goto(room)
    assert eventually(
        lambda: any(
            e.get("reason") == "candidate_returned" for e in _events(exam, "exam_state_changed")
        ),
        EXAMINER_TIMEOUT,
    ), "the exam did not resume when the candidate came back"
    assert _events(exam, "node_entered")[-1]["nodeId"] == "q-dijkstra"
    expect(page.get_by_role("textbox", name="Type your answer")).to_be_enabled(
        timeout=EXAMINER_TIMEOUT * 1000
    )
    # "Welcome back", then the question again.
    assert eventually(
        lambda: any("Dijkstra" in t for t in examiner_turns(page)[-2:]), EXAMINER_TIMEOUT
    )
    connection = [e["status"] for e in _events(exam, "candidate_connection_changed")]
    assert connection[-2:] == ["disconnected", "connected"]


def test_a_candidate_who_never_comes_back_is_ended_aborted_after_the_absence_limit(
    page: Page, exam: Exam
) -> None:
    reach_the_core_question(page, exam)
    spoken_before = len(_events(exam, "examiner_utterance_final"))
    left = time.monotonic()
    page.goto("about:blank")  # the candidate closes the exam room and never comes back

    def ended() -> bool:
        return bool(_events(exam, "exam_completed"))

    assert eventually(ended, ABSENCE_LIMIT_SEC + 30), "the exam was never ended"
    assert time.monotonic() - left >= ABSENCE_LIMIT_SEC - 1
    completed = _events(exam, "exam_completed")[-1]
    assert completed["reason"] == "candidate_absent"
    states = [e["toState"] for e in _events(exam, "exam_state_changed")]
    assert states[-2:] == ["paused", "aborted"]
    # Nothing was said into the empty room: no closing, no prompt.
    assert len(_events(exam, "examiner_utterance_final")) == spoken_before
    exam.session.refresh_from_db()
    assert exam.session.state == "aborted"
