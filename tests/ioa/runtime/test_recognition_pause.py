"""A pause for recognition trouble ends when the candidate speaks or clicks (issue #30).

Seen before: the stt_low_confidence recovery escalated to a pause ("let me know when you are
ready to continue"), and the exam stayed paused when the candidate spoke again, because only a
clearly recognised "I'm ready" resumed it: the recogniser that caused the pause could not hear
that either.
"""

from __future__ import annotations

import pytest

from ioa.runtime import BotReady, CandidateReady, SpeechUnheard
from ioa.runtime.texts import ENGLISH
from tests.ioa.runtime.harness import Harness

MISHEARD = [
    ("mumble mumble vertex", 0.4),
    ("the pry order q", 0.35),
    ("it settles the nearest", 0.45),
]


def _paused_by_recognition(h: Harness) -> Harness:
    h.to_q1()
    for index, (text, confidence) in enumerate(MISHEARD):
        h.say(text, confidence, at=20 + 10 * index)
        h.observe(at=21 + 10 * index)
    assert h.state.exam_state.value == "paused"
    assert h.state.pause_reason == "recovery_escalation:stt_low_confidence"
    return h


@pytest.mark.parametrize(
    ("words", "confidence"),
    [
        ("okay I am here now", 0.4),
        ("hello can you hear me", 0.92),
        ("so as I was saying the heap", 0.3),
    ],
)
def test_speaking_again_ends_a_recognition_pause(h: Harness, words: str, confidence: float) -> None:
    _paused_by_recognition(h)
    h.say(words, confidence, at=60)
    assert h.state.exam_state.value == "in_progress"
    resumed = h.of("exam_state_changed")[-1]
    assert (resumed.fromState.value, resumed.toState.value) == ("paused", "in_progress")
    assert h.of("recovery_resolved"), "the recognition episode is closed"
    # The candidate is told they can go on, at the question they were answering.
    assert h.node == "q-dijkstra"


def test_the_resume_button_ends_a_recognition_pause(h: Harness) -> None:
    _paused_by_recognition(h)
    h.at(60)
    h.command("resume", command_id="cmd-resume")
    assert h.state.exam_state.value == "in_progress"


def test_a_proctor_pause_is_not_ended_by_speech(h: Harness) -> None:
    h.to_q1()
    h.at(20)
    h.proctor("pause")
    assert h.state.exam_state.value == "paused"
    h.say("hello can you hear me", 0.92, at=30)
    assert h.state.exam_state.value == "paused"


def test_speech_the_recogniser_heard_no_words_in_gets_a_reply(h: Harness) -> None:
    # Issue #30: a recogniser that returned nothing left the candidate with no response.
    h.to_q1()
    h.at(20)
    decision = h.send(SpeechUnheard(duration_ms=2400))
    assert decision.result["status"] == "recovery"
    assert h.texts()[-1] == ENGLISH.stt_check
    assert [c.turnIds for c in h.of("recognition_check")] == [[]]  # no words to show
    (started,) = h.of("recovery_started")
    assert started.recoveryType == "stt_low_confidence"
    assert "heard no words" in started.triggerDescription
    # It counts like a misheard answer: repeated, it ends in the recognition pause.
    for at in (30, 40):
        h.at(at)
        h.send(SpeechUnheard(duration_ms=1800))
    assert h.state.pause_reason == "recovery_escalation:stt_low_confidence"
    # ...which the candidate's next words end.
    h.say("can you hear me now", 0.5, at=50)
    assert h.state.exam_state.value == "in_progress"


def test_unheard_speech_before_the_start_or_while_paused_is_not_answered(h: Harness) -> None:
    h.at(0)
    h.send(BotReady("voice"))  # before the candidate pressed Start
    h.send(SpeechUnheard(duration_ms=1500))
    assert h.texts() == []
    h.send(CandidateReady())
    h.to_q1()
    h.at(20)
    h.proctor("pause")
    spoken = len(h.texts())
    h.send(SpeechUnheard(duration_ms=1500))
    assert len(h.texts()) == spoken
