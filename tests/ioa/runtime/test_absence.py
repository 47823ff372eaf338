"""Leaving and coming back (issue 15): a lost connection pauses the exam after the grace
period, the candidate resumes at the same node with the question asked again, and an exam the
candidate never came back to ends ``aborted`` — never a normal completion, nothing skipped or
spoken into the empty room."""

from __future__ import annotations

from ioa.runtime import Timing, texts
from tests.ioa.runtime.harness import Harness

TIMING = Timing(connection_grace_ms=20_000, absence_limit_ms=300_000)


def _spoken_after(h: Harness, index: int) -> list[str]:
    return [s.text for s in h.spoken[index:]]


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
