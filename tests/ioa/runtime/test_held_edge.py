"""A completion decided on a spoken answer that may still go on is held (issue #30, runtime
semantics §18).

The reply to a finished answer comes about a second after the candidate stops only if the turn
ends on a short pause; a short pause also falls between two sentences of one answer. So a turn
that ended on the reply pause is ``reopenable``: the examiner's bridge is said at once, the edge
waits until the turn settles, and the candidate going on keeps them at the node with the rest of
their answer.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ioa.events.payloads import ExamStateChanged
from ioa.runtime import (
    BotResumed,
    CandidateActivity,
    CandidateInterrupted,
    Fault,
    Observation,
    SpeechUnheard,
    Tick,
    TurnSettled,
    UtteranceStarted,
)
from ioa.runtime.held_edge import HELD_LIMIT_MS
from tests.ioa.runtime.harness import Harness, obs

WARMUP_ANSWER = "I enjoyed graph algorithms the most."
BRIDGE = "Thank you, let us begin."


def _held() -> Harness:
    """The warm-up answered on the reply pause: its completion is held, the bridge said."""
    h = Harness(ack=False)
    h.start()
    h.play(h.spoken)
    h.say(WARMUP_ANSWER, at=8)
    h.spoken.clear()
    decision = h.send(Observation(obs(BRIDGE, done=True), reopenable=True))
    assert decision.result["status"] == "held"
    return h


def test_the_bridge_is_said_at_once_and_the_node_stays() -> None:
    h = _held()
    assert h.node == "warmup"
    assert [(s.text, s.purpose) for s in h.spoken] == [(BRIDGE, "bridge")]
    assert [e.phase for e in h.of("transition_held")] == ["held"]
    assert not h.of("transition_decision")
    assert h.replayed_equal()


def test_a_settled_turn_takes_the_edge_and_asks_the_next_question_without_a_second_bridge() -> None:
    h = _held()
    h.play(h.spoken)
    h.spoken.clear()
    h.at(9.2)
    h.send(TurnSettled())
    assert h.node == "q-dijkstra"
    (decision,) = h.of("transition_decision")
    assert decision.reason == "natural_completion"
    assert [s.purpose for s in h.spoken] == ["question"]
    assert h.replayed_equal()


def test_the_candidate_going_on_keeps_the_node_and_the_rest_is_the_same_answer() -> None:
    h = _held()
    h.at(9.0)
    h.send(UtteranceStarted(h.spoken[0].utterance_id))  # the bridge is being said
    h.send(CandidateActivity("speaking", True))
    interrupted = h.send(CandidateInterrupted())
    assert interrupted.result["reason"] == "the candidate went on with their answer"
    h.send(TurnSettled())  # a late settle after the candidate went on changes nothing
    assert h.node == "warmup"
    assert [e.phase for e in h.of("transition_held")] == ["held", "dropped"]
    h.send(CandidateActivity("speaking", False))
    h.say("Mostly shortest paths, because of a project on route planning.", at=12)
    transcripts = h.of("transcript_final")
    assert transcripts[-1].nodeId == "warmup"
    assert not h.of("recovery_started")  # talking over the bridge is no interruption
    h.observe(at=13, spoken="Thank you, let us begin.", done=True)  # settled this time
    assert h.node == "q-dijkstra"
    assert h.replayed_equal()


def test_words_without_a_voice_activity_report_drop_it_too() -> None:
    h = _held()
    h.say("and Prim's algorithm too.", at=9.5)
    assert h.node == "warmup"
    assert h.of("transition_held")[-1].phase == "dropped"


def test_a_settle_that_never_comes_is_replaced_by_the_controllers_own_deadline() -> None:
    h = _held()
    h.tick(8 + HELD_LIMIT_MS / 1000 - 0.5)
    assert h.node == "warmup"
    assert h.controller.next_deadline_ms() is not None
    h.tick(8 + HELD_LIMIT_MS / 1000 + 0.1)
    assert h.node == "q-dijkstra"


def test_a_bot_that_takes_the_session_over_takes_the_held_edge() -> None:
    h = _held()
    h.send(BotResumed())
    assert h.node == "q-dijkstra"
    assert [s.purpose for s in h.spoken] == ["bridge", "question"]


def test_a_turn_that_is_not_reopenable_is_left_at_once_as_before() -> None:
    h = Harness(ack=False)
    h.start()
    h.play(h.spoken)
    h.say(WARMUP_ANSWER, at=8)
    h.observe(at=9, spoken=BRIDGE, done=True)
    assert h.node == "q-dijkstra"
    assert not h.of("transition_held")


def test_a_follow_up_on_a_reopenable_turn_is_spoken_and_nothing_is_held() -> None:
    h = Harness(ack=False).to_q1()
    h.play(h.spoken)
    h.spoken.clear()
    h.say("Dijkstra picks the closest node.", at=10)
    h.send(Observation(obs("Why the closest one?", follow_up=True), reopenable=True))
    assert h.node == "q-dijkstra"
    assert not h.of("transition_held")
    assert [s.purpose for s in h.spoken] == ["follow_up"]


EVENTS = st.lists(
    st.sampled_from(["settle", "speak", "silent", "words", "tick", "resume", "started"]),
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(EVENTS)
def test_any_interleaving_leaves_the_node_at_most_once_and_never_after_the_candidate_went_on(
    steps: list[str],
) -> None:
    h = _held()
    went_on = False
    t = 8.0
    for name in steps:
        t += 0.7
        h.at(t)
        if name == "settle":
            h.send(TurnSettled())
        elif name == "speak":
            h.send(CandidateActivity("speaking", True))
        elif name == "silent":
            h.send(CandidateActivity("speaking", False))
        elif name == "words":
            h.say("and also the Bellman-Ford algorithm.", at=t)
        elif name == "tick":
            h.send(Tick())
        elif name == "resume":
            h.send(BotResumed())
        elif name == "started" and h.spoken:
            h.send(UtteranceStarted(h.spoken[0].utterance_id))
        if h.node == "warmup" and h.state.node.held_edge is None:
            went_on = True
        if went_on:
            assert h.node == "warmup", steps  # only a new observation may leave it now
    assert len(h.of("transition_decision")) <= 1
    phases = [e.phase for e in h.of("transition_held")]
    assert phases[0] == "held" and phases.count("dropped") <= 1
    assert h.replayed_equal()


def test_a_fault_while_it_is_held_finds_the_node_left_as_if_taken_at_once() -> None:
    # Seen in tests/bot/voice/test_provider_outage.py: the voice failed on the bridge and the
    # exam paused with the completion still held; the resume took it by the deadline, under
    # the resumption's own "welcome back", and the bridge's failure paused the exam again.
    h = _held()
    h.at(8.5)
    decision = h.send(Fault("tts", "error", "no audio for the bridge"))
    assert h.node == "q-dijkstra"
    paused = next(
        k
        for k, e in enumerate(h.events)
        if isinstance(e.payload, ExamStateChanged) and e.payload.toState == "paused"
    )
    assert h.types().index("transition_decision") < paused
    assert decision.result["status"] != "transitioned"
    assert h.state.exam_state.value == "paused"
    assert h.replayed_equal()


def test_speech_without_words_drops_it_and_gets_the_did_not_catch_that() -> None:
    h = _held()
    h.at(9.5)
    h.send(SpeechUnheard(1200))
    assert h.node == "warmup"
    assert h.of("transition_held")[-1].phase == "dropped"
    assert h.spoken[-1].purpose in ("recovery", "prompt")
