"""A refusal is a move, never a silence (issue #31; runtime semantics §16).

When the runtime does not approve the LLM's proposal to complete a node, it decides what is said
next itself: a neutral probe counted as a follow-up, or the node's exhausted exit. Every
candidate answer gets an examiner reply, and a node takes at most ``maxFollowUps`` + 2 answers
that add no new evidence.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioa.runtime import (
    PromptLlm,
    Speak,
    UtterancesDropped,
    UtteranceStarted,
    texts,
)
from tests.factories import example_document
from tests.ioa.builders import example, put
from tests.ioa.runtime.harness import Harness, signal

GREEDY = signal("tgt-greedy-choice", excerpt="settles the nearest unvisited vertex")
HEAP = signal("tgt-complexity", excerpt="binary heap")
MAX_FOLLOW_UPS = 3
"""``q-dijkstra``'s follow-up budget in the example package."""

VAGUE = (
    "Um, it finds the shortest paths, I think.",
    "It goes through the graph and like, checks the distances.",
    "Well it's kind of like a search, it looks at the nodes one by one.",
    "I'm not really sure, it just works out the best route I guess.",
    "it uses the edges and the weights to find the path",
    "Basically it's an algorithm for graphs.",
    "It's the one we did in week four, the shortest path thing.",
)
PROBES = set(texts.ENGLISH.probes())


def _reply_count(h: Harness, before: int) -> int:
    return len(h.spoken) - before


def _answer_and_observe(h: Harness, text: str, at: float, **observation: Any) -> int:
    """The candidate answers, the LLM reports; how many utterances the examiner queued."""
    h.say(text, at=at)
    before = len(h.spoken)
    h.observe(at=at + 1, **observation)
    return _reply_count(h, before)


def test_a_refused_completion_is_answered_with_a_probe_counted_as_a_follow_up(
    h: Harness,
) -> None:
    h.to_q1()
    decision_replies = _answer_and_observe(
        h, VAGUE[0], at=20, done=True, spoken="Great, let's move on to the next topic."
    )
    assert h.node == "q-dijkstra"
    assert decision_replies == 1
    reply = h.spoken[-1]
    assert reply.purpose == "follow_up"
    assert reply.text in PROBES
    assert "move on" not in " ".join(h.texts())
    assert not any(isinstance(e, PromptLlm) for e in h.decisions[-3].effects)
    assert [u.followUpIndex for u in h.of("follow_up_used")] == [1]
    assert h.of("follow_up_used")[0].reason == "evidence_gap"
    refused = [g for g in h.of("guardrail_triggered") if "not approved" in g.description]
    assert refused and "tgt-greedy-choice" in refused[0].description


def test_consecutive_probes_differ_and_never_name_the_rubric(h: Harness) -> None:
    h.to_q1()
    for index in range(MAX_FOLLOW_UPS):
        _answer_and_observe(h, VAGUE[index], at=20 + 10 * index, done=True)
    probes = [s.text for s in h.spoken if s.purpose == "follow_up"]
    assert len(probes) == MAX_FOLLOW_UPS
    assert all(a != b for a, b in itertools.pairwise(probes))
    node = next(n for n in example()["nodes"] if n["nodeId"] == "q-dijkstra")
    rubric = [t["label"].lower() for t in node["evidenceTargets"]] + [
        level["label"].lower()
        for t in node["evidenceTargets"]
        for level in t.get("rubricDescriptor", {}).get("levels", {}).values()
    ]
    assert not [p for p in probes for label in rubric if label in p.lower()]


def _vague_until_left(h: Harness, **report: Any) -> int:
    """The candidate gives vague answers at the core question until it is left, each reported
    by the LLM as ``report``; each must get a reply. Returns how many were given there."""
    h.to_q1()
    answers = 0
    for index, text in enumerate(VAGUE):
        if h.node != "q-dijkstra":
            break
        answers += 1
        replies = _answer_and_observe(h, text, at=20 + 10 * index, **report)
        assert replies >= 1, (index, h.types()[-8:])
    assert h.node != "q-dijkstra"
    assert h.of("node_exited")[-1].reason == "follow_ups_exhausted"
    return answers


def test_a_looping_model_never_leaves_an_answer_unanswered_and_the_node_is_bounded(
    h: Harness,
) -> None:
    assert _vague_until_left(h, done=True) <= MAX_FOLLOW_UPS + 2
    assert h.replayed_equal()


def test_vague_answers_without_any_proposal_are_bounded_too(h: Harness) -> None:
    """The LLM neither proposes completion nor asks a follow-up: every reply to an answer that
    adds no evidence still spends the budget (the example's turn-count edge is at 8)."""
    assert _vague_until_left(h, spoken="I see. Please go on.") <= MAX_FOLLOW_UPS + 2


def test_an_empty_examiner_text_after_an_answer_becomes_a_probe(h: Harness) -> None:
    h.to_q1()
    replies = _answer_and_observe(h, VAGUE[1], at=20, spoken="")
    assert replies == 1
    assert h.spoken[-1].text in PROBES


def test_answers_that_add_evidence_do_not_spend_the_budget(h: Harness) -> None:
    h.to_q1()
    _answer_and_observe(
        h, "It always settles the nearest unvisited vertex.", at=20, signals=[GREEDY]
    )
    _answer_and_observe(h, "With a binary heap it's V plus E log V.", at=30, signals=[HEAP])
    assert h.of("follow_up_used") == []
    _answer_and_observe(h, "That's all I'd say.", at=40, done=True, signals=[])
    assert h.of("node_exited")[-1].reason == "completed"


def test_under_anxiety_a_refusal_is_calm_support_not_a_probe(h: Harness) -> None:
    h.to_q1()
    replies = _answer_and_observe(
        h, "Sorry, I'm really nervous, I can't think.", at=20, done=True, anxious=True
    )
    assert replies == 1
    assert h.spoken[-1].text == texts.ENGLISH.calm_support
    assert h.of("follow_up_used") == []


def test_the_probes_are_spoken_in_the_exam_language() -> None:
    document = example_document("cs201-graph-algorithms.de")
    h = Harness(document).start()
    h.say("Am meisten hat mir Rekursion gefallen.", at=5)
    h.observe(at=6, spoken="Danke.", done=True)
    assert h.node == "q-dijkstra"
    _answer_and_observe(h, "Äh, er sucht halt den kürzesten Weg.", at=20, done=True)
    assert h.spoken[-1].text in texts.for_language("de").probes()


def test_a_node_without_follow_ups_is_left_after_a_refused_vague_answer() -> None:
    document = example()
    put(document, "nodes[q-dijkstra].followUpPolicy.maxFollowUps", 0)
    h = Harness(document).to_q1()
    replies = _answer_and_observe(h, VAGUE[0], at=20, done=True)
    assert replies >= 1
    assert h.node != "q-dijkstra"
    assert h.of("node_exited")[-1].reason == "follow_ups_exhausted"


# --- any interleaving of answers and model reports ----------------------------------------

REPORTS = st.fixed_dictionaries(
    {
        "done": st.booleans(),
        "follow_up": st.booleans(),
        "quality": st.sampled_from(["substantive", "partial", "unclear", "off_topic"]),
        "spoken": st.sampled_from(
            ["", "Please go on.", "Great, let's move on.", "Which data structure helps here?"]
        ),
        "signals": st.sampled_from([[], [], [], [GREEDY], [HEAP]]),
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(VAGUE), REPORTS), min_size=1, max_size=12))
def test_every_answer_is_answered_and_vague_answers_are_bounded(
    steps: list[tuple[str, dict[str, Any]]],
) -> None:
    h = Harness().to_q1()
    vague_at_node = 0
    for index, (text, report) in enumerate(steps):
        if h.node != "q-dijkstra" or h.state.completed:
            break
        covered = set(h.state.ledger.covered_targets("q-dijkstra"))
        replies = _answer_and_observe(h, text, at=20 + 10 * index, **report)
        assert replies >= 1, (index, report, h.types()[-10:])
        if h.node == "q-dijkstra" and set(h.state.ledger.covered_targets("q-dijkstra")) == covered:
            vague_at_node += 1
        assert vague_at_node <= MAX_FOLLOW_UPS + 1, [s.text for s in h.spoken]
    assert h.replayed_equal()


def test_a_counted_reply_the_llm_did_not_ask_as_a_question_is_not_the_question(
    h: Harness,
) -> None:
    """A failed turn's fallback asks ``last_question`` again: an "I see, please go on" after a
    vague answer is spent as a follow-up but never becomes the question."""
    h.to_q1()
    opening = h.state.node.last_question
    _answer_and_observe(h, VAGUE[2], at=20, spoken="I see. Please go on.")
    assert len(h.of("follow_up_used")) == 1
    assert h.spoken[-1].purpose == "prompt"
    assert h.state.node.last_question == opening


def test_an_answer_not_heard_clearly_spends_no_follow_up(h: Harness) -> None:
    """A misheard answer is the recogniser's problem (its own recovery handles it), not a
    vague answer: it does not spend the budget (offline voice demo, CI of session 15)."""
    h.to_q1()
    h.say("the algorithm uh pick the close vertex", confidence=0.55, at=20)
    h.observe(at=21, spoken="I see. Please go on.")
    assert h.of("follow_up_used") == []


def _at_q1_unplayed() -> tuple[Harness, list[Speak]]:
    """The warm-up answered and left; the bridge and the Dijkstra opening are queued in the bot,
    not yet played (the harness does not acknowledge them)."""
    h = Harness(ack=False)
    h.start()
    h.play(list(h.spoken))
    h.say("I enjoyed graph algorithms the most.", at=8)
    before = len(h.spoken)
    h.observe(at=9, spoken="Thank you, let us begin.", done=True)
    assert h.node == "q-dijkstra"
    return h, h.spoken[before:]


OPENING = next(n["prompt"]["opening"] for n in example()["nodes"] if n["nodeId"] == "q-dijkstra")


def test_a_completion_refused_before_the_question_was_heard_asks_the_question() -> None:
    # Seen in CI (voice): the words of the candidate's last warm-up sentence came late and
    # started a turn of their own, which dropped the queued bridge and Dijkstra opening; the
    # LLM then took those words as an answer and proposed completing the node. The refusal
    # said nothing ("the question stands"), but the candidate had never heard the question.
    h, queued = _at_q1_unplayed()
    assert OPENING in [s.text for s in queued]
    h.send(UtterancesDropped(tuple(s.utterance_id for s in queued)))
    before = len(h.spoken)
    h.observe(at=19, spoken="Great, that covers it.", done=True)

    assert h.node == "q-dijkstra"
    asked = h.spoken[before:]
    assert [(s.text, s.purpose) for s in asked] == [(OPENING, "question")]
    assert h.decisions[-1].result["status"] == "question_asked"
    assert any("not approved" in g.description for g in h.of("guardrail_triggered"))
    assert not h.of("follow_up_used")  # the question, not a follow-up
    h.play(asked)
    assert h.state.node.last_question == OPENING
    assert h.replayed_equal()


def test_a_completion_refused_while_the_question_is_queued_does_not_ask_it_twice() -> None:
    # The usual race: the LLM answers before the opening has finished playing.
    h, queued = _at_q1_unplayed()
    before = len(h.spoken)
    h.observe(at=10, spoken="Great, that covers it.", done=True)
    assert h.spoken[before:] == []
    assert h.decisions[-1].result["status"] == "waiting_for_answer"
    h.play(queued)
    assert h.state.node.last_question == OPENING


def test_an_utterance_already_playing_is_not_dropped() -> None:
    h, queued = _at_q1_unplayed()
    h.send(UtteranceStarted(queued[0].utterance_id))
    decision = h.send(UtterancesDropped(tuple(s.utterance_id for s in queued)))
    assert decision.result["status"] == "dropped"
    assert queued[0].utterance_id in h.controller.outbox.pending
    assert all(s.utterance_id not in h.controller.outbox.pending for s in queued[1:])
    assert not h.of("examiner_utterance_final")[1:]  # nothing recorded for the dropped


WARMUP_OPENING = next(n["prompt"]["opening"] for n in example()["nodes"] if n["nodeId"] == "warmup")


def test_an_answer_to_a_question_never_heard_does_not_complete_the_node() -> None:
    # Seen in CI (voice, test_recognition_check): the candidate spoke as the exam started; the
    # barge-in dropped the queued warm-up opening before any of it played, the LLM took the
    # candidate's words as the warm-up answer and the runtime approved completing the node. The
    # candidate was never asked the warm-up question.
    h = Harness(ack=False)
    h.start()
    queued = list(h.spoken)
    assert WARMUP_OPENING in [s.text for s in queued]
    h.send(UtterancesDropped(tuple(s.utterance_id for s in queued)))
    h.say("Hi, I'm Ada, I study computer science and I liked graph algorithms most.", at=4)
    before = len(h.spoken)
    h.observe(at=5, spoken="Thank you, let us begin.", done=True)

    assert h.node == "warmup"
    asked = h.spoken[before:]
    assert [(s.text, s.purpose) for s in asked] == [(WARMUP_OPENING, "question")]
    assert h.decisions[-1].result["status"] == "question_asked"
    assert any("not heard" in g.description for g in h.of("guardrail_triggered"))
    h.play(asked)
    # Now asked and heard, the candidate's answer completes the node as usual.
    h.say("I enjoyed graph algorithms the most.", at=12)
    h.observe(at=13, spoken="Thank you, let us begin.", done=True)
    assert h.node == "q-dijkstra"
    assert h.replayed_equal()


def test_an_answer_while_the_opening_is_still_queued_is_answered_as_usual() -> None:
    # The opening is on its way (not dropped): nothing is asked twice.
    h = Harness(ack=False)
    h.start()
    queued = list(h.spoken)
    h.say("Hello, I liked recursion most.", at=2)
    before = len(h.spoken)
    h.observe(at=3, spoken="Thank you, let us begin.", done=False)
    assert [s.text for s in h.spoken[before:]] != [WARMUP_OPENING]
    h.play(queued)
    assert h.state.node.last_question == WARMUP_OPENING


# --- a turn the runtime reads as a statement or as thinking aloud is still answered ------------

SURE_OR_NOT = (
    "I'm quite confident about that answer.",
    "Honestly, I'm not sure about that at all.",
    "That was more of a guess, to be honest.",
)


@settings(max_examples=len(SURE_OR_NOT), deadline=None)
@given(said=st.sampled_from(SURE_OR_NOT))
def test_a_candidate_who_says_how_sure_they_are_gets_the_examiner_s_reply(said: str) -> None:
    # The classifier reads the turn as signal_confidence (recorded for the marker); before, the
    # command stopped the turn and the examiner said nothing at all.
    h = Harness().to_q1()
    before = len(h.spoken)
    h.say(said, at=20)
    h.observe(at=21, spoken="What would the algorithm do with the next vertex?", follow_up=True)
    received = h.of("candidate_command_received")
    assert [r.command for r in received][-1:] == ["signal_confidence"], said
    assert received[-1].accepted
    assert h.texts()[before:] == ["What would the algorithm do with the next vertex?"]
    assert h.node == "q-dijkstra"


def test_an_answer_with_how_sure_the_candidate_is_keeps_its_evidence() -> None:
    h = Harness().to_q1()
    h.say("It keeps a binary heap of tentative distances. I'm quite confident about that.", at=20)
    h.observe(at=21, signals=[HEAP], spoken="And why does the order of settling matter?")
    assert [e.targetIds for e in h.of("evidence_signal") if e.nodeId == "q-dijkstra"] == [
        ["tgt-complexity"]
    ]
    assert h.texts()[-1] == "And why does the order of settling matter?"


def test_thinking_aloud_is_answered_with_time_and_its_evidence_is_kept() -> None:
    # The LLM reads the turn as thinking aloud (harmless: taken on its word). Before, the turn
    # was answered with silence and the evidence in it was lost. Now the runtime gives time in
    # its own words (no new question while the candidate thinks) and keeps what they said.
    h = Harness().to_q1()
    before = len(h.spoken)
    h.say("Let me think this through. It keeps a binary heap of tentative distances, so", at=20)
    h.observe(
        at=21,
        commandDetected="thinking_aloud",
        signals=[HEAP],
        spoken="Sure. And what about negative edge weights?",
    )
    assert h.texts()[before:] == [texts.ENGLISH.thinking_time]
    assert [e.targetIds for e in h.of("evidence_signal") if e.nodeId == "q-dijkstra"] == [
        ["tgt-complexity"]
    ]
    assert h.state.node.thinking, "no silence prompt until the candidate speaks again"


def test_the_thinking_aloud_button_is_acknowledged_in_the_room_without_words() -> None:
    # A button is the candidate's own act, acknowledged in the room ("The examiner knows you
    # are thinking aloud and will wait."): the examiner does not talk into their thinking.
    h = Harness().to_q1()
    before = len(h.spoken)
    h.at(20).command("thinking_aloud", nodeId="q-dijkstra")
    assert h.of("candidate_command_received")[-1].accepted
    assert h.texts()[before:] == []


def test_turns_that_only_say_how_unsure_the_candidate_is_are_bounded_too() -> None:
    # "I'm not sure" is recorded as the candidate's self-assessment and is still an answer
    # that adds nothing: each reply spends the follow-up budget, so the node is left within
    # the bound (a statement read as a command must not escape it).
    h = Harness().to_q1()
    unsure = [
        "Honestly, I'm not sure about that at all.",
        "I'm really not sure, sorry.",
        "That was more of a guess, to be honest.",
        "I'm not confident at all in this.",
        "No idea, to be honest, I'm just not sure.",
        "I'm not certain about any of it.",
        "I'm not sure.",
    ]
    answers = 0
    for index, text in enumerate(unsure):
        if h.node != "q-dijkstra":
            break
        answers += 1
        replies = _answer_and_observe(h, text, at=20 + 10 * index, spoken="What do you think?")
        assert replies >= 1, (index, h.types()[-8:])
    assert h.node != "q-dijkstra"
    assert answers <= MAX_FOLLOW_UPS + 2
    assert h.replayed_equal()
