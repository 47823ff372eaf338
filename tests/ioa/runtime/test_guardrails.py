"""Guardrails: output validation on every spoken text, anxiety (POL-008), distress, off-topic
limit, unclear answers."""

from __future__ import annotations

from ioa.output_filters import NEUTRAL_SUPPORT
from ioa.runtime import Speak
from tests.ioa.builders import example, node
from tests.ioa.runtime.harness import Harness


def _guards(h: Harness, kind: str) -> list[object]:
    return [g for g in h.of("guardrail_triggered") if g.guardrailType == kind]


def test_persona_break_is_intercepted_with_original_and_replacement(h: Harness) -> None:
    h.to_q1()
    h.say("It picks the closest vertex.", at=20)
    h.observe(
        at=21,
        spoken="As an AI language model I cannot grade this. What is the running time?",
    )
    assert h.texts()[-1] == "What is the running time?"
    guard = _guards(h, "persona_break")[0]
    assert guard.actionTaken == "output_replaced" and guard.severity == "block"
    assert guard.originalText == (
        "As an AI language model I cannot grade this. What is the running time?"
    )
    assert guard.replacementText == "What is the running time?"
    assert "OUT-001" in guard.description
    assert "Original text" not in guard.description and "running time" not in guard.description
    assert guard.contextNodeId == "q-dijkstra"


def test_rubric_leak_is_intercepted(h: Harness) -> None:
    h.to_q1()
    h.say("It uses a queue.", at=20)
    h.observe(
        at=21,
        spoken=(
            "Does it repeatedly settle the unvisited vertex with the smallest tentative "
            "distance and relax its outgoing edges?"
        ),
    )
    assert _guards(h, "rubric_leak")
    assert "smallest tentative distance" not in h.texts()[-1]


def test_topic_drift_is_redirected_to_the_current_question(h: Harness) -> None:
    h.to_q1()
    h.say("It uses a queue.", at=20)
    h.observe(at=21, spoken="By the way, did you watch the football last night?")
    assert _guards(h, "topic_containment")
    assert h.texts()[-1].startswith("Let's stay with the current question.")


def test_over_long_utterance_is_split_into_parts_of_at_most_500(h: Harness) -> None:
    h.to_q1()
    h.say("It uses a queue.", at=20)
    sentence = "Consider how the algorithm proceeds from the source vertex step by step. "
    long_text = sentence * 12 + "What happens next?"
    decision = h.observe(at=21, spoken=long_text)
    parts = [e for e in decision.effects if isinstance(e, Speak)]
    assert len(parts) == 2 and all(len(p.text) <= 500 for p in parts)
    assert parts[-1].text.endswith("What happens next?")
    guard = _guards(h, "length")[0]
    assert guard.actionTaken == "output_replaced"


def test_leading_question_is_rephrased(h: Harness) -> None:
    h.to_q1()
    h.say("It uses a queue.", at=20)
    h.observe(at=21, spoken="Wouldn't you say that a heap makes it faster?")
    assert h.texts()[-1] == (
        "Do you agree or disagree that a heap makes it faster? Please explain why."
    )
    assert _guards(h, "leading_question")[0].severity == "warning"


def test_reassurance_under_anxiety_is_replaced_by_neutral_support(h: Harness) -> None:
    h.to_q1()
    h.say("I'm so nervous, I think it picks the closest vertex?", at=20)
    h.observe(at=21, anxious=True, spoken="You're doing great, that's correct! Keep going.")
    assert h.texts()[-1] == NEUTRAL_SUPPORT
    guard = _guards(h, "anxiety_policy")[0]
    assert "POL-008" in guard.description
    assert guard.originalText == "You're doing great, that's correct! Keep going."
    assert guard.replacementText == NEUTRAL_SUPPORT
    recovery = h.of("recovery_started")[0]
    assert recovery.recoveryType == "anxiety" and recovery.action == "calm_support"
    assert (recovery.attempt, recovery.maxAttempts) == (1, 3)
    assert "calm_support" not in recovery.triggerDescription
    assert h.spoken[-1].purpose == "recovery"


def test_neutral_support_under_anxiety_passes_and_no_follow_up_is_counted(h: Harness) -> None:
    h.to_q1()
    h.say("Sorry, I'm nervous.", at=20)
    h.observe(at=21, anxious=True, spoken="Take your time.")
    assert h.texts()[-1] == "Take your time."
    h.say("It is greedy I think.", at=30)
    h.observe(at=31, anxious=True, follow_up=True, spoken="Why is greedy safe?")
    assert h.of("follow_up_used") == []
    assert h.texts()[-1] == NEUTRAL_SUPPORT
    h.say("Because distances only grow.", at=40)
    h.observe(at=41, anxious=False, spoken="Go on.")
    assert h.of("recovery_resolved")[-1].resolution == "candidate_resumed"


def test_anxiety_escalates_to_a_pause_after_max_attempts(h: Harness) -> None:
    h.to_q1()
    for index in range(4):
        h.say(f"I can't think {index}.", at=20 + 10 * index)
        h.observe(at=21 + 10 * index, anxious=True, spoken="Take your time.")
    assert len(h.of("recovery_started")) == 3
    assert h.state.exam_state.value == "paused"


def test_confirming_correctness_is_blocked_where_it_is_forbidden(h: Harness) -> None:
    h.to_q1()
    h.say("It picks the closest vertex.", at=20)
    h.observe(at=21, spoken="That's correct. Now, what is the running time?")
    assert _guards(h, "unauthorized_scoring")
    assert "correct" not in h.texts()[-1]


def test_distress_pauses_the_exam_and_alerts_the_proctor(h: Harness) -> None:
    h.to_q1()
    h.say("I can't do this anymore.", at=20)
    h.observe(at=21, distressDetected=True, spoken="Let's move on.")
    assert h.of("recovery_started")[-1].recoveryType == "candidate_distress"
    assert h.state.exam_state.value == "paused"
    assert h.texts()[-1].startswith("Let's stop for a moment.")
    h.command("resume", "cmd-resume")
    assert h.state.exam_state.value == "in_progress"
    assert h.of("recovery_resolved")[-1].resolution == "candidate_resumed"


def test_off_topic_limit_forces_the_exit(h: Harness) -> None:
    h.to_q1()
    for index in range(3):
        h.say(f"Let me tell you about my holiday {index}.", at=20 + 10 * index)
        h.observe(at=21 + 10 * index, quality="off_topic", spoken="Let's come back to Dijkstra.")
    assert [r.recoveryType for r in h.of("recovery_started")] == ["off_topic", "off_topic"]
    assert _guards(h, "off_topic_limit")[0].actionTaken == "forced_transition"
    assert h.of("node_exited")[-1].reason == "forced_transition"
    assert h.node != "q-dijkstra"


def test_on_topic_answer_resolves_the_off_topic_recovery(h: Harness) -> None:
    h.to_q1()
    h.say("My holiday was nice.", at=20)
    h.observe(at=21, quality="off_topic", spoken="Let's come back to Dijkstra.")
    h.say("It picks the closest vertex.", at=30)
    h.observe(at=31, quality="substantive")
    assert h.of("recovery_resolved")[-1].resolution == "candidate_resumed"


def test_unclear_answer_uses_the_node_handler_when_present() -> None:
    document = example()
    node(document, "q-dijkstra")["recoveryHandlers"].append(
        {
            "scenario": "unclear_answer",
            "maxAttempts": 1,
            "action": "rephrase",
            "escalation": "skip_node",
        }
    )
    h = Harness(document).to_q1()
    h.say("Erm, the thing, with the stuff.", at=20)
    h.observe(at=21, quality="unclear", spoken="Could you describe the first step?")
    assert h.of("recovery_started")[-1].recoveryType == "unclear_answer"
    h.say("Stuff, you know.", at=30)
    h.observe(at=31, quality="unclear")
    assert h.node != "q-dijkstra"
    assert h.of("recovery_resolved")[-1].resolution == "skipped_to_next"
