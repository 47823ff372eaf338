"""The runtime's own lines per language (ioa.runtime.texts): complete tables, chosen by the
exam's language, never English for another language."""

from __future__ import annotations

import pytest

from ioa.errors import ControllerSetupError
from ioa.languages import SUPPORTED_LANGUAGES, UnsupportedLanguageError
from ioa.runtime import texts
from ioa.runtime.plan import ExamPlan
from ioa.schema.loader import load_package
from tests.ioa.builders import example, put


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
