"""Candidate commands from three sources (spec-notes §3): the policy gate, the always-allowed
welfare commands, deduplication, the safety-net classifier, each command's action."""

from __future__ import annotations

import pytest

from ioa.runtime import AdjustSpeech, PromptLlm, texts
from ioa.runtime.commands import gate
from ioa.schema import CandidateCommandPolicy, CandidateCommandType
from tests.factories import example_document
from tests.ioa.builders import example, put
from tests.ioa.runtime.harness import Harness, signal


def _received(h: Harness) -> list[object]:
    return h.of("candidate_command_received")


def _to_scenario(h: Harness) -> None:
    h.to_q1()
    h.say("It settles the nearest unvisited vertex and relaxes its edges.", at=20)
    h.say("With a binary heap.", at=30)
    h.observe(
        at=31,
        done=True,
        signals=[signal("tgt-greedy-choice", excerpt="settles the nearest unvisited vertex")],
    )
    assert h.node in ("scn-delivery-routes", "scn-network-latency")


def test_forbidden_skip_is_refused_with_the_package_reason(h: Harness) -> None:
    h.to_q1()
    h.say("Can we skip this question?", at=20)
    decision = h.observe(at=21, command="skip", commandDetected="skip")
    received = _received(h)[-1]
    assert received.command == "skip" and received.accepted is False
    assert received.rejectionReason == "Every candidate answers this core question."
    assert received.origin == "llm"
    guard = h.of("guardrail_triggered")[-1]
    assert guard.guardrailType == "command_refused" and guard.actionTaken == "command_refused"
    assert h.node == "q-dijkstra"
    assert h.texts()[-1].startswith("I'm sorry, that is not available")
    assert decision.result["accepted"] is False


def test_allowed_skip_takes_the_candidate_command_edge(h: Harness) -> None:
    _to_scenario(h)
    scenario = h.node
    h.say("Can we skip this question?", at=40)
    h.observe(at=41, commandDetected="skip")
    assert _received(h)[-1].accepted is True
    assert h.node == scenario and h.texts()[-1] == texts.ENGLISH.skip_confirm
    h.say("Yes, please.", at=45)
    h.observe(at=46, commandDetected="skip")
    assert _received(h)[-1].commandType == "skip_confirmation"
    decision = h.of("transition_decision")[-1]
    assert decision.fromNodeId == scenario and decision.reason == "candidate_skip"
    assert decision.edgeId in ("e-scn1-skip", "e-scn2-skip")
    assert h.of("node_exited")[-1].reason == "candidate_skip"
    assert h.node == "wrapup"


def test_duplicated_command_id_is_a_no_op(h: Harness) -> None:
    h.to_q1()
    first = h.command("repeat_question", "cmd-42", nodeId="q-dijkstra")
    count = len(h.events)
    second = h.command("repeat_question", "cmd-42", nodeId="q-dijkstra")
    assert first.status == "command_dispatched" and second.status == "duplicate"
    assert len(h.events) == count and second.effects == ()


def test_repeat_re_speaks_the_last_question(h: Harness) -> None:
    h.to_q1()
    h.say("A priority queue.", at=20)
    h.observe(at=21, follow_up=True, spoken="What does the queue hold?")
    h.command("repeat_question", "cmd-r", nodeId="q-dijkstra")
    assert h.texts()[-1] == "What does the queue hold?"


def test_always_allowed_commands_pass_an_empty_policy() -> None:
    empty = CandidateCommandPolicy()
    for command in (
        "pause",
        "resume",
        "raise_hand",
        "report_audio_issue",
        "emergency_stop",
        "finish",
    ):
        assert gate(CandidateCommandType(command), empty).allowed
    assert not gate(CandidateCommandType.REPEAT, empty).allowed
    assert not gate(CandidateCommandType.SKIP, empty).allowed
    assert gate(CandidateCommandType.HELP, empty).allowed  # outside the POL-002 vocabulary


def test_command_not_allowed_at_the_node_is_refused(h: Harness) -> None:
    h.start()
    h.command("request_rephrase", "cmd-rp", nodeId="warmup")
    assert _received(h)[-1].accepted is False
    assert "not among the commands" in _received(h)[-1].rejectionReason


def test_pause_stops_and_resume_restarts(h: Harness) -> None:
    h.to_q1()
    h.command("pause", "cmd-p")
    assert h.state.exam_state.value == "paused"
    assert h.of("exam_state_changed")[-1].reason == "candidate_pause"
    h.command("repeat_question", "cmd-x", nodeId="q-dijkstra")
    assert _received(h)[-1].accepted is False
    assert _received(h)[-1].rejectionReason == "the examination is paused"
    h.say("I'm ready to continue.", at=40)
    assert h.state.exam_state.value == "in_progress"
    assert _received(h)[-1].origin == "classifier" and _received(h)[-1].command == "resume"
    assert h.texts()[-2:] == ["Welcome back. Let's continue.", h.texts()[-1]]


def test_resume_when_not_paused_is_refused(h: Harness) -> None:
    h.to_q1()
    h.command("resume", "cmd-res")
    assert _received(h)[-1].accepted is False


def test_emergency_stop_halts_at_once(h: Harness) -> None:
    h.to_q1()
    h.command("emergency_stop", "cmd-stop", reason="distress")
    types = h.types()
    assert types.index("candidate_command_received") < types.index("recovery_started")
    started = h.of("recovery_started")[-1]
    assert started.recoveryType == "candidate_distress"
    assert h.of("recovery_resolved")[-1].resolution == "exam_terminated"
    assert h.node == "end-terminated"
    completed = h.of("exam_completed")[0]
    assert completed.reason == "emergency_stop"
    assert h.of("exam_state_changed")[-1].toState.value == "aborted"
    assert h.texts()[-1].startswith("The examination has been stopped.")


def test_emergency_stop_during_scaffolding_aborts(h: Harness) -> None:
    from ioa.runtime import BotReady

    h.send(BotReady())
    h.command("emergency_stop", "cmd-stop")
    assert h.of("exam_completed")[0].reason == "emergency_stop"
    assert h.state.exam_state.value == "aborted"


def test_llm_finish_asks_for_confirmation_first(h: Harness) -> None:
    h.to_q1()
    h.say("I want to end the exam.", at=20)
    h.observe(at=21, commandDetected="finish")
    assert h.texts()[-1].startswith("Do you want to end the examination now?")
    assert h.state.node.finish_pending is not None
    h.say("Yes.", at=25)
    h.observe(at=26, commandDetected="finish")
    assert h.of("exam_completed")[0].reason == "candidate_ended"
    assert h.node == "end-normal"
    assert _received(h)[-1].commandType == "finish_confirmation"


def test_declined_finish_is_recorded_and_the_exam_goes_on(h: Harness) -> None:
    h.to_q1()
    h.say("I want to end the exam.", at=20)
    h.observe(at=21, commandDetected="finish")
    h.say("No, sorry, let's go on.", at=25)
    h.observe(at=26, spoken="Of course. Please continue.")
    declined = _received(h)[-1]
    assert declined.commandType == "finish_confirmation" and declined.accepted is False
    assert h.state.node.finish_pending is None
    assert h.of("exam_completed") == []
    assert h.replayed_equal()


def test_end_exam_button_ends_without_a_second_question(h: Harness) -> None:
    h.to_q1()
    h.command("end_exam_requested", "cmd-end", requestedBy="candidate")
    assert h.of("exam_completed")[0].reason == "candidate_ended"


def test_proctor_end_request_terminates(h: Harness) -> None:
    h.to_q1()
    h.command("end_exam_requested", "cmd-end", source="proctor", requestedBy="proctor")
    assert h.of("exam_completed")[0].reason == "proctor_ended"
    assert h.node == "end-terminated"


def test_classifier_catches_a_command_the_llm_missed(h: Harness) -> None:
    h.to_q1()
    h.say("A priority queue.", at=20)
    h.observe(at=21, follow_up=True, spoken="What does the queue hold?")
    h.say("Sorry, could you repeat the question?", at=30)
    h.observe(at=31, spoken="The queue holds the vertices.")
    received = _received(h)[-1]
    assert received.origin == "classifier" and received.command == "repeat"
    assert h.texts()[-1] == "What does the queue hold?"
    assert "The queue holds the vertices." not in h.texts()


def test_a_turn_s_command_is_dispatched_once(h: Harness) -> None:
    h.to_q1()
    h.say("What do you mean by relaxing?", at=20)
    first = h.observe(at=21, commandDetected="clarification")
    assert any(isinstance(e, PromptLlm) for e in first.effects)
    second = h.observe(at=22, spoken="Relaxing means updating a tentative distance.")
    assert len(_received(h)) == 1
    assert second.status == "continue"
    assert h.texts()[-1] == "Relaxing means updating a tentative distance."


def test_slow_down_adjusts_speech(h: Harness) -> None:
    h.to_q1()
    h.say("Please slow down.", at=20)
    decision = h.observe(at=21, commandDetected="slow_down")
    assert AdjustSpeech("rate", "slower") in decision.effects


@pytest.mark.parametrize(
    ("command", "payload", "expect_text"),
    [
        ("raise_hand", {"reason": "mic"}, "Thank you. Your proctor has been notified."),
        (
            "report_audio_issue",
            {"issueType": "echo", "severity": "minor"},
            "Thank you for letting me know. Can you hear me clearly now?",
        ),
        ("thinking_aloud", {"nodeId": "q-dijkstra"}, None),
        ("signal_confidence", {"nodeId": "q-dijkstra", "confidenceLevel": "confident"}, None),
        ("challenge_premise", {"nodeId": "q-dijkstra", "text": "Weights may be negative."}, None),
        ("request_clarification", {"nodeId": "q-dijkstra"}, None),
    ],
)
def test_envelope_commands_are_accepted_and_carried_out(
    h: Harness, command: str, payload: dict[str, object], expect_text: str | None
) -> None:
    h.to_q1()
    spoken_before = len(h.spoken)
    h.command(command, f"cmd-{command}", **payload)
    assert _received(h)[-1].accepted is True
    if expect_text is None:
        assert len(h.spoken) == spoken_before
    else:
        assert h.texts()[-1] == expect_text


def test_thinking_aloud_suspends_silence_prompts(h: Harness) -> None:
    h.to_q1()
    h.command("thinking_aloud", "cmd-t", nodeId="q-dijkstra")
    h.tick(60)
    assert h.of("recovery_started") == []
    h.say("OK, I think it is greedy.", at=70)
    h.observe(at=71, follow_up=True, spoken="Why greedy?")
    h.tick(100)
    assert h.of("recovery_started")[-1].recoveryType == "silence"


def test_revise_earlier_answer(h: Harness) -> None:
    h.to_q1()
    h.command("revise_earlier_answer", "cmd-rev", targetNodeId="warmup")
    assert _received(h)[-1].accepted is True
    assert h.texts()[-1].startswith("Noted.")
    h.command("revise_earlier_answer", "cmd-rev2", targetNodeId="wrapup")
    assert _received(h)[-1].accepted is False


def test_a_skip_in_the_candidates_words_waits_for_their_yes(h: Harness) -> None:
    """Issue #31: consequential commands in the candidate's words are confirmed first."""
    _to_scenario(h)
    scenario = h.node
    h.say("Sorry, can we skip this question?", at=40)
    h.observe(at=41, commandDetected="skip", spoken="Sure, let's skip it.")
    assert h.node == scenario
    assert h.texts()[-1] == texts.ENGLISH.skip_confirm
    assert "Sure, let's skip it." not in h.texts()
    h.say("Yeah.", at=45)
    h.observe(at=46)
    assert h.node != scenario
    assert h.of("node_exited")[-1].reason == "candidate_skip"
    assert h.replayed_equal()


def test_a_no_cancels_the_skip_and_spends_no_follow_up(h: Harness) -> None:
    _to_scenario(h)
    scenario = h.node
    h.say("Can we skip this question?", at=40)
    h.observe(at=41)
    used = len(h.of("follow_up_used"))
    h.say("No, I'll give it a try.", at=45)
    h.observe(at=46, spoken="Of course. Take your time.")
    assert h.node == scenario
    declined = _received(h)[-1]
    assert declined.commandType == "skip_confirmation" and declined.accepted is False
    assert h.state.node.pending_command is None
    assert len(h.of("follow_up_used")) == used
    assert h.texts()[-1] == "Of course. Take your time."
    assert h.replayed_equal()


def test_an_answer_instead_of_a_yes_cancels_the_skip(h: Harness) -> None:
    _to_scenario(h)
    scenario = h.node
    h.say("Can we skip this question?", at=40)
    h.observe(at=41)
    h.say("Actually, I would run Dijkstra from headquarters on the latency graph.", at=45)
    h.observe(at=46, spoken="How would you weight the edges?", follow_up=True)
    h.say("Yes.", at=55)  # a yes to the examiner's next question is no longer a skip
    h.observe(at=56, spoken="Go on.")
    assert h.node == scenario
    assert not [e for e in h.of("node_exited") if e.reason == "candidate_skip"]


def test_a_skip_is_confirmed_in_the_exam_language() -> None:
    h = Harness(example_document("cs201-graph-algorithms.de"))
    h.start()
    h.say("Am meisten hat mir Rekursion gefallen.", at=5)
    h.observe(at=6, spoken="Danke.", done=True)
    h.say("Er nimmt immer den nächsten unbesuchten Knoten und entspannt seine Kanten.", at=20)
    h.say("Mit einem binären Heap.", at=30)
    h.observe(
        at=31,
        done=True,
        signals=[signal("tgt-greedy-choice", excerpt="nächsten unbesuchten Knoten")],
    )
    scenario = h.node
    assert scenario and scenario.startswith("scn-")
    h.say("Können wir diese Frage überspringen?", at=40)
    h.observe(at=41, commandDetected="skip")
    assert h.texts()[-1] == texts.GERMAN.skip_confirm
    h.say("Ja, bitte.", at=45)
    h.observe(at=46)
    assert h.node != scenario


@pytest.mark.parametrize(
    ("words", "command", "asked"),
    [
        (
            "Could I go back and correct my answer to the previous question?",
            "revise_earlier_answer",
            texts.ENGLISH.revise_confirm,
        ),
        ("Can we continue in German, please?", "language_switch", texts.ENGLISH.language_confirm),
    ],
)
def test_revising_and_switching_language_in_words_are_confirmed_first(
    words: str, command: str, asked: str
) -> None:
    document = example()
    put(document, "nodes[q-dijkstra].candidateCommands.allowed[6]", "language_switch")
    h = Harness(document).to_q1()
    h.say(words, at=20)
    h.observe(at=21)  # the classifier reads the candidate's words (the LLM may claim revise)
    assert h.texts()[-1] == asked
    first = _received(h)[-1]
    assert first.command == command and first.commandType == command and first.accepted
    h.say("Yes, please.", at=25)
    h.observe(at=26)
    confirmed = _received(h)[-1]
    assert confirmed.commandType == f"{command}_confirmation" and confirmed.accepted
    assert h.node == "q-dijkstra"
    assert h.replayed_equal()
