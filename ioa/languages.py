"""The languages an exam can be conducted in, and how a package's BCP 47 tag maps to one.

An exam's language (``metadata.language``, a BCP 47 tag; ``en`` when absent) decides the
candidate's pages, the runtime's procedural lines (:mod:`ioa.runtime.texts`), the safety-net
classifier's vocabulary (:mod:`ioa.runtime.classifier`) and the offline voice. Only the primary
language subtag matters for those: ``de-AT`` and ``de-CH`` are conducted with the ``de`` tables.
A tag whose primary language is not in :data:`SUPPORTED_LANGUAGES` is refused at publish time
(rule PKG-016), never silently conducted in English.
"""

from __future__ import annotations

import re
from typing import Final

DEFAULT_LANGUAGE: Final = "en"
"""The language of a package that declares none."""

SUPPORTED_LANGUAGES: Final = ("en", "de", "es")
"""Languages with full runtime tables, classifier vocabulary and candidate-page translations."""


LANGUAGE_NAMES: Final = {"en": "English", "de": "German", "es": "Spanish"}
"""English names of the supported languages (for instructions to the LLM)."""

_DIRECTIVE: Final = re.compile(r"Conduct the whole examination in [A-Za-z]+ \(([a-z]{2,3})\)")


def language_directive(language: str) -> str:
    """The instruction, appended to the LLM's role message, to examine in ``language``."""
    name = LANGUAGE_NAMES.get(language, language)
    return (
        f"Conduct the whole examination in {name} ({language}): every question, follow-up and "
        f"remark you make, and the spokenText you report, are in {name}, whatever language the "
        "candidate uses."
    )


def directive_language(text: str) -> str | None:
    """The language a role message's :func:`language_directive` names, or None."""
    match = _DIRECTIVE.search(text)
    return match.group(1) if match else None


def primary_language(tag: str | None) -> str:
    """The lower-cased primary language subtag of ``tag`` (``de-AT`` → ``de``); the default
    language for no tag."""
    if not tag:
        return DEFAULT_LANGUAGE
    return tag.replace("_", "-").split("-", 1)[0].lower()


def supported_language(tag: str | None) -> str | None:
    """The supported language an exam tagged ``tag`` is conducted in, or None if there is none."""
    language = primary_language(tag)
    return language if language in SUPPORTED_LANGUAGES else None


def exam_language(tag: str | None) -> str:
    """The language an exam tagged ``tag`` runs in. A published package's tag is supported (the
    publication gate checks it); an unsupported one raises rather than falling back to English."""
    language = supported_language(tag)
    if language is None:
        raise UnsupportedLanguageError(tag or "")
    return language


class UnsupportedLanguageError(ValueError):
    """A package's language has no runtime tables (it should not have been published)."""

    def __init__(self, tag: str) -> None:
        super().__init__(
            f"exam language {tag!r} is not supported; supported: {', '.join(SUPPORTED_LANGUAGES)}"
        )
        self.tag = tag
