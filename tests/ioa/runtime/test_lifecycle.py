"""Exam states, the boot node, the start, the end and what may follow it."""

from __future__ import annotations

import pytest

from ioa.events import ExamState
from ioa.runtime import (
    BotReady,
    CandidateReady,
    EndSession,
    EnterBootNode,
    EnterNode,
    Observation,
    Speak,
    Tick,
    TranscriptSegment,
)
from tests.ioa.runtime.harness import Harness, obs, signal


def test_bot_ready_enters_scaffolding_and_the_silent_boot_node(h: Harness) -> None:
    decision = h.send(BotReady())
    assert h.types() == ["bot_ready", "exam_state_changed"]
    assert h.events[0].source.value == "bot"
    assert h.of("exam_state_changed")[0].toState == ExamState.SCAFFOLDING
    assert decision.effects == (EnterBootNode(),)
    assert h.node is None


def test_candidate_ready_starts_the_exam_at_the_initial_node(h: Harness) -> None:
    h.start()
    states = [(e.fromState, e.toState) for e in h.of("exam_state_changed")]
    assert states == [
        (ExamState.SCHEDULED, ExamState.SCAFFOLDING),
        (ExamState.SCAFFOLDING, ExamState.READY),
        (ExamState.READY, ExamState.IN_PROGRESS),
    ]
    entered = h.of("node_entered")
    assert [e.nodeId for e in entered] == ["warmup"]
    assert entered[0].timeBudgetSec == 90 and entered[0].timeBudgetMs == 90_000
    enter = [e for e in h.effects if isinstance(e, EnterNode)]
    assert enter[0].node_id == "warmup" and enter[0].context_strategy == "reset"
    assert h.texts()[0].startswith("Hello, and welcome.")


def test_inputs_before_the_start_are_not_recorded(h: Harness) -> None:
    h.send(BotReady())
    h.send(TranscriptSegment("candidate", "testing my microphone", 0.9))
    h.send(Observation(obs("hello")))
    assert "transcript_final" not in h.types()
    assert h.node is None


def test_start_twice_is_ignored(h: Harness) -> None:
    h.start()
    before = len(h.events)
    decision = h.send(CandidateReady())
    assert decision.status == "ignored" and len(h.events) == before


def test_seq_is_one_to_n_and_ids_are_unique(h: Harness) -> None:
    h.to_q1()
    assert [e.seq for e in h.events] == list(range(1, len(h.events) + 1))
    assert len({e.eventId for e in h.events}) == len(h.events)


def test_same_inputs_give_the_same_events_byte_for_byte() -> None:
    runs = []
    for _ in range(2):
        harness = Harness().to_q1()
        harness.say("It settles the nearest unvisited vertex.", at=20)
        harness.observe(at=21, signals=[signal("tgt-greedy-choice", excerpt="nearest unvisited")])
        runs.append([e.to_wire() for e in harness.events])
    assert runs[0] == runs[1]


def _finish_exam(h: Harness) -> None:
    h.to_q1()
    h.say("It settles the nearest unvisited vertex and relaxes its edges.", at=20)
    h.say("With a binary heap that is O((V+E) log V).", at=30)
    h.observe(
        at=31,
        done=True,
        signals=[
            signal("tgt-greedy-choice", excerpt="settles the nearest unvisited vertex"),
            signal("tgt-complexity", excerpt="binary heap"),
        ],
        spoken="Thank you.",
    )
    assert h.node in ("scn-delivery-routes", "scn-network-latency")
    scenario = h.node
    target = (
        "tgt-choose-algorithm"
        if scenario == "scn-delivery-routes"
        else ("tgt-choose-algorithm-net")
    )
    h.say("I would model it as a weighted graph and use Dijkstra.", at=60)
    h.say("Travel times are never negative so Dijkstra works.", at=70)
    h.observe(at=71, done=True, signals=[signal(target, excerpt="never negative")])
    assert h.node == "wrapup"
    h.say("No, nothing to add.", at=90)
    h.observe(at=91, done=True, spoken="Thank you for your answers.")


def test_a_normal_end_completes_the_exam_once_with_metrics(h: Harness) -> None:
    _finish_exam(h)
    assert h.node == "end-normal"
    completed = h.of("exam_completed")
    assert len(completed) == 1
    done = completed[0]
    assert done.reason == "all_nodes_visited"
    assert done.totalElapsedMs == 91_000
    assert done.nodesVisited[0] == "warmup" and done.nodesVisited[-1] == "end-normal"
    assert done.totalEvidenceSignals == 3
    metrics = done.interactionMetrics
    assert metrics.candidateTurnCount == 6
    assert done.totalTurns == metrics.candidateTurnCount + metrics.examinerTurnCount
    assert h.of("exam_state_changed")[-1].toState == ExamState.COMPLETED
    assert any(isinstance(e, EndSession) for e in h.effects)
    closing = [s for s in h.spoken if s.purpose == "closing"]
    assert closing and closing[0].text.startswith("Thank you. That concludes")


def test_nothing_but_the_end_node_closing_follows_exam_completed(h: Harness) -> None:
    _finish_exam(h)
    index = h.types().index("exam_completed")
    after = h.events[index + 1 :]
    assert {e.type.value for e in after} <= {
        "examiner_utterance_started",
        "examiner_utterance_final",
    }
    assert all(e.payload.nodeId == "end-normal" for e in after)
    count = len(h.events)
    h.say("hello?", at=200)
    h.observe(at=201)
    h.command("pause", "late-pause")
    h.tick(5000)
    assert len(h.events) == count


def test_the_bot_speaks_only_texts_the_controller_issued(h: Harness) -> None:
    _finish_exam(h)
    finals = [e.text for e in h.of("examiner_utterance_final")]
    issued = [s.text for s in h.spoken]
    assert finals and set(finals) <= set(issued)


def test_ticks_without_due_timers_emit_nothing(h: Harness) -> None:
    h.start()
    before = len(h.events)
    h.tick(1)
    h.send(Tick())
    assert len(h.events) == before


def test_speak_effects_are_validated_and_short(h: Harness) -> None:
    _finish_exam(h)
    for speak in (e for e in h.effects if isinstance(e, Speak)):
        assert 0 < len(speak.text) <= 500


def test_an_internal_failure_rolls_back_and_reports(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h.to_q1()
    h.say("It picks the closest vertex.", at=20)
    before = h.controller.state.events_applied

    def boom(step: object, args: object) -> None:
        from ioa.runtime.step import Step

        assert isinstance(step, Step)
        step.emit(h.of("node_entered")[-1])  # an event that must not survive the failure
        raise RuntimeError("bug")

    monkeypatch.setattr("ioa.runtime.controller.handle_observation", boom)
    decision = h.observe(at=21)
    assert decision.result["status"] == "error"
    assert [e.type.value for e in decision.events] == ["system_error"]
    assert decision.events[0].payload.code == "controller_failure"
    assert h.controller.state.events_applied == before + 1
    assert h.replayed_equal()


def test_malformed_inputs_raise_without_changing_the_state(h: Harness) -> None:
    from ioa.errors import InvalidInputError
    from ioa.runtime import Command

    h.to_q1()
    state_before = len(h.events)
    with pytest.raises(InvalidInputError):
        h.send(TranscriptSegment("candidate", "hello", 1.5))
    with pytest.raises(InvalidInputError):
        h.send(Command("cmd-x", "dance"))
    with pytest.raises(InvalidInputError):
        h.instruct("queued", "   ")
    assert len(h.events) == state_before
    assert h.replayed_equal()
