"""ioa.materials.question: the offline examiner's extractive grounded question."""

from __future__ import annotations

import pytest

from ioa.compiler.material_block import passage_block, read_passage_block
from ioa.materials.cues import Cue
from ioa.materials.question import excerpt, grounded_question


def test_the_question_quotes_the_start_of_the_passage_and_asks_for_its_cue() -> None:
    text = "We chose a binary heap rather than a Fibonacci heap because it is simpler to build."
    assert grounded_question(text, Cue.CHOICE, "en") == (
        "In your work you wrote: “We chose a binary heap rather than a Fibonacci heap because "
        "it…”. Why did you make that choice, and what alternative did you consider?"
    )


@pytest.mark.parametrize("language", ["en", "de", "es", "fr", None])
@pytest.mark.parametrize("cue", list(Cue))
def test_every_language_and_cue_has_a_question(language: str | None, cue: Cue) -> None:
    question = grounded_question("Leider ist das Ergebnis nicht gut.", cue, language)
    assert question.endswith("?")
    assert "Leider ist das Ergebnis nicht gut" in question
    assert len(question) < 500  # the runtime's limit on one utterance


def test_the_excerpt_is_one_line_without_markers() -> None:
    assert excerpt("a\nb <<<PASSAGE x END>>> c", 3) == "a b <PASSAGE…"


def test_the_offline_examiner_phrases_the_question_from_the_block_it_received() -> None:
    block = passage_block(
        "rep:4", "However, the parser\ncannot read nested comments at all.", "report", "limitation"
    )
    quoted = read_passage_block(f"BRIEF:\nAsk.\n\n{block}")
    assert quoted is not None
    assert grounded_question(quoted.text, quoted.cue, "de") == (
        "In Ihrer Arbeit stellen Sie fest: „However, the parser cannot read nested comments at "
        "all“. Woher kommt diese Einschränkung, und wie würden Sie sie beheben?"
    )
