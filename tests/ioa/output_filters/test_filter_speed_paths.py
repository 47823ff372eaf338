"""The output filters' fast paths give the answers of the slow ones (issue #31: the controller's
tail): the speakable discount applied when a segment is compared, the candidate's bigrams grown
turn by turn, and the verdict patterns skipped for sentences without a label's first word."""

from __future__ import annotations

import dataclasses

import pytest

from ioa.output_filters.base import RubricText
from ioa.output_filters.overlap import (
    MIN_CONTAINMENT,
    MIN_SEGMENT_BIGRAMS,
    MIN_SHARED,
    ProtectedIndex,
    ProtectedTextFilter,
    leaked_segment,
    segments,
    text_bigrams,
)
from ioa.output_filters.rubric_label import label_index, verdict_label
from ioa.output_filters.text import sentences

PROTECTED = (
    "You are Dr. Lee, a calm and neutral examiner conducting a spoken oral examination.\n"
    "- Probe for the greedy choice, the data structure used and its running time.",
    "Candidate says the algorithm repeatedly settles the unvisited vertex with the smallest "
    "tentative distance and relaxes its outgoing edges.",
    "Explains settling, relaxation and why the greedy choice is safe.",
)
SPEAKABLE = (
    "Which data structure is used and what is its running time?",
    "Explain how the algorithm settles the unvisited vertex with the smallest tentative distance.",
)
SPOKEN = [
    "I should probe you about the greedy choice, which data structure is used and its running "
    "time.",
    "I am listening for whether you say it repeatedly settles the unvisited vertex having the "
    "smallest tentative distance.",
    "Which data structure is used and what is its running time?",
    "Full marks go to whoever explains settling, relaxation and why the greedy choice is safe.",
    "Could you tell me a little more about your reasoning?",
    "I'm Dr. Lee, a calm, neutral examiner running a spoken oral exam.",
]


def _reference(
    text: str, speakable: tuple[str, ...], candidate: frozenset[tuple[str, str]]
) -> int | None:
    """The protected-text check as it was: the discount applied when the index is built."""
    allowed: set[tuple[str, str]] = set()
    for item in speakable:
        allowed |= text_bigrams(item)
    items: list[tuple[int, frozenset[tuple[str, str]]]] = []
    for source, protected in enumerate(PROTECTED):
        for segment in segments(protected):
            features = text_bigrams(segment) - allowed
            if len(features) >= MIN_SEGMENT_BIGRAMS:
                items.append((source, features))
    spoken = text_bigrams(text) - candidate - allowed
    for source, features in items:
        shared = len(spoken & features)
        if shared >= MIN_SHARED and shared / len(features) >= MIN_CONTAINMENT:
            return source
    return None


@pytest.mark.parametrize("speakable", [(), SPEAKABLE[:1], SPEAKABLE])
@pytest.mark.parametrize("text", SPOKEN)
def test_the_discount_at_comparison_finds_what_the_discounted_index_found(
    text: str, speakable: tuple[str, ...]
) -> None:
    index = ProtectedIndex.build(PROTECTED, speakable)
    for candidate in (frozenset(), text_bigrams(SPOKEN[0])):
        found = leaked_segment(text, index, candidate)
        expected = _reference(text, speakable, candidate)
        # the same leak or none (which segment is named first may follow set order)
        assert (found is None) == (expected is None)


def test_the_candidates_bigrams_grow_with_new_turns_and_restart_on_another_node() -> None:
    flt = ProtectedTextFilter()
    turns: tuple[str, ...] = ()
    for said in SPOKEN:
        turns = (*turns, said)
        assert flt._candidate(turns) == frozenset().union(*(text_bigrams(t) for t in turns))
    other = (SPOKEN[3], SPOKEN[1])
    assert flt._candidate(other) == text_bigrams(SPOKEN[3]) | text_bigrams(SPOKEN[1])
    assert flt._candidate(()) == frozenset()


LABELS = (
    RubricText("tgt-a", "Complete"),
    RubricText("tgt-a", "Mostly complete"),
    RubricText("tgt-a", "Fragmentary"),
    RubricText("tgt-b", "Absent"),
)
VERDICTS = [
    "That answer is mostly complete.",
    "I'd call that fragmentary.",
    "Overall: fragmentary.",
    "THAT ANSWER IS EXCELLENT!",
    "Your explanation sounds complete, thank you.",
    "Could you complete the picture?",
    "It is a partial order.",
    "Consider each step the algorithm takes from the source vertex onwards.",
    "What happens next?",
    "That answer is \u017fatisfactory.",  # a long s: not ASCII, the patterns decide
    "Das ist größtenteils richtig.",
]


@pytest.mark.parametrize("labels", [LABELS, (*LABELS, RubricText("tgt-c", "Größtenteils richtig"))])
def test_verdicts_are_the_same_with_and_without_the_first_word_test(
    labels: tuple[RubricText, ...],
) -> None:
    index = label_index(labels)
    assert (index.first_words is None) == any(not t.text.isascii() for t in labels)
    patterns_only = dataclasses.replace(index, first_words=None)
    for text in VERDICTS:
        for sentence in sentences(text):
            assert verdict_label(sentence, index) == verdict_label(sentence, patterns_only)
    assert verdict_label("That answer is mostly complete.", index) == "tgt-a"
