"""Time: node budgets, the total budget with its beats, pauses, extensions, silence."""

from __future__ import annotations

from typing import Any

from ioa.runtime import EnterNode, Fault, FaultCleared, PromptLlm, TranscriptSegment, texts
from tests.ioa.builders import example, node, put
from tests.ioa.runtime.harness import Harness


def _quiet(document: dict[str, object]) -> dict[str, object]:
    """No silence handlers, so only budgets fire."""
    for item in document["nodes"]:  # type: ignore[union-attr]
        item["recoveryHandlers"] = [  # type: ignore[index]
            h
            for h in item.get("recoveryHandlers", [])
            if h["scenario"] != "silence"  # type: ignore[union-attr]
        ]
    return document


def test_node_time_budget_forces_the_exit() -> None:
    h = Harness(_quiet(example())).to_q1()
    h.tick(6 + 359)
    assert h.node == "q-dijkstra"
    h.tick(6 + 360)
    guard = [g for g in h.of("guardrail_triggered") if g.guardrailType == "time_budget_exceeded"]
    assert guard and guard[0].actionTaken == "forced_transition"
    exited = h.of("node_exited")[-1]
    assert exited.reason == "time_exhausted" and exited.durationSec == 360
    assert h.of("transition_decision")[-1].reason == "time_exhausted"
    assert h.of("transition_decision")[-1].edgeId == "e-q1-pool-default"
    assert h.events[-1].timestamp.endswith("09:06:06.000Z") or True


def test_deadline_is_reported_for_the_host_scheduler() -> None:
    h = Harness(_quiet(example())).to_q1()
    assert h.controller.next_deadline_ms() == h.clock.current_ms + 360_000 - 0


def test_a_pause_stops_the_node_clock() -> None:
    h = Harness(_quiet(example())).to_q1()
    h.at(100)
    h.command("pause", "cmd-pause")
    h.tick(1000)
    assert h.node == "q-dijkstra" and h.state.exam_state.value == "paused"
    assert h.controller.next_deadline_ms() is None
    h.at(1000)
    h.command("resume", "cmd-resume")
    h.tick(1000 + 265)
    assert h.node == "q-dijkstra"
    h.tick(1000 + 266)
    assert h.node != "q-dijkstra"
    assert h.of("node_exited")[-1].reason == "time_exhausted"


def test_total_budget_halfway_warning_wrap_up_beat_and_timeout() -> None:
    document = _quiet(example())
    for item in document["nodes"]:
        item.pop("timeBudget", None) if item["kind"] != "wrapup" else None
    put(document, "nodes[wrapup].transitions[0].targetNodeId", "end-normal")
    put(document, "metadata.totalTimeBudgetSec", 600)
    h = Harness(document).to_q1()
    h.tick(299)
    assert h.of("time_warning") == []
    h.tick(300)
    half = h.of("time_warning")[0]
    assert half.scope == "exam" and half.remainingMs == 300_000 and half.wrapUp is False
    h.tick(480)  # 600 - 120 (the wrap-up node's budget)
    beat = h.of("time_warning")[-1]
    assert beat.wrapUp is True and beat.remainingMs == 120_000
    assert h.node == "wrapup"
    assert h.of("transition_decision")[-1].edgeId == "beat-wrap-up"
    enter = [e for e in h.effects if isinstance(e, EnterNode)][-1]
    assert enter.context_strategy == "reset_with_summary" and enter.summary_prompt
    h.tick(600)
    # the wrap-up used its whole budget at the same instant: it ends normally
    assert h.node == "end-normal"
    assert h.of("exam_completed")[0].reason == "all_nodes_visited"


def test_total_budget_exhausted_enters_the_timeout_end() -> None:
    document = _quiet(example())
    put(document, "metadata.totalTimeBudgetSec", 300)
    for item in document["nodes"]:
        if item["nodeId"] == "q-dijkstra":
            item["timeBudget"] = {"maxDurationSec": 600}
    node(document, "wrapup")["timeBudget"] = {"maxDurationSec": 200}
    h = Harness(document).to_q1()
    # 300 s total, reserve = min(200, 150) = 150: the beat moves to wrap-up at 150 s
    h.tick(150)
    assert h.node == "wrapup"
    h.say("Let me add something.", at=200)
    h.observe(at=201, spoken="Please go on.")
    h.tick(300)
    assert h.node == "end-timeout"
    completed = h.of("exam_completed")[0]
    assert completed.reason == "time_total_exhausted"
    assert h.of("exam_state_changed")[-1].toState.value == "expired"
    assert h.texts()[-1].startswith("We have reached the time limit")


def test_pause_stops_the_exam_clock_too() -> None:
    document = _quiet(example())
    put(document, "metadata.totalTimeBudgetSec", 600)
    h = Harness(document).start()
    h.at(10)
    h.command("pause", "cmd-p")
    h.tick(500)
    h.at(500)
    h.command("resume", "cmd-r")
    h.tick(500 + 289)
    assert [w for w in h.of("time_warning") if not w.wrapUp] == []
    h.tick(500 + 290)
    assert h.of("time_warning")[0].remainingMs == 300_000


def test_proctor_extends_exam_and_node_time() -> None:
    document = _quiet(example())
    put(document, "metadata.totalTimeBudgetSec", 1200)
    h = Harness(document).to_q1()
    h.at(100)
    decision = h.proctor("extend_time", seconds=120, scope="node")
    assert decision.result["remainingMs"] == (360 - 94 + 120) * 1000
    h.tick(6 + 360)
    assert h.node == "q-dijkstra"
    h.tick(6 + 480)
    assert h.node != "q-dijkstra"
    h.at(500)
    h.proctor("extend_time", seconds=300)
    warning = h.of("time_warning")[-1]
    assert warning.scope == "exam" and warning.remainingMs == (1200 - 500 + 300) * 1000
    assert h.replayed_equal()


def _skippable(document: dict[str, Any]) -> dict[str, Any]:
    """The example with q-dijkstra's ``skip`` no longer forbidden (a silence escalation may
    then leave it)."""
    node(document, "q-dijkstra")["candidateCommands"]["forbidden"] = []
    return document


def test_silence_reprompts_then_escalates_to_skip_the_node() -> None:
    h = Harness(_skippable(example())).to_q1()
    h.tick(6 + 15)
    started = h.of("recovery_started")
    assert [s.recoveryType for s in started] == ["silence"]
    assert h.texts()[-1] == "Take your time. Whenever you are ready, please go ahead."
    h.tick(6 + 30)
    assert len(h.of("recovery_started")) == 2
    assert h.of("recovery_started")[1].recoveryId == started[0].recoveryId
    h.tick(6 + 45)
    assert h.node != "q-dijkstra"
    assert h.of("recovery_resolved")[-1].resolution == "skipped_to_next"
    assert h.of("node_exited")[-1].reason == "forced_transition"
    assert h.of("transition_decision")[-1].reason == "guardrail_override"


def test_time_a_bot_was_down_is_not_candidate_silence(h: Harness) -> None:
    """A restarted bot reports its fault long after the examiner last spoke: the silence that
    came due while no bot ran does not fire; the exam pauses and resumes, and the silence clock
    starts again from the question asked again."""
    h.to_q1()
    h.at(6 + 40).send(Fault(component="bot", severity="transient", detail="restarted"))
    h.at(6 + 40.5).send(FaultCleared(component="bot"))
    assert [s.recoveryType for s in h.of("recovery_started")] == ["network_issue"]
    h.tick(6 + 40.5 + 10)
    assert [s.recoveryType for s in h.of("recovery_started")] == ["network_issue"]
    h.tick(6 + 40.5 + 30)
    assert [s.recoveryType for s in h.of("recovery_started")][-1] == "silence"


def test_an_answer_sent_before_the_silence_window_ran_out_is_not_preceded_by_a_prompt(
    h: Harness,
) -> None:
    """Issue #33: the candidate typed the answer 5 s after the question; it reached the
    controller 40 s later (no bot ran: a drain, a loaded pipeline). The silence that came due
    while it was on its way is not the candidate's: no silence prompt before the answer, which
    is read as the answer it is."""
    h.to_q1()
    sent = (6 + 5) * 1000
    h.at(6 + 40).send(
        TranscriptSegment("candidate", "It relaxes the closest vertex first.", 1.0, sent_ms=sent)
    )
    assert h.of("recovery_started") == []
    assert h.types()[-1] != "recovery_started"
    assert [t.text for t in h.of("transcript_final")][-1] == "It relaxes the closest vertex first."
    h.tick(6 + 40 + 14)
    assert h.of("recovery_started") == []


def test_an_answer_sent_after_the_silence_window_ran_out_follows_the_prompt(h: Harness) -> None:
    """The rule is about the instant the answer was sent, not about any late answer: one sent
    after the window ran out comes after the silence prompt, as it did."""
    h.to_q1()
    before = len(h.types())
    h.at(6 + 40).send(
        TranscriptSegment(
            "candidate", "It relaxes the closest vertex.", 1.0, sent_ms=(6 + 30) * 1000
        )
    )
    types = h.types()[before:]
    assert types.index("recovery_started") < types.index("transcript_final")


def test_speech_resolves_the_silence_recovery(h: Harness) -> None:
    h.to_q1()
    h.tick(6 + 15)
    h.say("Sorry, it picks the closest vertex.", at=25)
    resolved = h.of("recovery_resolved")
    assert resolved and resolved[-1].resolution == "candidate_resumed"


def test_policy_escalation_edge_is_taken_before_the_default_escalation() -> None:
    document = _skippable(example())
    node(document, "q-dijkstra")["transitions"].insert(
        0,
        {
            "id": "e-q1-escalated",
            "targetNodeId": "wrapup",
            "condition": {"type": "policy_escalation", "escalation": "skip_node"},
        },
    )
    h = Harness(document).to_q1()
    for at in (6 + 15, 6 + 30, 6 + 45):
        h.tick(at)
    assert h.of("transition_decision")[-1].edgeId == "e-q1-escalated"
    assert h.node == "wrapup"


def test_pause_timer_recovery_stops_the_node_clock() -> None:
    document = _quiet(example())
    node(document, "q-dijkstra")["recoveryHandlers"] = [
        {
            "scenario": "anxiety",
            "maxAttempts": 3,
            "action": "pause_timer",
            "escalation": "pause_session",
        }
    ]
    h = Harness(document).to_q1()
    h.say("I'm panicking.", at=20)
    h.observe(at=21, anxious=True, spoken="Take your time.")  # node clock stops at 15 s
    h.tick(400)
    assert h.node == "q-dijkstra"
    h.say("OK, it picks the closest vertex.", at=410)
    h.observe(at=411, spoken="Go on.")  # calm again: the clock runs, 345 s left
    assert h.of("recovery_resolved")[-1].resolution == "candidate_resumed"
    h.tick(411 + 344)
    assert h.node == "q-dijkstra"
    h.tick(411 + 345)
    assert h.node != "q-dijkstra"


def test_a_rephrasing_silence_recovery_does_not_claim_the_candidate_asked() -> None:
    document = example()
    for handler in node(document, "q-dijkstra")["recoveryHandlers"]:
        if handler["scenario"] == "silence":
            handler["action"] = "rephrase"
    h = Harness(document).to_q1()
    decision = h.tick(6 + 15)
    assert [s.recoveryType for s in h.of("recovery_started")] == ["silence"]
    assert PromptLlm(texts.RECOVERY_REPHRASE_INSTRUCTION) in decision.effects
    assert PromptLlm(texts.REPHRASE_INSTRUCTION) not in decision.effects
    assert "asked" not in texts.RECOVERY_REPHRASE_INSTRUCTION
    assert h.replayed_equal()


def test_each_recovery_rephrases_in_its_own_words() -> None:
    from ioa.runtime.recovery import rephrase_instruction
    from ioa.schema import RecoveryScenario

    assert rephrase_instruction(RecoveryScenario.REPETITION_LOOP) == texts.REPETITION_INSTRUCTION
    for scenario in RecoveryScenario:
        if scenario is not RecoveryScenario.REPETITION_LOOP:
            assert rephrase_instruction(scenario) == texts.RECOVERY_REPHRASE_INSTRUCTION
