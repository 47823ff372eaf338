"""A bot that takes a session over without a fault asks a question nobody heard (issue #33).

Seen in the chaos run: a worker was drained (SIGTERM) right after a transition, while the bridge
and the next node's opening were queued in its pipeline and not yet played. The bot that took
the session over rebuilt it from the log (where those utterances never were: they had not
started), recorded the handover and said nothing; the candidate waited for a question that never
came, and the exam waited for ever. Now the resumed bot sends ``BotResumed`` and the controller
asks the question when nothing the examiner said at the node was heard.
"""

from __future__ import annotations

from typing import Any

from ioa.runtime import BotResumed, RuntimeController
from tests.ioa.builders import example
from tests.ioa.runtime.harness import Harness, load_package


def _opening(document: dict[str, Any], node_id: str) -> str:
    return next(n["prompt"]["opening"] for n in document["nodes"] if n["nodeId"] == node_id)


def _taken_over(h: Harness) -> Harness:
    """A new bot's controller, rebuilt from ``h``'s log (the queued utterances are lost)."""
    other = Harness(document=h.document, session_id=h.session_id, clock=h.clock)
    other.controller = RuntimeController.restore(
        load_package(h.document), session_id=h.session_id, events=list(h.events), clock=h.clock
    )
    other.events = list(h.events)
    return other


def _drained_after_transition(document: dict[str, Any] | None = None) -> Harness:
    """Warm-up answered and left; the bridge and the Dijkstra opening are queued, not started."""
    h = Harness(document=document or example(), ack=False)
    h.start()
    h.play(h.spoken)
    h.say("I enjoyed graph algorithms the most.", at=8)
    h.observe(at=9, spoken="Thank you, let us begin.", done=True)
    assert h.node == "q-dijkstra"
    return h


def test_a_question_queued_when_the_old_bot_stopped_is_asked_by_the_new_one() -> None:
    h = _taken_over(_drained_after_transition())
    decision = h.send(BotResumed())

    opening = _opening(h.document, "q-dijkstra")
    assert [(s.text, s.purpose) for s in h.spoken] == [(opening, "question")]
    assert decision.result["status"] == "question_asked"
    assert h.state.node.last_question == opening
    assert h.replayed_equal()


def test_a_node_whose_question_was_heard_gets_nothing_more() -> None:
    h = _drained_after_transition()
    h.play(h.spoken[-2:])  # the bridge and the opening are played this time
    h = _taken_over(h)
    decision = h.send(BotResumed())
    assert h.spoken == []
    assert decision.result["status"] == "continue"


def test_a_paused_or_finished_exam_is_left_as_it_is() -> None:
    h = Harness()
    assert h.send(BotResumed()).result["status"] == "ignored"  # not started
    h = _drained_after_transition()
    h.proctor("pause", reason="checking the room")
    h = _taken_over(h)
    assert h.send(BotResumed()).result["status"] == "ignored"
    assert h.spoken == []


def test_taking_over_fires_no_timer_that_came_due_while_no_bot_ran() -> None:
    # Seen in tests/bot/test_hosting.py: the silence window passed while no bot ran (the
    # candidate's answer waited in the inbox); the resumed bot's BotResumed fired the silence
    # prompt before the waiting answer was read.
    h = _drained_after_transition()
    h.play(h.spoken[-2:])
    h = _taken_over(h)
    h.at(120)  # far past the node's silence window
    h.send(BotResumed())
    assert not h.of("recovery_started")
    assert h.spoken == []
