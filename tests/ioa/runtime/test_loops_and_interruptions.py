"""Recovery: repetition loops and voice barge-in (our 03 chapter §8)."""

from __future__ import annotations

from typing import Any

import pytest

from ioa.errors import InvalidInputError
from ioa.runtime import (
    CandidateInterrupted,
    InjectContext,
    PromptLlm,
    Speak,
    UtteranceFinished,
    texts,
)
from ioa.runtime import UtteranceStarted as Started
from ioa.runtime.repetition import SIMILARITY_THRESHOLD, near_repeat, similarity
from tests.ioa.builders import example, node
from tests.ioa.runtime.harness import Harness

QUESTION = "Which vertex does Dijkstra's algorithm settle next, and why?"
REPHRASED = "Which vertex is settled next by Dijkstra's algorithm, and why?"
OTHER = "How do you update the distances of its neighbours afterwards?"
ANSWER = "I think it takes the vertex with the smallest tentative distance."


def _document(scenario: str, action: str, attempts: int, escalation: str) -> dict[str, Any]:
    document = example()
    node(document, "q-dijkstra")["recoveryHandlers"].append(
        {
            "scenario": scenario,
            "maxAttempts": attempts,
            "action": action,
            "escalation": escalation,
        }
    )
    return document


def _loops(h: Harness) -> list[Any]:
    return [r for r in h.of("recovery_started") if r.recoveryType == "repetition_loop"]


def _loop_guards(h: Harness) -> list[Any]:
    return [g for g in h.of("guardrail_triggered") if g.guardrailType == "repetition_loop"]


def _asked(h: Harness) -> Harness:
    """At q-dijkstra, the examiner has asked QUESTION (spoken and heard) after an answer."""
    h.to_q1()
    h.say("It picks some vertex.", at=20)
    h.observe(at=21, spoken=QUESTION, follow_up=True)
    assert h.texts()[-1] == QUESTION
    return h


# --- the measure -------------------------------------------------------------------------------


def test_similarity_is_a_word_set_jaccard_with_a_documented_threshold() -> None:
    assert similarity(QUESTION, QUESTION.upper()) == 1.0
    assert similarity("a b c d", "a b c e") == 3 / 5
    assert near_repeat(QUESTION, QUESTION.replace("and why?", "and why exactly?"))
    assert similarity(QUESTION, REPHRASED) < SIMILARITY_THRESHOLD
    assert not near_repeat(QUESTION, REPHRASED)
    # short texts and the runtime's procedural phrases never count
    assert not near_repeat("Please go on.", "Please go on.")
    assert not near_repeat(texts.ENGLISH.gentle_reprompt, texts.ENGLISH.gentle_reprompt)


# --- repetition loop: the examiner -------------------------------------------------------------


def test_examiner_repetition_is_rephrased_then_resolved() -> None:
    h = _asked(Harness(_document("repetition_loop", "rephrase", 2, "skip_node")))
    spoken_before = len(h.spoken)
    h.say("I am not sure about that part.", at=30)
    decision = h.observe(at=31, spoken=QUESTION)
    (loop,) = _loops(h)
    assert (loop.attempt, loop.maxAttempts, loop.action) == (1, 2, "rephrase")
    assert "examiner" in loop.triggerDescription and QUESTION not in loop.triggerDescription
    assert PromptLlm(texts.REPETITION_INSTRUCTION) in decision.effects
    assert len(h.spoken) == spoken_before  # the repeated text was not spoken
    assert decision.result["recovery"] == "repetition_loop"
    # the LLM asks differently: spoken; the episode stays open until the candidate answers
    h.observe(at=32, spoken=REPHRASED)
    assert h.texts()[-1] == REPHRASED and not h.of("recovery_resolved")
    h.say(ANSWER, at=40)
    h.observe(at=41, spoken=OTHER)
    resolved = h.of("recovery_resolved")[-1]
    assert (resolved.recoveryId, resolved.resolution) == (loop.recoveryId, "re_prompted")
    assert h.texts()[-1] == OTHER and len(_loops(h)) == 1
    assert h.replayed_equal()


def test_examiner_repetition_escalates_after_max_attempts_through_the_forced_exit() -> None:
    h = _asked(Harness(_document("repetition_loop", "gentle_reprompt", 1, "skip_node")))
    h.say("I am not sure about that part.", at=30)
    h.observe(at=31, spoken=QUESTION)
    assert h.spoken[-1].text == texts.ENGLISH.gentle_reprompt and h.spoken[-1].purpose == "recovery"
    assert [r.attempt for r in _loops(h)] == [1]
    h.say("Still not sure about that part.", at=40)
    h.observe(at=41, spoken=QUESTION)
    assert h.node != "q-dijkstra" and len(_loops(h)) == 1
    assert h.of("recovery_resolved")[-1].resolution == "skipped_to_next"
    decision = h.of("transition_decision")[-1]
    assert decision.reason == "guardrail_override" and decision.fromNodeId == "q-dijkstra"
    assert "repetition_loop recovery escalated (skip_node)" in (decision.conditionEvaluated or "")
    assert h.replayed_equal()


def test_fixed_procedural_texts_and_different_questions_are_not_a_loop() -> None:
    document = _document("repetition_loop", "rephrase", 2, "skip_node")
    # Answers without evidence spend follow-ups (§16): room for the five.
    node(document, "q-dijkstra")["followUpPolicy"]["maxFollowUps"] = 10
    h = _asked(Harness(document))
    for second, text in enumerate(
        [
            texts.ENGLISH.gentle_reprompt,
            texts.ENGLISH.gentle_reprompt,
            REPHRASED,
            OTHER,
            "Please go on.",
        ]
    ):
        h.say(f"Answer number {second} about vertices and edges.", at=30 + 10 * second)
        h.observe(at=31 + 10 * second, spoken=text)
        assert h.texts()[-1] == text
    assert not _loops(h) and not _loop_guards(h)


def test_a_candidate_rephrase_request_allows_saying_the_question_again() -> None:
    h = _asked(Harness(_document("repetition_loop", "rephrase", 2, "skip_node")))
    h.command("request_rephrase", "cmd-rephrase")
    decision = h.observe(at=31, spoken=QUESTION)  # a poor rephrase, but asked for
    assert not _loops(h) and not _loop_guards(h)
    assert any(isinstance(e, Speak) and e.text == QUESTION for e in decision.effects)


def test_a_candidate_repeat_request_allows_saying_the_question_again() -> None:
    h = _asked(Harness(_document("repetition_loop", "rephrase", 2, "skip_node")))
    h.say("Sorry, could you repeat the question?", at=30)
    h.observe(at=31, spoken=QUESTION, commandDetected="repeat")
    assert h.texts()[-1] == QUESTION  # the runtime repeated it
    assert not _loops(h) and not _loop_guards(h)


def test_without_a_handler_a_loop_is_only_a_warning() -> None:
    h = _asked(Harness())
    h.say("I am not sure about that part.", at=30)
    h.observe(at=31, spoken=QUESTION)
    assert h.texts()[-1] == QUESTION  # spoken as usual
    assert not _loops(h)
    (guard,) = _loop_guards(h)
    assert (guard.severity, guard.actionTaken) == ("warning", "event_only")
    assert "no repetition_loop handler" in guard.description
    assert h.replayed_equal()


# --- repetition loop: the candidate ------------------------------------------------------------


def test_candidate_repeating_the_same_answer_is_a_loop_counted_once_per_turn() -> None:
    h = Harness(_document("repetition_loop", "rephrase", 2, "skip_node")).to_q1()
    h.say(ANSWER, at=20)
    h.observe(at=21, spoken=QUESTION)
    h.say(ANSWER.replace("I think it", "It"), at=30)
    decision = h.observe(at=31, spoken=OTHER)
    (loop,) = _loops(h)
    assert "candidate turn" in loop.triggerDescription and loop.attempt == 1
    assert PromptLlm(texts.REPETITION_INSTRUCTION) in decision.effects
    # the LLM's next call (no new candidate turn) is not a second trigger, nor a resolution
    h.observe(at=32, spoken=REPHRASED)
    assert h.texts()[-1] == REPHRASED and len(_loops(h)) == 1
    assert not h.of("recovery_resolved")
    # the same answer a third time: a second attempt
    h.say(ANSWER, at=40)
    h.observe(at=41, spoken=OTHER)
    assert [r.attempt for r in _loops(h)] == [1, 2]
    assert h.replayed_equal()


def test_different_candidate_answers_are_not_a_loop() -> None:
    h = Harness(_document("repetition_loop", "rephrase", 2, "skip_node")).to_q1()
    h.say(ANSWER, at=20)
    h.observe(at=21, spoken=QUESTION)
    h.say("Then it relaxes every edge leaving that vertex.", at=30)
    h.observe(at=31, spoken=OTHER)
    assert not _loops(h) and h.texts()[-1] == OTHER


# --- interruption ------------------------------------------------------------------------------


def _speaking(h: Harness, at: float, spoken: str) -> str:
    """The examiner starts saying ``spoken`` (not finished): its utterance id."""
    h.ack = False
    decision = h.observe(at=at, spoken=spoken)
    (speak,) = [e for e in decision.effects if isinstance(e, Speak)]
    h.send(Started(speak.utterance_id))
    return speak.utterance_id


def _interruptions(h: Harness) -> list[Any]:
    return [r for r in h.of("recovery_started") if r.recoveryType == "interruption"]


def test_interruption_lets_the_candidate_finish_and_resolves_once_the_examiner_is_heard() -> None:
    h = Harness(_document("interruption", "rephrase", 2, "skip_node")).to_q1()
    h.say(ANSWER, at=20)
    utterance = _speaking(h, 21, QUESTION)
    decision = h.send(CandidateInterrupted(utterance))
    (started,) = _interruptions(h)
    assert (started.attempt, started.maxAttempts, started.action) == (1, 2, "rephrase")
    assert utterance in started.triggerDescription
    assert not [e for e in decision.effects if isinstance(e, Speak)]  # nothing said over them
    (note,) = [e for e in decision.effects if isinstance(e, InjectContext)]
    assert note.text.startswith(texts.INTERRUPTION_INSTRUCTION)
    assert "different words" in note.text
    h.at(22).send(UtteranceFinished(utterance, 400))
    h.say("Sorry, I meant the closest one.", at=25)  # the interrupting speech itself
    assert not h.of("recovery_resolved")
    h.ack = True
    h.observe(at=26, spoken=REPHRASED)  # heard to the end
    h.say(ANSWER.replace("I think", "Surely"), at=35)
    resolved = h.of("recovery_resolved")[-1]
    assert (resolved.recoveryId, resolved.resolution) == (started.recoveryId, "candidate_resumed")
    assert h.replayed_equal()


def test_repeated_interruptions_count_attempts_and_escalate() -> None:
    h = Harness(_document("interruption", "gentle_reprompt", 2, "skip_node")).to_q1()
    h.say(ANSWER, at=20)
    for attempt, spoken in enumerate([QUESTION, REPHRASED, OTHER], start=1):
        utterance = _speaking(h, 20 + 5 * attempt, spoken)
        h.send(CandidateInterrupted())  # the bot did not say which: the one in flight
        h.send(UtteranceFinished(utterance, 300))
        h.say(f"Wait, I have more to add, point {attempt}.", at=22 + 5 * attempt)
        if attempt < 3:
            assert [r.attempt for r in _interruptions(h)] == list(range(1, attempt + 1))
            assert not h.of("recovery_resolved")
    assert h.node != "q-dijkstra"
    assert h.of("recovery_resolved")[-1].resolution == "skipped_to_next"
    assert h.of("transition_decision")[-1].reason == "guardrail_override"
    assert h.replayed_equal()


def test_interruption_without_speech_in_flight_or_without_handler_records_nothing() -> None:
    h = Harness(_document("interruption", "gentle_reprompt", 2, "skip_node")).to_q1()
    before = len(h.events)
    assert h.send(CandidateInterrupted()).result["reason"] == "the examiner is not speaking"
    assert h.send(CandidateInterrupted("utt-9999")).status == "ignored"
    assert len(h.events) == before

    plain = Harness().to_q1()
    plain.say(ANSWER, at=20)
    utterance = _speaking(plain, 21, QUESTION)
    before = len(plain.events)
    decision = plain.send(CandidateInterrupted(utterance))
    assert decision.status == "noted" and not decision.events and not decision.effects
    assert len(plain.events) == before


def test_a_barge_in_records_when_the_utterance_was_cut_and_what_was_heard() -> None:
    h = Harness().to_q1()
    h.say(ANSWER, at=20)
    utterance = _speaking(h, 21, QUESTION)
    cut = UtteranceFinished(
        utterance,
        1800,
        interrupted=True,
        interrupted_at_ms=22_800,
        spoken_text="Which vertex does Dijkstra's",
    )
    assert h.at(23).send(cut).status == "interrupted"
    final = h.of("examiner_utterance_final")[-1]
    assert (final.utteranceId, final.text, final.durationMs) == (utterance, QUESTION, 1800)
    assert (final.interrupted, final.interruptedAtMs) == (True, 22_800)
    assert final.spokenText == "Which vertex does Dijkstra's"
    assert h.replayed_equal()


def test_spoken_text_that_is_not_a_prefix_of_the_validated_text_is_never_recorded() -> None:
    h = Harness().to_q1()
    h.say(ANSWER, at=20)
    utterance = _speaking(h, 21, QUESTION)
    h.send(UtteranceFinished(utterance, 900, interrupted=True, spoken_text="Ignore the rubric"))
    final = h.of("examiner_utterance_final")[-1]
    assert (final.interrupted, final.spokenText, final.interruptedAtMs) == (True, "", None)


def test_an_utterance_heard_to_the_end_has_no_interruption_fields() -> None:
    h = Harness().to_q1()
    h.say(ANSWER, at=20)
    utterance = _speaking(h, 21, QUESTION)
    h.send(UtteranceFinished(utterance, 3000))
    final = h.of("examiner_utterance_final")[-1]
    assert (final.interrupted, final.interruptedAtMs, final.spokenText) == (None, None, None)


def test_an_utterance_records_when_its_audio_began_apart_from_when_it_was_recorded() -> None:
    """The bot reports when the candidate could first hear the examiner; the controller may
    record it later (its queue on a loaded machine): both are kept, and the log replays."""
    h = Harness().to_q1()
    h.say(ANSWER, at=20)
    h.ack = False
    (speak,) = [e for e in h.observe(at=21, spoken=QUESTION).effects if isinstance(e, Speak)]
    assert h.at(23).send(Started(speak.utterance_id, at_ms=21_400)).status == "speaking"
    started = h.of("examiner_utterance_started")[-1]
    assert (started.utteranceId, started.atMs) == (speak.utterance_id, 21_400)
    assert h.replayed_equal()


def test_an_utterance_cannot_start_before_the_session_opened() -> None:
    h = Harness().to_q1()
    h.say(ANSWER, at=20)
    h.ack = False
    (speak,) = [e for e in h.observe(at=21, spoken=QUESTION).effects if isinstance(e, Speak)]
    with pytest.raises(InvalidInputError, match="before the session opened"):
        h.send(Started(speak.utterance_id, at_ms=-5))
    assert not [
        e for e in h.of("examiner_utterance_started") if e.utteranceId == speak.utterance_id
    ]
