"""The runtime's own lines per language (ioa.runtime.texts): complete tables, chosen by the
exam's language, never English for another language."""

from __future__ import annotations

import pytest

from ioa.errors import ControllerSetupError
from ioa.languages import SUPPORTED_LANGUAGES, UnsupportedLanguageError
from ioa.runtime import texts
from ioa.runtime.plan import ExamPlan
from ioa.runtime.step import Step
from ioa.schema.loader import load_package
from tests.factories import example_document
from tests.ioa.builders import example, put
from tests.ioa.runtime.harness import Harness


def test_every_supported_language_has_a_table() -> None:
    assert set(texts.TABLES) == set(SUPPORTED_LANGUAGES)


@pytest.mark.parametrize("language", [lang for lang in SUPPORTED_LANGUAGES if lang != "en"])
def test_every_line_is_translated(language: str) -> None:
    table = texts.TABLES[language].spoken()
    english = texts.ENGLISH.spoken()
    assert table.keys() == english.keys()
    for name, line in table.items():
        assert line.strip(), name
        assert line != english[name], f"{language}.{name} is the English line"


@pytest.mark.parametrize(
    ("tag", "language"),
    [(None, "en"), ("en-GB", "en"), ("de", "de"), ("de-AT", "de"), ("es-MX", "es")],
)
def test_for_language_uses_the_primary_subtag(tag: str | None, language: str) -> None:
    assert texts.for_language(tag).language == language


def test_unsupported_language_raises_instead_of_english() -> None:
    with pytest.raises(UnsupportedLanguageError, match="'fr'"):
        texts.for_language("fr")


def test_the_plan_carries_the_exam_language_table() -> None:
    plan = ExamPlan(load_package(put(example(), "metadata.language", "de")))
    assert plan.texts is texts.GERMAN
    with pytest.raises(ControllerSetupError, match="not supported"):
        ExamPlan(load_package(put(example(), "metadata.language", "fr")))


def test_an_off_topic_turn_is_redirected_in_the_exam_language() -> None:
    """Found by the Spanish voice test's author: a German exam's topic redirect was English."""
    for package, lines in (
        ("cs201-graph-algorithms.de", texts.GERMAN),
        ("cs201-graph-algorithms.es", texts.SPANISH),
    ):
        h = Harness(example_document(package)).start()
        h.say("Hallo.", at=5)
        h.observe(
            at=6,
            spoken="By the way, did you watch the football match last night with your friends?",
        )
        said = h.texts()[-1]
        assert "Let's stay" not in said, said
        assert said.startswith(lines.topic_redirect), said


EXAMPLE_PACKAGES = (
    "cs201-graph-algorithms",
    "cs201-graph-algorithms.de",
    "cs201-graph-algorithms.es",
    "hosp210-hotel-breakfast-scenario",
    "med305-chest-pain-station",
)


@pytest.mark.parametrize("package", EXAMPLE_PACKAGES)
def test_every_fixed_opening_and_closing_is_spoken_unchanged(package: str) -> None:
    """What the package says the examiner speaks verbatim passes the output filters untouched
    (a German closing of six plain words was once taken for a change of topic)."""
    h = Harness(example_document(package))
    plan = h.controller.plan
    step = Step(plan, h.controller.state, h.controller.rng, h.controller.outbox, 0)
    for node_id, node in plan.nodes.items():
        for text in (node.opening, node.closing):
            if not text:
                continue
            result = plan.pipeline.run(text, step.filter_context(node_id))
            assert not result.interceptions, (node_id, text, result.interceptions)
