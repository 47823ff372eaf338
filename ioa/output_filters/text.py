"""Text helpers shared by the output filters: normalisation, words, sentences, n-grams.

Everything is deterministic and locale-free: lower-casing with ``str.lower``, words are runs of
ASCII letters and digits (apostrophes inside words are dropped, ``don't`` -> ``dont``), and
sentences end at ``.``, ``!`` or ``?`` followed by white space.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Final

_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_QUOTES: Final = str.maketrans({"\u201c": '"', "\u201d": '"'})
_WORD: Final = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
"""A word: a run of letters or digits in any script (``größer``, ``también``), inner
apostrophes kept."""
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+")


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """Lower-case ``text`` with straight quotes and single spaces (for phrase matching)."""
    return " ".join(text.translate(_APOSTROPHES).translate(_QUOTES).split()).lower()


def straighten(text: str) -> str:
    """``text`` with straight quotes and single spaces, case kept."""
    return " ".join(text.translate(_APOSTROPHES).translate(_QUOTES).split())


def tidy(text: str) -> str:
    """``text`` with runs of white space collapsed and the ends stripped (for speaking)."""
    return " ".join(text.split())


@lru_cache(maxsize=8192)
def words(text: str) -> tuple[str, ...]:
    """The words of ``text``: lower-case alphanumeric runs, apostrophes removed (cached: the
    same turn and target texts are read on every turn)."""
    return tuple(match.replace("'", "") for match in _WORD.findall(normalise(text)))


def stem(word: str) -> str:
    """A crude, deterministic stem so that ``edges``/``edge`` and ``relaxes``/``relax`` meet."""
    if word.endswith("ices") and len(word) > 5:
        return word[:-4] + "ex"
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix == "ies" else base
    return word


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (keeping their punctuation); empty pieces are dropped."""
    return list(_sentences(text))


@lru_cache(maxsize=8192)
def _sentences(text: str) -> tuple[str, ...]:
    """:func:`sentences`, cached: every filter splits the same utterance."""
    return tuple(
        piece for piece in (part.strip() for part in _SENTENCE_END.split(tidy(text))) if piece
    )


def ngrams(tokens: Sequence[str], size: int) -> set[tuple[str, ...]]:
    """The set of ``size``-grams of ``tokens``."""
    return {tuple(tokens[index : index + size]) for index in range(len(tokens) - size + 1)}


def contains_phrase(text: str, phrase: str) -> bool:
    """True when ``phrase`` occurs in ``text`` as whole words (case- and quote-insensitive)."""
    pattern = phrase_pattern(phrase)
    return pattern.search(normalise(text)) is not None


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A compiled whole-word, case-insensitive pattern for ``phrase``; match it against
    :func:`normalise`'d or :func:`straighten`'d text."""
    body = re.escape(normalise(phrase)).replace(r"\ ", r"\s+")
    return re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])", re.IGNORECASE)


def phrases_pattern(phrases: Iterable[str]) -> re.Pattern[str] | None:
    """One whole-word, case-insensitive pattern matching any of ``phrases`` (None if there are
    none); ``match.group(0)`` is the text that matched."""
    bodies = [re.escape(normalise(p)).replace(r"\ ", r"\s+") for p in phrases if p.strip()]
    if not bodies:
        return None
    bodies.sort(key=len, reverse=True)
    return re.compile(rf"(?<![a-z0-9])(?:{'|'.join(bodies)})(?![a-z0-9])", re.IGNORECASE)


class PhraseSet:
    """Whole-word, case- and quote-insensitive search for any of a set of phrases.

    A cheap word-set test runs first (a phrase can only match if its first word occurs in the
    text), so long texts that contain none of the phrases never reach the regular expression.
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        kept = [p for p in phrases if words(p)]
        self.pattern = phrases_pattern(kept)
        self.first_words = frozenset(words(p)[0] for p in kept)

    def search(self, text: str) -> str | None:
        """The (normalised) phrase found in ``text``, or None."""
        if self.pattern is None or self.first_words.isdisjoint(words(text)):
            return None
        found = self.pattern.search(normalise(text))
        return found.group(0) if found else None


def any_phrase(text: str, patterns: Iterable[re.Pattern[str]]) -> re.Pattern[str] | None:
    """The first pattern that matches the normalised ``text``, or None."""
    normalised = normalise(text)
    for pattern in patterns:
        if pattern.search(normalised):
            return pattern
    return None


def join_sentences(parts: Iterable[str]) -> str:
    """Join sentences with single spaces."""
    return " ".join(part for part in parts if part)
