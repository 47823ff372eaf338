"""Issue #31 in the browser: correct answers in the candidate's own words are credited, and the
examiner never stalls (runtime semantics §16).

The embedded default (daphne, the bot inline, the offline examiner), text mode, the cs201 demo
exam, once per scenario its pool can draw. The candidate answers every question correctly, but
as a student types: lower case, a typo, their own words ("pop the closest node you havent
finished yet", "labelled with its latency in ms"), never the package's target wording nor the
answers of ``exam_journey.ANSWERS``. From the session's event log:

1. every candidate turn gets exactly one examiner reply (a follow-up, a prompt, the next part's
   question, or the closing; a bridge may lead into the question);
2. each paraphrase is credited (an ``evidence_signal``) for the target it covers, at its turn;
3. no node takes more than ``maxFollowUps`` + 2 candidate turns (nor more follow-ups than
   ``maxFollowUps``);
4. the core question and the scenario part are left by credit (``completed``, natural
   completion), never by the exhausted exit, and the exam reaches its normal end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from ioa.runtime.ids import SeededRng
from sessions.models import SessionEvent
from tests.browser.exam_journey import (
    ANSWERS,
    Exam,
    answer,
    bot_runner,
    current_node,
    examiner_turns,
    finished,
    go_through_the_journey,
    schedule_exam,
    wait_for_examiner,
    wait_until_quiet,
)
from tests.factories import example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PACKAGE = "cs201-graph-algorithms"
POOL = "pool-scenario"

PARAPHRASES: dict[str, list[tuple[str, str | None]]] = {
    "warmup": [("honestly the shortest path stuff, dijkstra and all that was the most fun", None)],
    "q-dijkstra": [
        (
            "you keep a min-heap of the distances found so far, and each round you pop the "
            "closest node you havent finished yet, then for each of its neigbours you check if "
            "going through it is shorter and if so you update their distance",
            "tgt-greedy-choice",
        ),
        (
            "using a priority queue it's roughly e log v since every edge might cause one heap "
            "update. without a heap, just looping over all the nodes to find the min, it's n "
            "squared",
            "tgt-complexity",
        ),
        (
            "it breaks if some edge costs are below zero: a node you've already finalised could "
            "later get cheaper through such an edge and dijkstra never goes back to it, so then "
            "i'd use bellman-ford",
            "tgt-negative-weights",
        ),
    ],
    "scn-delivery-routes": [
        (
            "id treat the depot and each of the 30 shops as nodes and the roads between them as "
            "edges, and put the number of minutes to drive each road on the edge",
            "tgt-model-graph",
        ),
        (
            "since driving times can never be below zero, i'd run dijkstra once starting at the "
            "depot and that gives the quickest route to all the shops",
            "tgt-choose-algorithm",
        ),
    ],
    "scn-network-latency": [
        (
            "each office is a node and every link between two offices is an edge labelled with "
            "its latency in ms",
            "tgt-model-graph-net",
        ),
        (
            "run dijkstra starting from headquarters, it's fine since delays are always "
            "positive, and it finds the fastest path to each office at once",
            "tgt-choose-algorithm-net",
        ),
    ],
    "wrapup": [("nope, i think i covered everything. thanks!", None)],
}
"""Per node, in order: what the candidate types and the target it covers (``None``: none)."""
OUT_OF_WORDS = "hmm, i think thats all i can say about it"
"""Sent only if a node asks for more than its paraphrases (a paraphrase was not credited): the
bound and the exits are still checked, and the missing credit fails the test by name."""
REPLIES = ("question", "follow_up", "prompt", "recovery", "closing")
"""Purposes of an examiner reply; a ``bridge`` only leads into the next part's question."""


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


def _nodes() -> dict[str, dict[str, Any]]:
    return {node["nodeId"]: node for node in example_document(PACKAGE)["nodes"]}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _shared_run(text: str, source: str, size: int = 4) -> str | None:
    """A run of ``size`` words ``text`` copies from ``source``, if any."""
    said, known = _words(text), " ".join(_words(source))
    for i in range(len(said) - size + 1):
        run = " ".join(said[i : i + size])
        if f" {run} " in f" {known} ":
            return run
    return None


def test_the_paraphrases_are_not_the_package_s_wording() -> None:
    """The test's answers stay the candidate's own: no four-word run from the package's evidence
    targets or from the journey's model answers."""
    sources = [
        f"{target['label']}. {target['description']}"
        for node in _nodes().values()
        for target in node.get("evidenceTargets", [])
    ] + [text for texts in ANSWERS.values() for text in texts]
    for node, lines in PARAPHRASES.items():
        for text, _ in lines:
            for source in sources:
                assert _shared_run(text, source) is None, (node, text, _shared_run(text, source))


def _schedule_drawing(scenario: str) -> Exam:
    """An exam whose session draws ``scenario`` from the scenario pool (the draw is seeded by
    the session id, runtime semantics §4), so both scenarios are taken, whatever the ids."""
    pool = next(p for p in example_document(PACKAGE)["questionPools"] if p["poolId"] == POOL)
    for _ in range(30):
        exam = schedule_exam()
        if SeededRng(str(exam.session.pk)).choose(POOL, pool["nodeIds"]) == scenario:
            return exam
    raise AssertionError(f"no session drew {scenario}")


def _events(exam: Exam) -> list[SessionEvent]:
    return list(SessionEvent.objects.filter(session=exam.session).order_by("seq"))


def _take_the_exam_in_own_words(page: Page, exam: Exam) -> list[str]:
    """Answer each question with the next paraphrase of its node until the completion page;
    returns the nodes answered at, in order."""
    go_through_the_journey(page, exam, shots=False)
    wait_for_examiner(page, 0)
    wait_until_quiet(page)
    used: dict[str, int] = {}
    answered_at: list[str] = []
    for _ in range(20):
        if finished(page):
            return answered_at
        node = current_node(exam.session) or "warmup"
        lines = PARAPHRASES.get(node, [])
        index = used.get(node, 0)
        text = lines[index][0] if index < len(lines) else OUT_OF_WORDS
        used[node] = index + 1
        before = len(examiner_turns(page))
        answer(page, text)
        answered_at.append(node)
        wait_for_examiner(page, before)  # fails when the examiner says nothing
        wait_until_quiet(page)
    raise AssertionError(f"the exam did not finish after {len(answered_at)} answers")


@pytest.mark.parametrize("scenario", ["scn-delivery-routes", "scn-network-latency"])
def test_correct_answers_in_own_words_are_credited_and_the_exam_moves_on(
    page: Page, scenario: str
) -> None:
    exam = _schedule_drawing(scenario)
    answered_at = _take_the_exam_in_own_words(page, exam)
    events = _events(exam)
    log = [
        (e.type, e.payload.get("nodeId"), e.payload.get("purpose") or e.payload.get("reason"))
        for e in events
    ]
    nodes = _nodes()
    entered = [e.payload["nodeId"] for e in events if e.type == "node_entered"]
    assert [node for node in entered if node.startswith("scn-")] == [scenario], entered

    # (1) Every candidate turn has exactly one examiner reply before the next turn.
    turns = [
        e for e in events if e.type == "transcript_final" and e.payload["speaker"] == "candidate"
    ]
    assert len(turns) == len(answered_at), (len(turns), answered_at, log)
    bounds = [turn.seq for turn in turns] + [events[-1].seq + 1]
    for turn, start, end in zip(turns, bounds, bounds[1:], strict=False):
        said = [
            (e.payload["purpose"], e.payload["text"])
            for e in events
            if e.type == "examiner_utterance_final" and start < e.seq < end
        ]
        replies = [purpose for purpose, _ in said if purpose in REPLIES]
        assert len(replies) == 1, (turn.payload["text"], said)

    # (2) Each paraphrase is credited for its target, at the turn it was typed.
    signals = [e for e in events if e.type == "evidence_signal"]
    for node in ("q-dijkstra", scenario):
        for text, target in PARAPHRASES[node]:
            turn = next(t for t in turns if t.payload["text"] == text)
            credited = [
                s
                for s in signals
                if target in s.payload["targetIds"] and s.payload["signalKind"] == "positive"
            ]
            assert credited, f"not credited for {target}: {text!r}\n{log}"
            assert turn.payload["turnId"] in credited[0].payload["turnIds"], (
                target,
                text,
                credited[0].payload,
            )

    # (3) No node takes more than maxFollowUps + 2 candidate turns.
    for node in set(answered_at):
        bound = nodes[node].get("followUpPolicy", {}).get("maxFollowUps", 0) + 2
        taken = sum(1 for t in turns if t.payload["nodeId"] == node)
        assert taken <= bound, (node, taken, bound)
        used = [e for e in events if e.type == "follow_up_used" and e.payload["nodeId"] == node]
        assert len(used) <= bound - 2, (node, [e.payload for e in used])

    # (4) Left by credit, never by the exhausted exit, and the exam reached its normal end.
    exits = {e.payload["nodeId"]: e.payload["reason"] for e in events if e.type == "node_exited"}
    assert exits.get("q-dijkstra") == "completed", log
    assert exits.get(scenario) == "completed", log
    assert "follow_ups_exhausted" not in exits.values(), log
    decisions = {
        e.payload["fromNodeId"]: e.payload["reason"]
        for e in events
        if e.type == "transition_decision"
    }
    assert decisions.get("q-dijkstra") == "natural_completion", log
    assert decisions.get(scenario) == "natural_completion", log
    assert OUT_OF_WORDS not in [t.payload["text"] for t in turns], log
    assert entered[-1] == "end-normal", entered
    completed = [e.payload["reason"] for e in events if e.type == "exam_completed"]
    assert completed == ["all_nodes_visited"], completed
