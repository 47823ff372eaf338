"""An author previews a draft in the real exam room (``sessions.previews``, issue #20): from the
studio's preview page, "Try in the exam room" → the answer-mode choice → the real room with the
real bot and the offline examiner; the preview banner on every page; beside the room, the panel
of what the controller decided, read over HTTP, never over the candidate's socket."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, WebSocket, expect

from sessions.models import ExamSession
from tests.browser.exam_journey import (
    ANSWERS,
    EXAMINER_TIMEOUT,
    answer,
    bot_runner,
    examiner_turns,
    wait_for_examiner,
)
from tests.browser.helpers import SignIn, axe_violations, screenshot
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BANNER = "Preview — this attempt is not recorded for marking."
PANEL_ONLY = {"evidence_signal", "transition_decision", "guardrail_triggered", "follow_up_used"}


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


def test_an_author_answers_a_question_in_the_exam_room_preview_beside_the_panel(
    page: Page, sign_in: SignIn
) -> None:
    received: list[str] = []

    def on_socket(socket: WebSocket) -> None:
        socket.on(
            "framereceived",
            lambda p: received.append(p if isinstance(p, str) else p.decode()),
        )

    page.on("websocket", on_socket)
    author = AuthorFactory()
    draft = DraftPackageFactory(owner=author, document=example_document())
    sign_in(author)
    page.goto(f"/studio/{draft.pk}/preview/")
    page.get_by_role("button", name="Try in the exam room").click()

    expect(page.get_by_role("heading", level=1, name="How will you answer?")).to_be_visible()
    expect(page.get_by_role("note")).to_have_text(BANNER)
    page.get_by_role("radio", name="Text: type your answers").check()
    page.get_by_role("button", name="Go to the exam room").click()

    expect(page.get_by_role("heading", level=1, name="Exam room")).to_be_visible()
    expect(page.get_by_role("note")).to_have_text(BANNER)
    start = page.get_by_role("button", name="Start the exam")
    expect(start).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    start.click()
    expect(page.get_by_role("heading", name="Your answer")).to_be_visible(
        timeout=EXAMINER_TIMEOUT * 1000
    )
    wait_for_examiner(page, 0)
    session = ExamSession.objects.get(candidate=author)
    assert session.is_preview

    panel = page.get_by_role("complementary", name="What the controller decided")
    decisions = panel.get_by_role("list")
    expect(decisions).to_contain_text("node_entered — nodeId=warmup")

    # The warm-up, then the first question: the examiner replies and the controller moves on.
    before = len(examiner_turns(page))
    answer(page, ANSWERS["warmup"][0])
    wait_for_examiner(page, before)
    expect(decisions).to_contain_text(
        "transition_decision — fromNodeId=warmup, toNodeId=q-dijkstra"
    )
    before = len(examiner_turns(page))
    answer(page, ANSWERS["q-dijkstra"][0])
    wait_for_examiner(page, before)
    assert len(examiner_turns(page)) > before
    expect(decisions).to_contain_text(
        "evidence_signal — nodeId=q-dijkstra", timeout=EXAMINER_TIMEOUT * 1000
    )
    expect(panel.get_by_text("in_progress", exact=True)).to_be_visible()
    screenshot(page, "exam-room-preview")
    assert axe_violations(page, impacts=("minor", "moderate", "serious", "critical")) == []

    # The candidate socket carried none of the controller's internals.
    seen = {
        json.loads(raw)["event"]["type"]
        for raw in received
        if json.loads(raw).get("kind") == "event"
    }
    assert "examiner_utterance_final" in seen or "transcript_final" in seen
    assert not seen & PANEL_ONLY, seen & PANEL_ONLY
