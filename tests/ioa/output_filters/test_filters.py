"""OUT-001..005 one by one, the pipeline, and the configuration from the compiled flow."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioa.errors import OutputFilterConfigError
from ioa.output_filters import (
    NEUTRAL_CONTINUE,
    NEUTRAL_PROBE,
    NEUTRAL_SUPPORT,
    FilterContext,
    LengthFilter,
    OutputPipeline,
    build_filters,
    check_neutrality,
    split_text,
)
from ioa.runtime import texts
from tests.ioa.output_filters.conftest import context_for


def test_clean_text_passes_unchanged(pipeline: OutputPipeline, q1: FilterContext) -> None:
    result = pipeline.run("What data structure would you use for the frontier?", q1)
    assert result.parts == ("What data structure would you use for the frontier?",)
    assert not result.changed


@pytest.mark.parametrize(
    "text",
    [
        "As your examiner, I must say this is weak. Continue please.",
        "I'm an AI, so I can't judge. Continue please.",
        "According to the rubric you need more. Continue please.",
        "I AM AN AI. Continue please.",
        "As an AI language model I shouldn\u2019t say. Continue please.",
    ],
)
def test_persona_break_drops_the_sentence(
    pipeline: OutputPipeline, q1: FilterContext, text: str
) -> None:
    result = pipeline.run(text, q1)
    assert result.text == "Continue please."
    assert result.interceptions[0].filter_name == "persona_break"
    assert result.interceptions[0].rule_id == "OUT-001"
    assert result.interceptions[0].original_text == text


def test_persona_break_only_sentence_becomes_neutral(
    pipeline: OutputPipeline, q1: FilterContext
) -> None:
    assert pipeline.run("As your examiner, I note that.", q1).text == NEUTRAL_CONTINUE


def test_persona_patterns_match_whole_words_only(
    pipeline: OutputPipeline, q1: FilterContext
) -> None:
    assert not pipeline.run("Think of it as an aide to memory for the algorithm.", q1).changed


def test_rubric_leak_verbatim_and_near_verbatim(
    pipeline: OutputPipeline, q1: FilterContext
) -> None:
    verbatim = pipeline.run(
        "Explains settling, relaxation and why the greedy choice is safe. Go on.", q1
    )
    assert verbatim.interceptions[0].filter_name == "rubric_leak"
    assert verbatim.text == "Go on."
    near = pipeline.run(
        "Would you say a negative edge can invalidate an already settled distance?", q1
    )
    assert near.interceptions and near.interceptions[0].filter_name == "rubric_leak"
    assert near.text == NEUTRAL_PROBE


def test_echoing_the_candidate_is_not_a_rubric_leak(
    flow: dict[str, object], pipeline: OutputPipeline
) -> None:
    said = "It repeatedly settles the unvisited vertex with the smallest tentative distance."
    context = context_for(flow, "q-dijkstra", candidate=said)
    result = pipeline.run(
        "You said it settles the unvisited vertex with the smallest tentative distance. Why?",
        context,
    )
    assert not [i for i in result.interceptions if i.filter_name == "rubric_leak"]


def test_short_rubric_labels_do_not_trigger(pipeline: OutputPipeline, q1: FilterContext) -> None:
    assert not pipeline.run("Is your description complete?", q1).changed


def test_topic_drift_redirects(pipeline: OutputPipeline, q1: FilterContext) -> None:
    result = pipeline.run("What do you think about the election results this year?", q1)
    assert result.interceptions[0].filter_name == "topic_containment"
    assert result.text.startswith("Let's stay with the current question. Could you walk me")


def test_related_follow_ups_stay_on_topic(pipeline: OutputPipeline, q1: FilterContext) -> None:
    for text in (
        "How would a Fibonacci heap change the asymptotic bound?",
        "What happens if two vertices have the same tentative distance?",
        "Could you give an example with three vertices?",
    ):
        assert not pipeline.run(text, q1).changed, text


def test_off_topic_cue_used_by_the_scenario_is_allowed(pipeline: OutputPipeline) -> None:
    context = FilterContext("n", scenario_domain="Forecast the weather for the airport.")
    assert not pipeline.run("How would the weather data be modelled?", context).changed


def test_unrelated_long_sentence_drifts(pipeline: OutputPipeline, q1: FilterContext) -> None:
    result = pipeline.run(
        "Cooking pasta carefully requires boiling salted water before adding noodles.", q1
    )
    assert result.interceptions[0].filter_name == "topic_containment"


def test_length_splits_at_sentences(pipeline: OutputPipeline, q1: FilterContext) -> None:
    sentence = "Think about the vertices that are still unvisited at this point. "
    result = pipeline.run(sentence * 10, q1)
    assert len(result.parts) == 2
    assert all(len(part) <= 500 for part in result.parts)
    assert result.interceptions[-1].filter_name == "length"


def test_length_shortens_beyond_two_parts(pipeline: OutputPipeline, q1: FilterContext) -> None:
    sentence = "Think about the vertices that are still unvisited at this point. "
    result = pipeline.run(sentence * 30 + "Which vertex comes next?", q1)
    assert len(result.parts) == 2
    assert result.parts[-1].endswith("Which vertex comes next?")


def test_length_breaks_a_sentence_without_punctuation() -> None:
    parts = split_text("vertex " * 200, 100)
    assert all(len(part) <= 100 for part in parts)
    assert LengthFilter(100).parts("x" * 250) == ["x" * 100, "x" * 50]


def test_leading_question_is_rewritten(pipeline: OutputPipeline, q1: FilterContext) -> None:
    result = pipeline.run("Surely you'd agree that the heap is faster?", q1)
    assert result.text == "Do you agree or disagree that the heap is faster? Please explain why."
    assert result.interceptions[0].severity == "warning"
    assert pipeline.run("Don't you think?", q1).text == "What do you think?"


def test_neutrality_check() -> None:
    assert check_neutrality("You're doing great!") == "you're doing great"
    assert check_neutrality("That\u2019s correct.") == "that's correct"
    assert check_neutrality("Take your time.") is None
    assert check_neutrality(NEUTRAL_SUPPORT) is None


def test_every_runtime_text_passes_every_node(
    flow: dict[str, object], pipeline: OutputPipeline
) -> None:
    spoken = [text for table in texts.TABLES.values() for text in table.spoken().values()]
    assert len(spoken) == len(texts.TABLES) * len(texts.ENGLISH.spoken())
    for node in flow["nodes"]:  # type: ignore[attr-defined]
        context = context_for(flow, node["name"])
        for text in spoken:
            result = pipeline.run(text, context)
            assert not result.changed and result.parts == (text,), (node["name"], text)


def test_configuration_comes_from_the_compiled_flow(flow: dict[str, object]) -> None:
    config = copy.deepcopy(flow["outputValidationFilters"])
    names = [f.name for f in build_filters(config)]  # type: ignore[arg-type]
    assert names == [
        "persona_break",
        "rubric_leak",
        "topic_containment",
        "length",
        "leading_question",
    ]
    config["filters"][0]["patterns"] = ["banana split"]  # type: ignore[index]
    custom = OutputPipeline.from_config(config)  # type: ignore[arg-type]
    context = FilterContext("n")
    assert custom.run("A banana split. Go on.", context).text == "Go on."
    config["filters"][4]["enabled"] = False  # type: ignore[index]
    assert len(build_filters(config)) == 4  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["filters"].pop(0), "required output filter"),
        (lambda c: c["filters"][1].update(enabled=False), "cannot be disabled"),
        (lambda c: c["filters"].append({"name": "sarcasm"}), "unknown output filter"),
        (lambda c: c["filters"][3].update(maxChars=900), "maxChars"),
        (lambda c: c["filters"].append(dict(c["filters"][0])), "configured twice"),
    ],
)
def test_bad_configuration_fails_closed(
    flow: dict[str, object], edit: object, message: str
) -> None:
    config = copy.deepcopy(flow["outputValidationFilters"])
    edit(config)  # type: ignore[operator]
    with pytest.raises(OutputFilterConfigError, match=message):
        build_filters(config)  # type: ignore[arg-type]


FRAGMENTS = [
    "As your examiner, ",
    "I'm an AI. ",
    "according to the rubric ",
    "Wouldn't you say ",
    "that the heap is faster? ",
    "Explains settling, relaxation and why the greedy choice is safe. ",
    "by the way, the football ",
    "Go on. ",
    "What is the running time? ",
    "vertex ",
    "distance ",
    "You're doing great. ",
    "\u2019",
    "\n",
    "... ",
    "Consider the algorithm step by step from the source vertex. " * 5,
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=40), max_size=25))
def test_pipeline_output_is_a_fixed_point(
    pipeline: OutputPipeline, q1: FilterContext, pieces: list[str]
) -> None:
    result = pipeline.run("".join(pieces), q1)
    for part in result.parts:
        assert 0 < len(part) <= 500
        again = pipeline.run(part, q1)
        assert again.parts == (part,) and not again.changed
