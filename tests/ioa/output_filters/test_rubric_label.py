"""Rubric level labels and outcome names as verdicts (issue #31): blocked like rubric
descriptions, while the same words in ordinary examiner sentences pass."""

from __future__ import annotations

import pytest

from ioa.output_filters import NEUTRAL_PROBE, FilterContext, OutputPipeline, RubricText
from ioa.output_filters.rubric_label import OUTCOME, label_index, verdict_label
from tests.ioa.output_filters.conftest import context_for

VERDICTS = [
    "That answer is mostly complete.",
    "That is mostly complete.",
    "Your explanation was fragmentary.",
    "I'd call that fragmentary.",
    "I would call it mostly complete, thank you.",
    "Honestly, it's fragmentary at best.",
    "Your answer seems fragmentary so far.",
    "This is a mostly complete answer.",
    "That was a fragmentary account of the selection step.",
    "Mostly complete.",
    "Fragmentary!",
    "Overall: mostly complete.",
    "Good, mostly complete.",
    "I'd rate that as complete.",
    "That counts as complete.",
    "Your reasoning is complete.",
    "Level: fragmentary.",
    "That puts you in the fragmentary band.",
    "You are at the satisfactory level.",
    "I would rate it as satisfactory.",
    "That's a partial answer.",
    "Your answer is partial.",
    "That would be a fail.",
    "That answer is excellent.",
    "I'd grade that a merit.",
    "It is absent, I'm afraid.",
    "Would you agree I'd call that fragmentary?",
    "Thank you. That answer is mostly complete. What about negative edges?",
]

ORDINARY = [
    "Could you complete the picture?",
    "Can you complete the proof for me?",
    "Is your description complete?",
    "Would you say your answer is complete?",
    "Is the algorithm complete for graphs with negative edges?",
    "That is a partial order, right?",
    "Is that a partial order?",
    "Think of a partial order on the vertices.",
    "Consider a partial solution built so far.",
    "What does a complete graph look like here?",
    "That's a complete graph, so every pair is connected.",
    "When is the shortest-path tree complete?",
    "Walk me through the run until the queue is complete.",
    "Once the search is complete, what do the distances mean?",
    "What happens when an edge is absent from the graph?",
    "How would the algorithm fail on negative edges?",
    "Would it pass through every vertex?",
    "Which structure is excellent for sparse graphs, in your view?",
    "Take your time to complete your thought.",
    "Please go on and complete the sentence.",
    "Let me know once your explanation is done.",
    "Could you give a fragment of pseudocode?",
    "What is mostly true about greedy choices here?",
    "Could you say more about the complete run on three vertices?",
    "Could you tell me a little more about your reasoning?",
    "Thank you. What would you look at next?",
]


@pytest.fixture(scope="module")
def dijkstra(flow: dict[str, object]) -> FilterContext:
    return context_for(flow, "q-dijkstra")


@pytest.mark.parametrize("text", VERDICTS)
def test_a_label_used_as_a_verdict_is_blocked(
    text: str, pipeline: OutputPipeline, dijkstra: FilterContext
) -> None:
    result = pipeline.run(text, dijkstra)
    assert [i.filter_name for i in result.interceptions][:1] == ["rubric_leak"], text
    assert "verdict" in result.interceptions[0].detail
    spoken = result.text.lower()
    assert "mostly complete" not in spoken and "fragmentary" not in spoken


@pytest.mark.parametrize("text", ORDINARY)
def test_the_same_words_in_ordinary_use_pass(
    text: str, pipeline: OutputPipeline, dijkstra: FilterContext
) -> None:
    result = pipeline.run(text, dijkstra)
    assert not [i for i in result.interceptions if i.filter_name == "rubric_leak"], text


def test_only_the_verdict_sentence_is_removed(
    pipeline: OutputPipeline, dijkstra: FilterContext
) -> None:
    result = pipeline.run(
        "Thank you. That answer is mostly complete. What about negative edges?", dijkstra
    )
    assert result.text == "Thank you. What about negative edges?"
    alone = pipeline.run("I'd call that fragmentary.", dijkstra)
    assert alone.text == NEUTRAL_PROBE


def test_labels_name_their_target_and_outcome_names_name_none() -> None:
    index = label_index(
        (
            RubricText("tgt-a", "Safe and prioritised"),
            RubricText("tgt-a", "Puts ABCDE, observations and an early ECG first."),
        )
    )
    assert verdict_label("That plan is safe and prioritised.", index) == "tgt-a"
    assert verdict_label("That's satisfactory.", index) == OUTCOME
    assert verdict_label("Is it safe and prioritised for the patient?", index) is None
    # a description is not a label: the run and paraphrase checks cover it
    assert verdict_label("That is an early ECG first.", index) is None


@pytest.mark.parametrize(
    ("label", "verdict", "ordinary"),
    [
        ("Weitgehend vollständig", "Das ist weitgehend vollständig.", "Ist die Liste vollständig?"),
        ("Casi completo", "Eso es casi completo.", "¿Está completo el recorrido?"),
    ],
)
def test_german_and_spanish_labels(label: str, verdict: str, ordinary: str) -> None:
    index = label_index((RubricText("tgt-x", label),))
    assert verdict_label(verdict, index) == "tgt-x"
    assert verdict_label(ordinary, index) is None


def test_a_node_without_labels_still_blocks_outcome_names(
    pipeline: OutputPipeline,
) -> None:
    bare = FilterContext(node_id="n", scenario_domain="shortest paths in graphs")
    assert pipeline.run("Your answer is satisfactory.", bare).changed
    assert not pipeline.run("Is a partial order enough here?", bare).changed
