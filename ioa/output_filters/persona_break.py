"""OUT-001: the persona_break filter.

A sentence that contains a persona-break phrase ("as your examiner", "I'm an AI", "according to
the rubric", ...) is removed; the rest of the turn is kept. When nothing is left, the neutral
alternative :data:`ioa.output_filters.base.NEUTRAL_CONTINUE` is spoken instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ioa.output_filters.base import NEUTRAL_CONTINUE, FilterContext, FilterOutcome
from ioa.output_filters.text import PhraseSet, join_sentences, sentences


@dataclass(slots=True)
class PersonaBreakFilter:
    """Removes sentences in which the LLM steps out of the examiner persona."""

    patterns: Sequence[str]
    action: str = "replace"
    severity: str = "error"
    name: str = "persona_break"
    rule_id: str = "OUT-001"
    _phrases: PhraseSet = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._phrases = PhraseSet(self.patterns)

    def _match(self, text: str) -> str | None:
        return self._phrases.search(text)

    def apply(self, text: str, context: FilterContext) -> FilterOutcome | None:
        """Drop every sentence that breaks character; None when there is none."""
        first = self._match(text)
        if first is None:
            return None
        kept = [sentence for sentence in sentences(text) if self._match(sentence) is None]
        replacement = join_sentences(kept) if kept else NEUTRAL_CONTINUE
        if self._match(replacement) is not None:
            replacement = NEUTRAL_CONTINUE
        return FilterOutcome(replacement, f"matched persona-break phrase '{first}'")
