"""Issue #31 in the browser: vague answers at the core question never meet silence and never
loop (runtime semantics §16).

The embedded default (daphne, the bot inline, the offline examiner); the candidate types the
answers a candidate who does not know the material gives, in their own words. Every answer gets
an examiner reply, and the core question (three follow-ups) is left after at most
``maxFollowUps`` + 2 of them, by its exhausted exit, with the alerts of the proctor's read model
not multiplied.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from sessions.models import SessionEvent
from tests.browser.exam_journey import (
    Exam,
    answer,
    bot_runner,
    current_node,
    examiner_turns,
    reach_the_core_question,
    schedule_exam,
    wait_for_examiner,
    wait_until_quiet,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MAX_FOLLOW_UPS = 3
VAGUE_ANSWERS = (
    "Um, it finds the shortest path I think?",
    "its like a search thing, it goes thru the graph and checks stuff",
    "I'm honestly not sure. Something with distances maybe.",
    "We did it in the lecture but I can't remember the details, sorry.",
    "it just works out the best route, basically",
    "Yeah, that's kind of all I know about it.",
    "I would need to look it up.",
)


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


def test_vague_answers_are_each_answered_and_the_question_is_left_in_bound(page: Page) -> None:
    exam: Exam = schedule_exam()
    reach_the_core_question(page, exam)
    answered_at_core = 0
    for text in VAGUE_ANSWERS:
        if current_node(exam.session) != "q-dijkstra":
            break
        before = len(examiner_turns(page))
        answer(page, text)
        answered_at_core += 1
        wait_for_examiner(page, before)  # fails when the examiner says nothing
        wait_until_quiet(page)
    assert current_node(exam.session) != "q-dijkstra", examiner_turns(page)
    assert answered_at_core <= MAX_FOLLOW_UPS + 2, answered_at_core
    exits = SessionEvent.objects.filter(
        session=exam.session, type="node_exited", payload__nodeId="q-dijkstra"
    )
    assert [row.payload["reason"] for row in exits] == ["follow_ups_exhausted"]
    # One reply per answer: the examiner's turns at the core question between two answers.
    replies = SessionEvent.objects.filter(
        session=exam.session,
        type="examiner_utterance_final",
        payload__nodeId="q-dijkstra",
        payload__purpose__in=["follow_up", "prompt", "recovery"],
    ).count()
    assert replies >= answered_at_core - 1, replies
