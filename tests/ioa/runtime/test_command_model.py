"""The command classifier's learned stage (``ioa.runtime.command_model``, issue #31): read only
when the rules and the cue scorer read nothing, only in short turns, only when sure."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ioa.runtime.agent_boundary import candidate_command
from ioa.runtime.classifier import MAX_COMMAND_WORDS, detect_command, rules_command
from ioa.runtime.command_model import (
    MIN_PROBABILITY,
    NONE_CLASS,
    CommandModel,
    command_model,
    features,
    learned_command,
)
from ioa.schema import CandidateCommandType

LANGUAGES = ("en", "de", "es")

# Phrasings the rules and the cue scorer do not read (asserted below), from the blind set 6.
READ_BY_THE_MODEL_ONLY = [
    ("en", "I'll give this one a miss if that's alright", CandidateCommandType.SKIP),
    ("en", "what exactly do you want me to compare", CandidateCommandType.CLARIFICATION),
    ("de", "Das reicht mir für heute, schließen Sie die Prüfung bitte ab.", "finish"),
    ("es", "Muchas gracias, doy por finalizado el examen.", CandidateCommandType.FINISH),
]


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_language_has_a_model_over_the_command_types(language: str) -> None:
    model = command_model(language)

    assert model is not None
    assert NONE_CLASS in model.classes
    assert {CandidateCommandType(name) for name in model.classes if name != NONE_CLASS}
    assert len(model.weights) > 1000


def test_a_language_without_a_model_reads_nothing() -> None:
    assert command_model("xx") is None
    assert learned_command("skip this one please", "xx") is None


@pytest.mark.parametrize(("language", "text", "command"), READ_BY_THE_MODEL_ONLY)
def test_the_model_reads_what_the_rules_miss(language: str, text: str, command: str) -> None:
    assert rules_command(text, language) is None
    assert detect_command(text, language) == command
    assert candidate_command(text, language) == command


def test_a_long_answer_is_never_read_by_the_model() -> None:
    text = "I'll give this one a miss if that's alright " + "and so the heap " * 5
    assert len(text.split()) > MAX_COMMAND_WORDS
    assert detect_command(text, "en") is None


def test_a_declined_command_stays_declined() -> None:
    assert candidate_command("I don't want to give this one a miss", "en") is None


def test_the_features_are_words_pairs_ends_and_character_grams_in_order() -> None:
    found = features("Skip it, please!")

    assert found[:2] == ("f:skip", "l:please")
    assert {"w:skip", "w:it", "b:skip it", "b:it please", "c:<sk", "c:ip>", "c:<ski"} <= set(found)
    assert found.count("c:<sk") == 1 and features("the the").count("w:the") == 1
    assert features("") == ()


@given(st.text(max_size=120), st.sampled_from(LANGUAGES))
def test_any_text_gets_a_distribution_and_at_most_a_sure_command(text: str, language: str) -> None:
    model = command_model(language)
    assert model is not None
    probabilities = model.probabilities(text)

    assert math.isclose(sum(probabilities.values()), 1.0, rel_tol=1e-9)
    found = model.command(text)
    assert found is None or probabilities[found.value] >= MIN_PROBABILITY


def test_a_model_document_without_the_none_class_is_refused() -> None:
    with pytest.raises(ValueError, match="none class"):
        CommandModel.from_json({"classes": ["skip"], "bias": [0.0], "weights": {}})
