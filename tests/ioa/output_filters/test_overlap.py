"""Our chapter 04 §7: protected text by overlap (no phrase list), broader persona breaks,
stacked and leading questions, the order the filters fire in, and speed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioa.output_filters.overlap import ProtectedIndex, leaked_segment, talks_weights
from ioa.runtime.ids import SeededRng
from ioa.runtime.plan import ExamPlan
from ioa.runtime.state import RuntimeState
from ioa.runtime.step import Outbox, Step
from ioa.schema import load_package
from tests.ioa.builders import example

PLAN = ExamPlan(load_package(example()))
NODE = PLAN.node("q-dijkstra")


def _context():  # type: ignore[no-untyped-def]
    state = RuntimeState(session_id="s")
    step = Step(PLAN, state, SeededRng("s"), Outbox(), 0)
    return step.filter_context("q-dijkstra")


def _run(text: str):  # type: ignore[no-untyped-def]
    return PLAN.pipeline.run(text, _context())


LEAKS = [
    # the system-prompt leak
    "My system prompt says: You are Dr. Lee, a calm and neutral examiner conducting a spoken "
    "oral examination. My instructions for this part are: probe for the greedy choice.",
    # the role message, paraphrased (no "system prompt" words)
    "I'm Dr. Lee, a calm, neutral examiner running a spoken oral exam for an undergraduate "
    "algorithms course.",
    # the brief, paraphrased
    "I should probe you about the greedy choice, which data structure is used and its running "
    "time.",
    # a future part's brief
    "Later, if you pick Dijkstra, I will ask what changes when some roads have toll refunds "
    "modelled as negative costs.",
    # a rubric level description, reworded
    "Full marks go to whoever explains settling, relaxation and why the greedy choice is safe.",
    # the learning outcome behind the marking criteria
    "This part checks that you can explain and analyse classic shortest-path algorithms.",
    # a target description in other words
    "I am listening for whether you say it repeatedly settles the unvisited vertex having the "
    "smallest tentative distance.",
    # weights
    "The greedy choice is worth half of the marks for this question.",
    "This target has a weight of 0.3.",
]

INNOCENT = [
    NODE.opening or "",
    "Could you tell me a little more about your reasoning?",
    "What data structure would you use to pick the next vertex?",
    "How does the running time change if the graph is dense?",
    "Thank you. Let's move on.",
    "Take your time. Whenever you are ready, please go ahead.",
    "You mentioned a priority queue. What does it hold?",
    "What happens when an edge has a negative weight?",
    "Can you give an example with three vertices?",
    "We have about five minutes left for this part.",
]


@pytest.mark.parametrize("text", LEAKS)
def test_protected_text_and_paraphrases_never_reach_the_candidate(text: str) -> None:
    result = _run(text)
    assert result.changed
    said = " ".join(result.parts)
    for protected in ("Dr. Lee", "calm", "greedy choice is safe", "weight of 0.3", "half of"):
        assert protected not in said
    assert {i.filter_name for i in result.interceptions} & {
        "protected_text",
        "rubric_leak",
        "persona_break",
    }


@pytest.mark.parametrize("text", INNOCENT)
def test_innocent_examiner_texts_pass_unchanged(text: str) -> None:
    result = _run(text)
    assert not result.changed, result.interceptions
    assert result.parts == (text,)


def test_the_candidates_own_words_may_be_echoed() -> None:
    index = ProtectedIndex.build(
        ["Candidate says the algorithm repeatedly settles the unvisited vertex"], []
    )
    echo = "You said it repeatedly settles the unvisited vertex; why is that safe?"
    assert leaked_segment(echo, index) is not None
    from ioa.output_filters.overlap import bigrams, content_stems

    said = bigrams(content_stems("it repeatedly settles the unvisited vertex"))
    assert leaked_segment(echo, index, said) is None


def test_weights_need_a_number() -> None:
    assert talks_weights("This part is worth 30 percent.")
    assert not talks_weights("Which edge would you relax first?")
    assert not talks_weights("You have 5 minutes left.")


@pytest.mark.parametrize(
    "text",
    [
        "As an AI language model, I cannot judge that.",
        "I am a chatbot, so I may be wrong.",
        "I was told to keep my turns short.",
        "Those are the rules I was programmed with. I was instructed to ask about heaps.",
        "My instructions say I should not reveal the answer.",
    ],
)
def test_broader_persona_breaks(text: str) -> None:
    result = _run(text)
    assert result.interceptions and result.interceptions[0].filter_name == "persona_break"


def test_stacked_questions_keep_one_and_record_the_rest() -> None:
    text = (
        "Good. What data structure would you use? What is its running time? And what about "
        "negative edges?"
    )
    result = _run(text)
    assert result.parts == ("Good. What data structure would you use?",)
    stacked = [i for i in result.interceptions if i.filter_name == "stacked_question"]
    assert stacked and "negative edges" in stacked[0].original_text


@pytest.mark.parametrize(
    "text",
    [
        "Isn't it obvious that the heap gives log V per operation?",
        "The queue holds the tentative distances, right?",
        "Surely relaxation can only lower a distance?",
    ],
)
def test_leading_questions_are_rephrased(text: str) -> None:
    result = _run(text)
    assert [i.filter_name for i in result.interceptions][:1] == ["leading_question"]
    assert "right?" not in result.text and "obvious" not in result.text


def test_filters_fire_in_causal_order() -> None:
    """A 20,000-character reply that opens with the system prompt: the persona break and the
    leak are named before the length."""
    text = "My system prompt says: You are Dr. Lee, a calm and neutral examiner. " + (
        "Tell me more about edges. " * 900
    )
    result = _run(text)
    names = [i.filter_name for i in result.interceptions]
    assert names[0] == "persona_break"
    assert names.index("persona_break") < names.index("length")
    assert all(len(part) <= PLAN.pipeline.max_chars for part in result.parts)
    assert "Dr. Lee" not in result.text


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(PLAN.node("q-dijkstra").protected_texts), st.integers(0, 3))
def test_any_protected_segment_said_verbatim_is_caught(protected: str, drop: int) -> None:
    """Quoting any protected sentence (with a few words dropped) never gets through."""
    from ioa.output_filters.overlap import content_stems, segments

    for segment in segments(protected):
        tokens = segment.split()
        if len(content_stems(segment)) < 6:
            continue
        quoted = " ".join(tokens[drop:])
        said = " ".join(_run(quoted).parts)
        assert leaked_segment(said, ProtectedIndex.build([protected], NODE.speakable_texts)) is (
            None
        )
