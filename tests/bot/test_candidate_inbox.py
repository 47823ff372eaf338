"""``bot.candidate_inbox.unanswered_turn``: the answer a resumed bot must still answer (issue #33).

Seen in the chaos run: the examiner decided a follow-up (``evidence_signal``, ``follow_up_used``
stored) and the worker was drained before the follow-up began to play. The bot that took the
session over counted those two events as the examiner's reply, so it neither re-ran the turn
nor said anything; the candidate waited for ever. Only an examiner utterance that began (not a
bridge) answers the candidate, as for the runtime's ``answered_upto``.
"""

from __future__ import annotations

from bot.candidate_inbox import unanswered_turn
from ioa.runtime import UtteranceStarted
from tests.ioa.runtime.harness import Harness, signal

ANSWER = "I think it settles the closest vertex first, then relaxes its edges."


def _at_q1_answered() -> tuple[Harness, list[str]]:
    """At ``q-dijkstra``, its opening heard; the candidate answers and the examiner decides a
    follow-up, which is queued and has not begun."""
    h = Harness(ack=False)
    h.start()
    h.say("I enjoyed graph algorithms the most.", at=8)
    h.observe(at=9, spoken="Thank you, let us begin.", done=True)
    h.play(h.spoken)
    assert h.node == "q-dijkstra"
    h.say(ANSWER, at=20)
    before = len(h.spoken)
    h.observe(
        at=21,
        spoken="What does the priority queue hold?",
        follow_up=True,
        signals=[signal("tgt-greedy-choice", excerpt="settles the closest vertex")],
    )
    queued = [s.utterance_id for s in h.spoken[before:]]
    assert queued and h.of("follow_up_used") and h.of("evidence_signal")
    return h, queued


def test_an_answer_whose_reply_never_began_is_still_unanswered() -> None:
    h, _ = _at_q1_answered()
    assert unanswered_turn(h.events, "q-dijkstra") == ANSWER


def test_an_answer_whose_reply_began_is_answered() -> None:
    h, queued = _at_q1_answered()
    h.send(UtteranceStarted(queued[0]))
    assert unanswered_turn(h.events, "q-dijkstra") is None


def test_a_node_just_entered_has_nothing_unanswered() -> None:
    h = Harness(ack=False)
    h.start()
    h.play(h.spoken)
    h.say("I enjoyed graph algorithms the most.", at=8)
    h.observe(at=9, spoken="Thank you, let us begin.", done=True)
    assert unanswered_turn(h.events, "q-dijkstra") is None  # nothing said there yet
