"""The silence clock follows the candidate (issue 15): typing and speaking suspend it, it counts
from their last activity, text mode has its own (longer) window, no part is left while they
are active, and a silence escalation never skips a node whose policy forbids skipping."""

from __future__ import annotations

from ioa.runtime import Timing
from tests.ioa.builders import example, node
from tests.ioa.runtime.harness import Harness

PROMPT = "Take your time. Whenever you are ready, please go ahead."


def _silence(h: Harness) -> list[str]:
    return [s.recoveryType for s in h.of("recovery_started") if s.recoveryType == "silence"]


def _composing_for(h: Harness, start: float, end: float, every: float = 3.0) -> None:
    """The exam room's throttled composing signal from ``start`` to ``end``, then idle."""
    at = start
    while at < end:
        h.activity("composing", True, at=at)
        at += every
    h.activity("composing", False, at=end)


def test_typing_a_long_answer_is_not_silence() -> None:
    h = Harness(mode="text").to_q1()
    _composing_for(h, 8, 200)  # three minutes of typing at the core question
    assert _silence(h) == []
    assert PROMPT not in h.texts()
    assert h.node == "q-dijkstra"
    # Only the changes are events, not the refreshes.
    assert [(a.activity, a.state) for a in h.of("candidate_activity")] == [
        ("composing", "started"),
        ("composing", "stopped"),
    ]
    assert h.replayed_equal()


def test_the_silence_clock_counts_from_the_last_keystroke_with_the_text_window() -> None:
    h = Harness(mode="text").to_q1()
    _composing_for(h, 8, 40)
    # The voice window (15 s) is not the text one: the default is 90 s.
    h.tick(40 + 89)
    assert _silence(h) == []
    h.tick(40 + 90)
    assert _silence(h) == ["silence"]
    assert h.texts()[-1] == PROMPT


def test_the_text_window_comes_from_the_package() -> None:
    document = example()
    node(document, "q-dijkstra")["recoveryHandlers"][0]["textAfterSec"] = 45
    h = Harness(document, mode="text").to_q1()
    h.tick(6 + 44)
    assert _silence(h) == []
    h.tick(6 + 45)
    assert _silence(h) == ["silence"]


def test_voice_keeps_the_voice_window() -> None:
    h = Harness().to_q1()
    h.tick(6 + 15)
    assert _silence(h) == ["silence"]


def test_speaking_suspends_the_clock_and_the_recogniser_gets_its_latency() -> None:
    h = Harness(timing=Timing(recogniser_latency_ms=8_000)).to_q1()
    h.activity("speaking", True, at=10)
    h.tick(60)  # a long spoken answer: no "take your time" over it
    assert _silence(h) == []
    h.activity("speaking", False, at=60)
    h.tick(60 + 8 + 14)
    assert _silence(h) == []
    h.tick(60 + 8 + 15)
    assert _silence(h) == ["silence"]


def test_the_final_transcript_after_speech_stops_the_clock() -> None:
    h = Harness().to_q1()
    h.activity("speaking", True, at=10)
    h.activity("speaking", False, at=30)
    h.say("It keeps a priority queue of tentative distances.", at=34)
    h.tick(200)
    assert _silence(h) == []


def test_no_part_is_left_while_the_candidate_types() -> None:
    """Even the node's time budget (360 s) waits until they stop typing."""
    h = Harness(mode="text").to_q1()
    _composing_for(h, 8, 400, every=5)
    assert h.node == "q-dijkstra"
    assert not [e for e in h.of("node_exited") if e.nodeId == "q-dijkstra"]
    h.say("Dijkstra settles the nearest vertex first.", at=401)
    assert "q-dijkstra" in [t.nodeId for t in h.of("transcript_final")]


def test_a_node_that_forbids_skipping_is_never_skipped_for_silence() -> None:
    h = Harness().to_q1()  # q-dijkstra forbids skip; silence: 15 s, 2 attempts, skip_node
    for at in (21, 36, 51, 66, 120, 300):
        h.tick(at)
    assert h.node == "q-dijkstra"
    assert _silence(h) == ["silence", "silence"]
    held = [g for g in h.of("guardrail_triggered") if g.guardrailId.startswith("silence-hold:")]
    assert len(held) == 1 and "forbids skipping" in held[0].description
    assert h.texts().count(PROMPT) == 2
    assert h.replayed_equal()


def test_activity_before_the_exam_or_after_it_is_not_recorded() -> None:
    h = Harness(mode="text")
    h.at(0)
    h.activity("composing", True, at=0)
    assert h.of("candidate_activity") == []
