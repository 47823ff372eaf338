"""Proctor instructions (beats chapter) and proctor actions; bot and transport faults."""

from __future__ import annotations

from ioa.runtime import (
    EnterAdminNode,
    EnterNode,
    Fault,
    FaultCleared,
    InjectContext,
    PromptLlm,
    ReturnToNode,
    texts,
)
from tests.ioa.runtime.harness import Harness


def test_queued_instruction_joins_the_context_and_is_delivered_after_the_next_turn(
    h: Harness,
) -> None:
    h.to_q1()
    decision = h.instruct("queued", "Remind the candidate to speak a little louder.")
    issued = h.of("proctor_instruction")[-1]
    assert issued.status == "issued" and issued.mode == "queued" and issued.nodeId == "q-dijkstra"
    inject = [e for e in decision.effects if isinstance(e, InjectContext)]
    assert inject and inject[0].persistent and "louder" in inject[0].text
    assert not any(isinstance(e, EnterAdminNode) for e in decision.effects)
    h.say("It picks the closest vertex.", at=20)
    h.observe(at=21, spoken="Thanks. Could you speak a little louder, please?")
    delivered = h.of("proctor_instruction")[-1]
    assert delivered.status == "delivered" and delivered.instructionId == issued.instructionId


def test_undelivered_queued_instruction_travels_to_the_next_node(h: Harness) -> None:
    h.start()
    h.instruct("queued", "Mention that the exam has three parts.")
    h.say("Hello there.", at=5)
    h.at(6)
    # the warm-up completes at this observation, so the instruction is delivered there
    h.observe(done=True, spoken="Thank you, let us begin.")
    assert h.of("proctor_instruction")[-1].status == "delivered"
    h.instruct("queued", "Ask them to keep answers short.")
    h.at(400)
    h.tick(400)
    enter = [e for e in h.effects if isinstance(e, EnterNode)][-1]
    assert any("keep answers short" in text for text in enter.task_additions)


def test_immediate_instruction_runs_through_the_admin_node_and_returns(h: Harness) -> None:
    h.to_q1()
    decision = h.instruct("immediate", "Tell the candidate their camera is off.")
    admin = [e for e in decision.effects if isinstance(e, EnterAdminNode)]
    assert admin and admin[0].text == "Tell the candidate their camera is off."
    assert any(isinstance(e, PromptLlm) for e in decision.effects)
    run = h.observe(at=10, spoken="I'm sorry to interrupt: your camera seems to be off.")
    assert h.texts()[-1] == "I'm sorry to interrupt: your camera seems to be off."
    assert h.of("proctor_instruction")[-1].status == "delivered"
    assert ReturnToNode("q-dijkstra") in run.effects
    assert h.of("evidence_signal") == [] and h.of("follow_up_used") == []


def test_immediate_instructions_chain(h: Harness) -> None:
    h.to_q1()
    h.instruct("immediate", "First instruction.")
    h.instruct("immediate", "Second instruction.")
    first = h.observe(at=10, spoken="Here is the first message.")
    assert any(
        isinstance(e, EnterAdminNode) and e.text == "Second instruction." for e in first.effects
    )
    second = h.observe(at=11, spoken="Here is the second message.")
    assert ReturnToNode("q-dijkstra") in second.effects
    assert [i.status for i in h.of("proctor_instruction")] == [
        "issued",
        "issued",
        "delivered",
        "delivered",
    ]


def test_instructions_still_pending_at_the_end_are_cancelled(h: Harness) -> None:
    h.to_q1()
    h.instruct("queued", "Something for later.")
    h.proctor("terminate", reason="fire alarm")
    statuses = [i.status for i in h.of("proctor_instruction")]
    assert statuses == ["issued", "cancelled"]
    assert h.of("exam_completed")[0].reason == "proctor_ended"
    assert h.node == "end-terminated"


def test_proctor_pause_and_resume(h: Harness) -> None:
    h.to_q1()
    h.proctor("pause")
    assert h.of("exam_state_changed")[-1].reason == "proctor_pause"
    assert h.texts()[-1].startswith("Your proctor has paused")
    h.proctor("resume")
    assert h.of("exam_state_changed")[-1].reason == "proctor_resume"


def test_proctor_pause_command_envelope_is_a_proctor_action(h: Harness) -> None:
    h.to_q1()
    h.command("pause", "cmd-proctor-pause", source="proctor")
    assert h.of("exam_state_changed")[-1].reason == "proctor_pause"
    assert h.of("candidate_command_received") == []


def test_transient_fault_pauses_and_recovers(h: Harness) -> None:
    h.to_q1()
    h.send(Fault("network", "transient", "packet loss"))
    assert h.of("system_error")[-1].code == "network_fault"
    assert h.of("recovery_started")[-1].recoveryType == "network_issue"
    assert h.state.exam_state.value == "paused"
    h.send(FaultCleared())
    assert h.state.exam_state.value == "in_progress"
    h.say("Can you hear me now? It picks the closest vertex.", 0.9, at=30)
    assert h.of("recovery_resolved")[-1].resolution == "candidate_resumed"


def test_fatal_fault_ends_at_the_technical_failure_node(h: Harness) -> None:
    h.to_q1()
    h.send(Fault("tts", "fatal", "TTS provider down"))
    assert h.of("system_error")[0].severity == "fatal"
    assert h.node == "end-technical"
    assert h.of("exam_completed")[0].reason == "system_error"
    assert h.state.exam_state.value == "aborted"


def test_repeated_transient_faults_never_end_the_exam(h: Harness) -> None:
    # Issue #30: this used to escalate the fourth fault to the technical end, so a provider
    # that flapped for a few seconds cost the candidate their exam. Only the outage limit
    # (tests/ioa/runtime/test_outage.py) ends an exam for a fault now.
    h.to_q1()
    for _ in range(4):
        h.send(Fault("network", "transient"))
        h.send(FaultCleared())
    assert h.node == "q-dijkstra"
    assert h.of("exam_completed") == []
    assert h.state.exam_state.value == "in_progress"


def test_malformed_observation_gives_system_error_and_fallback(h: Harness) -> None:
    h.to_q1()
    count = len(h.spoken)
    decision = h.send(__import__("ioa.runtime", fromlist=["Observation"]).Observation({"x": 1}))
    assert h.of("system_error")[-1].code == "invalid_observation"
    assert decision.result["status"] == "error"
    assert len(h.spoken) == count


def test_admin_instruction_survives_a_node_change(h: Harness) -> None:
    h.to_q1()
    h.instruct("immediate", "Tell the candidate to check their microphone.")
    assert h.controller.next_deadline_ms() == h.clock.current_ms + 360_000  # no silence prompts
    h.tick(6 + 360)  # the node's time runs out meanwhile
    assert h.node != "q-dijkstra"
    reactivated = [e for e in h.effects if isinstance(e, EnterAdminNode)]
    assert len(reactivated) >= 2
    h.observe(at=370, spoken="Could you check your microphone, please?")
    assert h.of("proctor_instruction")[-1].status == "delivered"


def test_instruction_before_the_start_waits_for_the_first_node(h: Harness) -> None:
    from ioa.runtime import BotReady, CandidateReady

    h.send(BotReady())
    h.instruct("immediate", "Welcome them warmly.")
    assert not any(isinstance(e, EnterAdminNode) for e in h.effects)
    decision = h.send(CandidateReady())
    assert any(isinstance(e, EnterAdminNode) for e in decision.effects)


def test_an_immediate_instruction_sent_while_paused_is_spoken_right_after_resume(
    h: Harness,
) -> None:
    """Issue 15: it was shown as applied but never spoken, then swallowed the candidate's next
    turn after the resume."""
    h.to_q1()
    h.proctor("pause")
    before = len(h.effects)
    decision = h.instruct("immediate", "Ask the candidate to move closer to the microphone.")
    assert decision.result.get("deferred") is True
    assert not [e for e in h.effects[before:] if isinstance(e, EnterAdminNode)]
    h.proctor("resume")
    admin = [e for e in h.effects[before:] if isinstance(e, EnterAdminNode)]
    assert len(admin) == 1
    h.observe(spoken="Could you move a little closer to your microphone, please?")
    delivered = [i for i in h.of("proctor_instruction") if i.status == "delivered"]
    assert len(delivered) == 1
    assert h.state.pending_instructions() == []
    # The candidate's next turn is theirs: the LLM's answer to it is not an admin run.
    h.say("It keeps a priority queue of tentative distances.", at=60)
    decision = h.observe(at=61, spoken="What happens with a negative edge?", follow_up=True)
    assert decision.status != "admin_instruction_delivered"
    assert h.texts()[-1] == "What happens with a negative edge?"
    assert len([i for i in h.of("proctor_instruction") if i.status == "delivered"]) == 1


def test_only_a_proctor_lifts_a_proctor_pause(h: Harness) -> None:
    h.to_q1()
    h.proctor("pause")
    said = len(h.spoken)
    h.command("resume")
    assert h.state.exam_state == "paused"
    refused = h.of("candidate_command_received")[-1]
    assert refused.accepted is False and "proctor" in (refused.rejectionReason or "")
    assert [s.text for s in h.spoken[said:]] == [texts.ENGLISH.wait_for_proctor]
    h.say("I'm ready to continue.", at=30)
    assert h.state.exam_state == "paused"
    h.proctor("resume")
    assert h.state.exam_state == "in_progress"


def test_the_candidate_lifts_their_own_pause(h: Harness) -> None:
    h.to_q1()
    h.command("pause", command_id="c1")
    h.command("resume", command_id="c2")
    assert h.state.exam_state == "in_progress"
