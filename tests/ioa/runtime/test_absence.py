"""Leaving and coming back (issue 15): a lost connection pauses the exam after the grace
period, the candidate resumes at the same node with the question asked again, and an exam the
candidate never came back to ends ``aborted`` — never a normal completion, nothing skipped or
spoken into the empty room."""

from __future__ import annotations

from ioa.runtime import Fault, FaultCleared, Timing, texts
from ioa.runtime.effects import PromptLlm
from tests.ioa.runtime.harness import Harness, signal

TIMING = Timing(connection_grace_ms=20_000, absence_limit_ms=300_000)


def _spoken_after(h: Harness, index: int) -> list[str]:
    return [s.text for s in h.spoken[index:]]


def _back_and_given_the_owed_reply(h: Harness, question: str | None) -> None:
    """The candidate comes back: welcomed, and the model asked for the reply still owed to
    their stored answer, never the question again."""
    said, effects = len(h.spoken), len(h.effects)
    h.connection("connected", at=100)
    assert _spoken_after(h, said) == [texts.ENGLISH.resumed]
    prompts = [e for e in h.effects[effects:] if isinstance(e, PromptLlm)]
    assert [e.instruction for e in prompts] == [texts.OWED_ANSWER_INSTRUCTION]
    assert question not in _spoken_after(h, said)
    assert h.replayed_equal()


def test_the_browser_closed_pauses_after_the_grace_period_without_a_word() -> None:
    h = Harness(timing=TIMING).to_q1()
    said = len(h.spoken)
    h.connection("disconnected", at=10)
    h.tick(29)
    assert h.state.exam_state == "in_progress"
    h.tick(30)
    changed = h.of("exam_state_changed")[-1]
    assert (changed.toState, changed.reason) == ("paused", "candidate_disconnected")
    h.tick(200)  # silence recovery never runs into the empty room, no part is skipped
    assert h.node == "q-dijkstra"
    assert [r for r in h.of("recovery_started") if r.recoveryType == "silence"] == []
    assert _spoken_after(h, said) == []
    # Both clocks stopped at the pause.
    assert h.state.exam_clock.running is False and h.state.node.clock.running is False
    assert h.replayed_equal()


def test_back_within_the_window_resumes_at_the_same_node_and_repeats_the_question() -> None:
    h = Harness(timing=TIMING).to_q1()
    question = h.state.node.last_question
    h.connection("disconnected", at=10)
    h.tick(40)
    said = len(h.spoken)
    h.connection("connected", at=100)
    changed = h.of("exam_state_changed")[-1]
    assert (changed.toState, changed.reason) == ("in_progress", "candidate_returned")
    assert h.node == "q-dijkstra"
    spoken = _spoken_after(h, said)
    assert spoken[0] == texts.ENGLISH.resumed
    assert question is not None and question in spoken
    # The node's clock did not run while they were away: 360 s budget, 4 s used before.
    assert h.state.node.clock.elapsed(h.clock.now_ms()) < 40_000


def test_a_short_drop_changes_nothing() -> None:
    h = Harness(timing=TIMING).to_q1()
    h.connection("disconnected", at=10)
    h.connection("connected", at=15)
    assert "paused" not in [c.toState for c in h.of("exam_state_changed")]


def test_time_away_is_not_charged_to_the_part_even_when_no_timer_noticed_it() -> None:
    """A host that ticked late (a busy or restarted bot) folds the disconnection and the return
    together: the part's clock still stopped for the whole time away; the exam's did not."""
    h = Harness(timing=TIMING).to_q1()
    before = h.state.node.clock.elapsed(h.clock.now_ms())
    exam_before = h.state.exam_clock.elapsed(h.clock.now_ms())
    h.connection("disconnected", at=10)
    h.connection("connected", at=100)
    now = h.clock.now_ms()
    assert "paused" not in [c.toState for c in h.of("exam_state_changed")]
    assert h.state.node.clock.elapsed(now) - before <= 10_000 - 6_000
    assert h.state.exam_clock.elapsed(now) - exam_before >= 90_000
    assert h.replayed_equal()


def test_never_back_ends_aborted_not_completed_normally() -> None:
    h = Harness(timing=TIMING).to_q1()
    said = len(h.spoken)
    h.connection("disconnected", at=10)
    h.tick(309)
    assert not h.state.completed
    h.tick(310)
    completed = h.of("exam_completed")
    assert len(completed) == 1 and completed[0].reason == "candidate_absent"
    assert h.state.exam_state == "aborted"
    assert h.of("node_entered")[-1].nodeId == "end-terminated"
    assert "all_nodes_visited" not in [c.reason for c in completed]
    # Nothing was spoken into the empty room, not even the closing.
    assert _spoken_after(h, said) == []
    assert h.replayed_equal()


def test_a_lost_media_transport_counts_as_leaving() -> None:
    h = Harness(timing=TIMING).to_q1()
    h.connection("disconnected", at=10, channel="webrtc")
    h.tick(31)
    assert h.state.exam_state == "paused"
    h.connection("connected", at=40, channel="webrtc")
    assert h.state.exam_state == "in_progress"


def test_the_room_back_but_not_the_audio_stays_paused() -> None:
    h = Harness(timing=TIMING).to_q1()
    h.connection("disconnected", at=10, channel="webrtc")
    h.connection("disconnected", at=10)
    h.tick(31)
    h.connection("connected", at=40)
    assert h.state.exam_state == "paused"


def test_a_proctor_pause_is_not_lifted_by_the_candidate_coming_back() -> None:
    h = Harness(timing=TIMING).to_q1()
    h.proctor("pause")
    h.connection("disconnected", at=10)
    h.connection("connected", at=60)
    assert h.state.exam_state == "paused"
    assert h.state.pause_reason == "proctor_pause"


def test_typing_stops_with_the_connection() -> None:
    h = Harness(mode="text", timing=TIMING).to_q1()
    h.activity("composing", True, at=8)
    h.connection("disconnected", at=10)
    assert not h.state.candidate_active
    h.tick(31)
    assert h.state.exam_state == "paused"


def test_an_answer_left_unanswered_when_the_candidate_dropped_is_answered_on_return() -> None:
    """The candidate answered, the connection dropped before the examiner replied (a closed tab,
    a bot that died mid-turn and found them gone), the exam paused: back, they are welcomed and
    the examiner responds to that stored answer; the question is not asked again as if they had
    said nothing (issue #33)."""
    h = Harness(timing=TIMING).to_q1()
    question = h.state.node.last_question
    h.say("It keeps a priority queue of tentative distances and settles the closest one.", at=8)
    h.connection("disconnected", at=9)
    h.tick(40)
    assert h.state.exam_state == "paused"
    _back_and_given_the_owed_reply(h, question)


def test_an_answer_the_examiner_already_replied_to_is_not_answered_again_on_return() -> None:
    h = Harness(timing=TIMING).to_q1()
    question = h.state.node.last_question
    h.say("It keeps a priority queue of tentative distances.", at=8)
    h.observe(at=9, spoken="And why does that give the shortest paths?", follow_up=True)
    h.connection("disconnected", at=10)
    h.tick(40)
    said, effects = len(h.spoken), len(h.effects)
    h.connection("connected", at=100)
    spoken = _spoken_after(h, said)
    assert spoken[0] == texts.ENGLISH.resumed and len(spoken) == 2
    assert spoken[1] in (question, "And why does that give the shortest paths?")
    assert not [e for e in h.effects[effects:] if isinstance(e, PromptLlm)]


def test_back_from_a_pause_the_silence_window_starts_again_from_zero() -> None:
    """The time paused is nobody's silence: welcomed back, the candidate is not told "take your
    time" in the same breath, and the prompt comes a whole window after the return."""
    h = Harness(timing=TIMING).to_q1()
    h.connection("disconnected", at=10)
    h.tick(40)
    said = len(h.spoken)
    h.connection("connected", at=100)
    assert [s.purpose for s in h.spoken[said:]] == ["prompt", "question"]
    h.tick(110)
    assert [s.purpose for s in h.spoken[said:]] == ["prompt", "question"]
    h.tick(125)
    assert h.spoken[-1].purpose == "recovery"


def test_a_bot_restart_while_the_candidate_is_away_still_owes_them_the_reply() -> None:
    """The candidate answered and closed the room; the bot died before replying and, restarted,
    reports its fault after the grace period ran out. The technical pause says nothing to the
    empty room, its end links with a bridge to the owed reply (for a candidate back within the
    grace period), the exam pauses for the absence, and back the candidate gets the reply still
    owed. Before, "We seem to have a technical problem" and "Welcome back" were said to nobody
    and counted as the examiner's reply, so the return asked the question again (CI:
    tests/bot/test_durable_inbox.py, a worker killed mid-turn, issue #33)."""
    h = Harness(timing=TIMING).to_q1()
    question = h.state.node.last_question
    h.say("It keeps a priority queue of tentative distances and settles the closest one.", at=8)
    h.connection("disconnected", at=9)
    said = len(h.spoken)
    h.at(45).send(Fault(component="bot", severity="transient", detail="the bot restarted"))
    assert _spoken_after(h, said) == []  # no technical-pause line into the empty room
    h.at(45).send(FaultCleared(component="bot"))
    h.tick(46)
    assert [c.reason for c in h.of("exam_state_changed")][-3:] == [
        "technical_fault",
        "technical_recovered",
        "candidate_disconnected",
    ]
    assert [(s.text, s.purpose) for s in h.spoken[said:]] == [(texts.ENGLISH.resumed, "bridge")]
    _back_and_given_the_owed_reply(h, question)


def test_a_technical_pause_with_the_candidate_here_is_still_said() -> None:
    h = Harness(timing=TIMING).to_q1()
    said = len(h.spoken)
    h.at(20).send(Fault(component="stt", severity="transient", detail="recogniser down"))
    assert _spoken_after(h, said) == [texts.ENGLISH.technical_pause]
    h.at(25).send(FaultCleared(component="stt"))
    assert _spoken_after(h, said)[1] == texts.ENGLISH.resumed


def test_the_owed_reply_s_evidence_is_read_from_the_answer_it_replies_to() -> None:
    """Back from a pause with a reply owed, "Welcome back" only links to it (a bridge): the
    reply's evidence is tied to the stored answer. Before, the welcome closed the answer and the
    evidence of an answer given before a disconnection was lost (found by
    tests/bot/test_durable_inbox.py with the offline examiner, issue #33)."""
    h = Harness(timing=TIMING).to_q1()
    h.say("It settles the nearest unvisited vertex and relaxes its edges.", at=8)
    h.connection("disconnected", at=9)
    h.tick(40)
    said = len(h.spoken)
    h.connection("connected", at=100)
    assert [(s.text, s.purpose) for s in h.spoken[said:]] == [(texts.ENGLISH.resumed, "bridge")]
    h.observe(
        at=101,
        signals=[signal("tgt-greedy-choice", excerpt="settles the nearest unvisited vertex")],
        spoken="And which data structure finds that vertex quickly?",
        follow_up=True,
    )
    (evidence,) = h.of("evidence_signal")
    assert list(evidence.targetIds) == ["tgt-greedy-choice"]
    assert h.replayed_equal()
