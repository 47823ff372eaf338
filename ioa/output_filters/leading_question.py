"""OUT-005: the leading_question filter.

A sentence phrased to suggest the expected answer ("Wouldn't you say that X?", "X, don't you
think?") is rewritten as a balanced question: "Do you agree or disagree that X? Please explain
why." When no claim X remains, it becomes "What do you think?".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from ioa.output_filters.base import FilterContext, FilterOutcome
from ioa.output_filters.text import (
    PhraseSet,
    join_sentences,
    normalise,
    phrase_pattern,
    sentences,
    straighten,
    tidy,
)

OPEN_QUESTION: Final = "What do you think?"
_LEAD_IN: Final = re.compile(r"^(?:so|and|but|well|now)\s*,?\s+", re.IGNORECASE)
_THAT: Final = re.compile(r"^that\s+", re.IGNORECASE)
LEADING_FORMS: Final = re.compile(
    r"\b(isn'?t|is not|wasn'?t) it (obvious|clear|true|evident)( that)?\b"
    r"|\b(it'?s|it is) (obvious|clear|evident) that\b"
    r"|\b(obviously|surely)\b(?=[^.?!]*\?)"
    r"|\bas you (surely |certainly |probably )?know\b"
    r"|,\s*(right|correct|isn'?t it|doesn'?t it|don'?t you agree|wouldn'?t you agree|"
    r"agreed|yes)\s*\?\s*$",
    re.IGNORECASE,
)
"""Leading forms whatever the configured phrases: "isn't it obvious that", "surely ...?",
tag questions (", right?"). Stripped from the claim when the question is rewritten."""


@lru_cache(maxsize=8192)
def leading_form(sentence: str) -> str | None:
    """The :data:`LEADING_FORMS` words ``sentence`` uses, or None (cached: the pipeline checks a
    text and its sentences more than once)."""
    form = LEADING_FORMS.search(straighten(sentence))
    return None if form is None else form.group(0).strip(" ,?")


@dataclass(slots=True)
class LeadingQuestionFilter:
    """Rewrites leading questions into balanced, open ones."""

    patterns: Sequence[str]
    action: str = "rephrase"
    severity: str = "warning"
    name: str = "leading_question"
    rule_id: str = "OUT-005"
    _compiled: tuple[tuple[str, re.Pattern[str]], ...] = field(init=False, repr=False)
    _any: PhraseSet = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._compiled = tuple(
            (normalise(phrase), phrase_pattern(phrase)) for phrase in self.patterns if phrase
        )
        self._any = PhraseSet(self.patterns)

    def _match(self, text: str) -> str | None:
        found = self._any.search(text)
        if found is None:
            for sentence in sentences(text):
                form = leading_form(sentence)
                if form is not None:
                    return form
        return found

    def _rewrite(self, sentence: str) -> str:
        """The balanced form of one leading sentence."""
        claim = straighten(sentence)
        for _, pattern in self._compiled:
            claim = pattern.sub(" ", claim)
        claim = LEADING_FORMS.sub(" ", claim)
        claim = tidy(claim).strip(" ,;:-?!.")
        claim = _LEAD_IN.sub("", claim)
        claim = _THAT.sub("", claim).strip(" ,;:-")
        if len(claim.split()) < 2:
            return OPEN_QUESTION
        first_word = claim.split(" ", 1)[0]
        if first_word != "I" and not (len(first_word) > 1 and first_word.isupper()):
            claim = claim[0].lower() + claim[1:]
        return f"Do you agree or disagree that {claim}? Please explain why."

    def apply(self, text: str, context: FilterContext) -> FilterOutcome | None:
        """Rewrite each leading sentence; None when there is none."""
        first = self._match(text)
        if first is None:
            return None
        rewritten = [
            self._rewrite(sentence) if self._match(sentence) else sentence
            for sentence in sentences(text)
        ]
        replacement = join_sentences(rewritten)
        if self._match(replacement) is not None:
            replacement = OPEN_QUESTION
        return FilterOutcome(replacement, f"matched leading phrase '{first}'")
