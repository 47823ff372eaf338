"""A provider outage never ends an exam before its limit, and never flaps it to an end
(issue #30, ``ioa.runtime.outage``).

Seen before: a recogniser outage of ~12 s paused and resumed the exam three times in 8 s, each
pause counted as one more attempt of the candidate's network-issue recovery, and the fourth
fault ended the exam as a technical failure.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ioa.runtime import Fault, FaultCleared, Timing
from tests.ioa.runtime.harness import Harness


def _fault(h: Harness, at: float, component: str = "stt") -> None:
    h.at(at)
    h.send(Fault(component=component, severity="transient", detail="503 from the provider"))


def _cleared(h: Harness, at: float, component: str = "stt") -> None:
    h.at(at)
    h.send(FaultCleared(component=component))


def test_repeated_faults_pause_and_resume_but_never_end_the_exam(h: Harness) -> None:
    h.to_q1()
    t = 20.0
    for _ in range(6):
        _fault(h, t)
        assert h.state.exam_state.value == "paused"
        _cleared(h, t + 3)
        assert h.state.exam_state.value == "in_progress"
        t += 4
    assert h.of("exam_completed") == []
    assert h.node == "q-dijkstra"
    # One recovery episode for the proctor and the audit, not one attempt per fault.
    started = h.of("recovery_started")
    assert [r.recoveryType for r in started] == ["network_issue"]
    assert len(h.of("system_error")) == 6


def test_an_outage_longer_than_the_limit_ends_at_the_technical_failure_end() -> None:
    h = Harness(timing=Timing(outage_limit_ms=300_000)).to_q1()
    _fault(h, 20)
    h.tick(20 + 299)
    assert h.state.exam_state.value == "paused"
    h.tick(20 + 301)
    assert h.state.exam_state.value == "aborted"
    (completed,) = h.of("exam_completed")
    assert completed.reason == "system_error"


def test_a_clearing_before_the_limit_resumes_at_the_same_question() -> None:
    h = Harness(timing=Timing(outage_limit_ms=300_000)).to_q1()
    _fault(h, 20, "tts")
    h.tick(200)
    _cleared(h, 250, "tts")
    assert h.state.exam_state.value == "in_progress"
    assert h.node == "q-dijkstra"
    # The 230 s of the pause were not the candidate's: the part's clock stood still.
    assert h.state.node.clock.elapsed(h.clock.now_ms()) < 20_000


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["fault", "cleared", "tick", "say"]),
            st.sampled_from(["stt", "tts", "llm"]),
            st.floats(0.2, 60.0),
        ),
        max_size=30,
    )
)
def test_any_fault_sequence_shorter_than_the_limit_never_ends_the_exam(
    steps: list[tuple[str, str, float]],
) -> None:
    limit_ms = 300_000
    h = Harness(timing=Timing(outage_limit_ms=limit_ms)).to_q1()
    t = 20.0
    paused_since: float | None = None
    for kind, component, gap in steps:
        t += gap
        # The only end a fault may bring: the pause for it lasted the limit before this step.
        limit_reached = paused_since is not None and (t - paused_since) * 1000 >= limit_ms
        if kind == "fault":
            _fault(h, t, component)
        elif kind == "cleared":
            _cleared(h, t, component)
        elif kind == "tick":
            h.tick(t)
        else:
            h.say("It keeps the vertices in a priority queue.", 0.95, at=t)
        ended_for_outage = any(e.reason == "system_error" for e in h.of("exam_completed"))
        assert limit_reached or not ended_for_outage, "an outage shorter than the limit ended it"
        if ended_for_outage:
            return
        paused = h.state.exam_state.value == "paused"
        paused_since = (paused_since if paused_since is not None else t) if paused else None
