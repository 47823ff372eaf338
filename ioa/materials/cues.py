"""The cue words that make a sentence state a choice, a result or a limitation
(candidate-materials.md §4.1). English always applies; German and Spanish add their own.

Cues decide only which sentences are eligible for a draw, never anything else. A sentence that
matches several kinds takes the first of choice, result, limitation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Final


class Cue(StrEnum):
    """What a passage states."""

    CHOICE = "choice"
    RESULT = "result"
    LIMITATION = "limitation"


def _phrases(*words: str) -> re.Pattern[str]:
    alternatives = "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


_PERCENT: Final = r"\d+(?:[.,]\d+)?\s?%"

_CUES: Final[Mapping[str, Mapping[Cue, re.Pattern[str]]]] = {
    "en": {
        Cue.CHOICE: _phrases(
            "we chose",
            "i chose",
            "chose to",
            "decided",
            "decision",
            "opted",
            "instead of",
            "rather than",
            "in favour of",
            "in favor of",
            "we selected",
            "i selected",
            "we picked",
            "i picked",
            "trade-off",
            "tradeoff",
            "we went with",
            "i went with",
        ),
        Cue.RESULT: re.compile(
            _phrases(
                "results show",
                "the results",
                "our results",
                "we found",
                "i found",
                "achieved",
                "achieves",
                "improved",
                "improves",
                "reduced",
                "reduces",
                "increased",
                "increases",
                "outperforms",
                "outperformed",
                "accuracy",
                "faster",
                "slower",
                "percent",
                "per cent",
                "speed-up",
                "speedup",
            ).pattern
            + rf"|{_PERCENT}",
            re.IGNORECASE,
        ),
        Cue.LIMITATION: _phrases(
            "limitation",
            "limitations",
            "limited",
            "however",
            "does not",
            "doesn't",
            "do not",
            "cannot",
            "can't",
            "could not",
            "couldn't",
            "unfortunately",
            "drawback",
            "downside",
            "only works",
            "future work",
            "fails",
            "failed",
            "weakness",
        ),
    },
    "de": {
        Cue.CHOICE: _phrases(
            "entschieden",
            "entscheidung",
            "gewählt",
            "statt",
            "anstatt",
            "stattdessen",
            "zugunsten",
        ),
        Cue.RESULT: _phrases(
            "ergebnis",
            "ergebnisse",
            "erreicht",
            "verbessert",
            "reduziert",
            "erhöht",
            "schneller",
            "langsamer",
            "prozent",
            "genauigkeit",
        ),
        Cue.LIMITATION: _phrases(
            "einschränkung",
            "einschränkungen",
            "jedoch",
            "leider",
            "nachteil",
            "funktioniert nicht",
            "nicht möglich",
            "schwäche",
        ),
    },
    "es": {
        Cue.CHOICE: _phrases(
            "elegí",
            "elegimos",
            "decidí",
            "decidimos",
            "decisión",
            "en lugar de",
            "en vez de",
            "optamos",
            "opté",
            "escogimos",
        ),
        Cue.RESULT: _phrases(
            "resultado",
            "resultados",
            "logramos",
            "logré",
            "mejoró",
            "mejora",
            "redujo",
            "aumentó",
            "más rápido",
            "por ciento",
            "precisión",
        ),
        Cue.LIMITATION: _phrases(
            "limitación",
            "limitaciones",
            "sin embargo",
            "desafortunadamente",
            "lamentablemente",
            "desventaja",
            "no funciona",
            "no pudimos",
            "debilidad",
        ),
    },
}

_ORDER: Final = (Cue.CHOICE, Cue.RESULT, Cue.LIMITATION)


def cue_languages(language: str | None) -> tuple[str, ...]:
    """The cue tables that apply: English, and the material's language if it has one."""
    base = (language or "en").split("-", 1)[0].lower()
    return ("en",) if base == "en" or base not in _CUES else ("en", base)


def cue_of(sentence: str, language: str | None = None) -> Cue | None:
    """What ``sentence`` states by its cue words (first of choice, result, limitation), or
    None when it has no cue."""
    tables = [_CUES[name] for name in cue_languages(language)]
    for cue in _ORDER:
        if any(table[cue].search(sentence) for table in tables):
            return cue
    return None
