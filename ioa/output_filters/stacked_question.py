"""The ``stacked_question`` filter (our chapter 04 §7): one question at a time.

A text that asks two or more questions (sentences ending with "?") keeps its first question
and what comes before it; the other questions are dropped (the guardrail event records the
original, so nothing is lost for the proctor or the marker). A text the examiner may say
verbatim (its opening, scenario or closing) is never cut.
"""

from __future__ import annotations

from dataclasses import dataclass

from ioa.output_filters.base import FilterContext, FilterOutcome
from ioa.output_filters.text import join_sentences, normalise, sentences


def questions(text: str) -> list[str]:
    """The sentences of ``text`` that are questions."""
    return [s for s in sentences(text) if s.rstrip(" \"')").endswith("?")]


@dataclass(slots=True)
class StackedQuestionFilter:
    """Keeps the first question of a stacked turn."""

    action: str = "keep_first_question"
    severity: str = "warning"
    name: str = "stacked_question"
    rule_id: str = "OUT-005"

    def apply(self, text: str, context: FilterContext) -> FilterOutcome | None:
        """Drop every question after the first; None when there is at most one."""
        asked = questions(text)
        if len(asked) < 2:
            return None
        said = normalise(text)
        if any(said in normalise(t) for t in (*context.speakable_texts, context.current_question)):
            return None
        kept: list[str] = []
        for sentence in sentences(text):
            kept.append(sentence)
            if sentence in asked:
                break
        return FilterOutcome(
            join_sentences(kept), f"{len(asked)} questions in one turn; kept the first"
        )
