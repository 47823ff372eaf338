"""The agent boundary (our chapter 04, docs/spec/agent-boundary.md): the LLM's
``commandDetected`` alone never ends, skips, confirms, pauses or loses evidence; a candidate
"no" always wins; a refused claim is a ``guardrail_triggered`` with its reason."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioa.runtime import TranscriptSegment, TurnFault, texts
from ioa.runtime.agent_boundary import (
    AUTHORITY,
    CONSEQUENTIAL,
    HARMLESS,
    candidate_command,
    declines,
    judge_llm_claim,
    may_cause,
    read_consent,
)
from ioa.runtime.classifier import detect_command
from ioa.schema import CandidateCommandType as C
from tests.ioa.runtime.harness import Harness, signal
from tests.ioa.runtime.test_commands import _to_scenario


def _claims_refused(h: Harness) -> list[object]:
    return [g for g in h.of("guardrail_triggered") if g.guardrailId.startswith("llm-claim-")]


def test_llm_finish_claimed_twice_against_the_candidates_no_never_ends_the_exam() -> None:
    h = Harness().to_q1()
    h.say("No, I do not want to finish.", at=20)
    h.observe(at=21, commandDetected="finish", spoken="Are you sure you want to finish?")
    h.say("No, I want to continue.", at=30)
    h.observe(at=31, commandDetected="finish", spoken="Thank you, the exam is over.")
    assert not h.state.completed
    assert h.node == "q-dijkstra"
    assert "exam_completed" not in h.types()
    assert all(r.origin != "llm" or not r.accepted for r in h.of("candidate_command_received"))
    refused = _claims_refused(h)
    assert len(refused) == 2
    assert all(g.guardrailType == "blocked_action" for g in refused)
    assert all("finish" in g.description and "said no" in g.description for g in refused)
    # what the LLM wanted to say with its claim is not said; the question is asked again
    assert "Thank you, the exam is over." not in h.texts()
    assert h.texts()[-1].startswith("Let's stay with this question.")


def test_llm_skip_without_the_candidate_asking_is_refused_and_its_evidence_kept() -> None:
    h = Harness()
    _to_scenario(h)
    scenario = h.node
    target = (
        "tgt-choose-algorithm" if scenario == "scn-delivery-routes" else "tgt-choose-algorithm-net"
    )
    h.say("I would run Dijkstra from the depot on the road graph.", at=40)
    h.observe(
        at=41,
        commandDetected="skip",
        signals=[signal(target, excerpt="run Dijkstra from the depot")],
    )
    assert h.node == scenario
    assert not [d for d in h.of("transition_decision") if d.reason == "candidate_skip"]
    evidence = [e for e in h.of("evidence_signal") if e.nodeId == scenario]
    assert evidence, "the observation's evidence must be kept"
    assert _claims_refused(h) and "skip" in _claims_refused(h)[-1].description


def test_the_candidates_own_skip_is_still_honoured_with_or_without_the_llm() -> None:
    h = Harness()
    _to_scenario(h)
    h.say("Can we skip this question?", at=40)
    h.observe(at=41)  # the LLM missed it: the classifier reads the candidate's words
    assert h.texts()[-1] == texts.ENGLISH.skip_confirm  # a skip is confirmed first (§5)
    h.say("Yes.", at=45)
    h.observe(at=46)
    assert h.node == "wrapup"
    received = h.of("candidate_command_received")[-1]
    assert received.accepted and received.origin == "classifier"


def test_negated_skip_is_no_skip_even_when_the_llm_agrees() -> None:
    h = Harness()
    _to_scenario(h)
    scenario = h.node
    h.say("I don't want to skip this question.", at=40)
    h.observe(at=41, commandDetected="skip")
    assert h.node == scenario
    assert _claims_refused(h)


def test_finish_needs_the_candidates_words_and_their_yes() -> None:
    h = Harness().to_q1()
    h.say("I want to end the exam.", at=20)
    h.observe(at=21, commandDetected="finish")
    assert not h.state.completed and h.texts()[-1].startswith("Do you want to end")
    h.say("Yes.", at=25)
    h.observe(at=26)  # the LLM reports nothing: the candidate's yes confirms
    assert h.state.completed
    assert h.of("exam_completed")[-1].reason == "candidate_ended"


def test_a_pending_finish_is_not_confirmed_by_the_llm_against_a_no() -> None:
    h = Harness().to_q1()
    h.say("I want to end the exam.", at=20)
    h.observe(at=21, commandDetected="finish")
    h.say("No, I want to continue.", at=25)
    h.observe(at=26, commandDetected="finish")
    assert not h.state.completed
    assert h.state.node.finish_pending is None
    declined = h.of("candidate_command_received")[-1]
    assert declined.commandType == "finish_confirmation" and not declined.accepted


def test_llm_pause_alone_is_refused_but_harmless_commands_pass() -> None:
    h = Harness().to_q1()
    h.say("Dijkstra keeps a priority queue of distances.", at=20)
    h.observe(at=21, commandDetected="pause")
    assert h.state.exam_state.value == "in_progress"
    assert _claims_refused(h)
    h.say("Sorry?", at=30)
    h.observe(at=31, commandDetected="repeat")
    assert h.of("candidate_command_received")[-1].accepted


def test_the_examiners_stall_is_not_the_candidates_hesitation() -> None:
    """Text mode: the candidate answered, the examiner stalled, the candidate typed again: the
    gap was the examiner's, not a mid-response hesitation of the candidate."""
    h = Harness().to_q1()
    h.say("It uses a priority queue.", at=8)
    h.at(20).send(
        TranscriptSegment("candidate", "Hello? Are you there?", 1.0, awaiting_examiner=True)
    )
    assert h.of("hesitation_detected") == []
    h.say("And then it relaxes the edges.", at=28)  # mid-answer (not owed a reply): counted
    assert [x.context for x in h.of("hesitation_detected")] == ["mid_response"]


@pytest.mark.parametrize(
    ("text", "command", "expected"),
    [
        ("No, I do not want to finish", C.FINISH, True),
        ("No, I want to continue", C.FINISH, True),
        ("I'm not ready to end this", C.FINISH, True),
        ("No idea, next question please", C.SKIP, False),
        ("I want to end the exam", C.FINISH, False),
        ("Let's continue", C.RESUME, False),
        ("This is an emergency, I can't continue", C.EMERGENCY_STOP, False),
    ],
)
def test_declines(text: str, command: C, expected: bool) -> None:
    assert declines(text, command) is expected


def test_consent_and_table() -> None:
    assert read_consent("Yes, please end it.") == "yes"
    assert read_consent("No.") == "no"
    assert read_consent("Hmm, what was the question again?") is None
    assert candidate_command("I don't want to skip this question") is None
    assert candidate_command("Can we skip this question?") is C.SKIP
    assert frozenset(C) == HARMLESS | CONSEQUENTIAL and not HARMLESS & CONSEQUENTIAL
    assert not any(may_cause("llm", c) for c in CONSEQUENTIAL)
    assert all(may_cause("envelope", c) for c in C)
    assert set(AUTHORITY) == {"envelope", "classifier", "llm", "proctor"}


_ANSWERS = st.sampled_from(
    [
        "It uses a priority queue keyed by distance.",
        "No, I do not want to finish.",
        "No, I want to continue.",
        "I don't want to skip this question.",
        "Greedy: settle the nearest vertex first.",
        "Hmm.",
        "Negative weights break it.",
    ]
)
_CLAIMS = st.sampled_from(
    ["finish", "skip", "pause", "revise_earlier_answer", "repeat", "help", None]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_ANSWERS, _CLAIMS, st.booleans()), min_size=1, max_size=8))
def test_no_consequential_command_without_the_candidates_act(
    turns: list[tuple[str, str | None, bool]],
) -> None:
    h = Harness()
    _to_scenario(h)
    start = h.node
    t = 40.0
    for text, claim, done in turns:
        extra_done = {"done": True} if done else {}
        t += 10
        h.say(text, at=t)
        extra = {"commandDetected": claim} if claim else {}
        h.observe(at=t + 1, **extra, **extra_done)
        if h.state.completed:
            break
    assert "candidate_ended" not in [e.reason for e in h.of("exam_completed")]
    assert not [d for d in h.of("transition_decision") if d.reason == "candidate_skip"]
    assert h.state.exam_state.value != "paused" or h.state.pause_reason != "candidate_pause"
    accepted = [r for r in h.of("candidate_command_received") if r.accepted]
    assert all(r.command in HARMLESS for r in accepted)
    assert start is not None
    assert h.replayed_equal()


def test_judge_llm_claim_needs_words() -> None:
    assert not judge_llm_claim(C.FINISH, []).allowed
    assert judge_llm_claim(C.REPEAT, ["Pardon?"]).allowed
    verdict = judge_llm_claim(C.SKIP, ["Can we skip this question?"])
    assert verdict.allowed and verdict.corroborated


def test_a_turn_fault_is_recorded_and_answered_with_the_question() -> None:
    h = Harness().to_q1()
    question = h.texts()[-1]
    h.say("It uses a priority queue.", at=20)
    decision = h.at(28).send(TurnFault("llm_timeout", "no reply", ("deadline",)))
    assert decision.result["status"] == "fallback"
    error = h.of("system_error")[-1]
    assert (error.code, error.component, error.severity) == ("llm_timeout", "bot", "warning")
    assert error.details["problems"] == ["deadline"]
    assert h.texts()[-1] == question
    assert h.node == "q-dijkstra" and not h.state.completed
    assert h.replayed_equal()


@settings(max_examples=200, deadline=None)
@given(
    text=st.one_of(
        st.text(max_size=80),
        st.sampled_from(
            [
                "I would like to skip this one",
                "I don't want to skip this question",
                "can we take a short break please",
                "Ich möchte diese Frage überspringen",
                "¿podemos pasar a la siguiente?",
            ]
        ),
    ),
    language=st.sampled_from(["en", "de", "es"]),
)
def test_the_cached_reading_of_a_turn_is_the_classifier_s(text: str, language: str) -> None:
    # The runtime reads a candidate turn when it arrives and again when the observation that
    # answers it comes (the second read is the cache's): both must be what the classifier says.
    fresh = candidate_command(text, language, detect=lambda t, lang: detect_command(t, lang))
    assert candidate_command(text, language) is fresh
    assert candidate_command(text, language) is fresh
