"""Issue #31 in the browser: a skip asked for in the candidate's own words is confirmed first.

The embedded default (daphne, the bot inline, the offline examiner), text mode. At a scenario
part (which allows skipping) the candidate types that they want to skip: the examiner asks
"Do you want to skip this question? You cannot come back to it.", the room shows the question
with Yes / No buttons (keyboard-operable, labelled, axe-clean), and only Yes skips; No keeps the
part.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from sessions.models import SessionEvent
from tests.browser.exam_journey import (
    ANSWERS,
    EXAMINER_TIMEOUT,
    Exam,
    answer,
    bot_runner,
    check_step,
    current_node,
    examiner_turns,
    go_through_the_journey,
    schedule_exam,
    wait_for_examiner,
    wait_until_quiet,
)
from tests.browser.helpers import eventually

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SKIP_QUESTION = "Do you want to skip this question? You cannot come back to it."


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


def _reach_a_scenario(page: Page, exam: Exam) -> str:
    """Answer the warm-up and the core question well until a scenario part is asked."""
    go_through_the_journey(page, exam, shots=False)
    wait_for_examiner(page, 0)
    used: dict[str, int] = {}
    for _ in range(12):
        node = current_node(exam.session) or "warmup"
        if node.startswith("scn-"):
            wait_until_quiet(page)
            return node
        options = ANSWERS[node]
        before = len(examiner_turns(page))
        answer(page, options[min(used.get(node, 0), len(options) - 1)])
        used[node] = used.get(node, 0) + 1
        wait_for_examiner(page, before)
        wait_until_quiet(page)
    raise AssertionError(f"no scenario part reached: {examiner_turns(page)[-3:]}")


def _ask_to_skip(page: Page) -> None:
    answer(page, "Sorry, can we skip this question? I don't really know this one.")
    group = page.get_by_role("group", name=SKIP_QUESTION)
    expect(group).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    expect(group.get_by_role("button", name="Yes")).to_be_focused()


def _skips(exam: Exam) -> list[str]:
    return [
        row.payload["nodeId"]
        for row in SessionEvent.objects.filter(
            session=exam.session, type="node_exited", payload__reason="candidate_skip"
        )
    ]


def test_a_skip_in_words_waits_for_yes_and_no_keeps_the_part(page: Page) -> None:
    exam = schedule_exam()
    scenario = _reach_a_scenario(page, exam)
    _ask_to_skip(page)
    # The buttons come with the command's acknowledgement; the spoken question follows it.
    assert eventually(lambda: SKIP_QUESTION in " ".join(examiner_turns(page)), EXAMINER_TIMEOUT), (
        examiner_turns(page)[-2:]
    )
    check_step(page, "31-confirm-skip")
    before = len(examiner_turns(page))
    page.get_by_role("button", name="No").click()
    wait_for_examiner(page, before)
    expect(page.get_by_role("group", name=SKIP_QUESTION)).to_be_hidden()
    assert current_node(exam.session) == scenario and _skips(exam) == []

    wait_until_quiet(page)
    _ask_to_skip(page)
    page.keyboard.press("Enter")  # Yes has the focus
    assert eventually(lambda: _skips(exam) == [scenario], EXAMINER_TIMEOUT), _skips(exam)
    assert current_node(exam.session) != scenario
