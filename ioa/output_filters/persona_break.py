"""OUT-001: the persona_break filter.

A sentence that contains a persona-break phrase ("as your examiner", "I'm an AI", "according to
the rubric", ...) is removed; the rest of the turn is kept. When nothing is left, the neutral
alternative :data:`ioa.output_filters.base.NEUTRAL_CONTINUE` is spoken instead.

Beyond the configured phrases, :data:`SELF_REFERENCE` catches the examiner talking about what it
is or what it was told, whatever the wording: its prompt, instructions, system or developer
message, rules or guidelines; being an AI, a (language) model, a chatbot, an assistant, a
program; having been told, instructed, programmed or configured. It is structural (a first- or
second-person reference next to a meta noun or verb), not a list of sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from ioa.output_filters.base import FilterContext, FilterOutcome
from ioa.output_filters.text import PhraseSet, join_sentences, normalise, sentences

_META_NOUN: Final = (
    r"(system|developer|hidden|secret|original|initial)?\s*(prompts?|instructions?|messages?|"
    r"guidelines|rules|directives|configuration|programming|brief(ing)?|task description)"
)
SELF_REFERENCE: Final = re.compile(
    r"\b(my|our) (own )?" + _META_NOUN + r"\b"
    r"|\b(system|developer|hidden|secret) (prompts?|messages?|instructions?)\b"
    r"|\bi( am|'m| was)? (just |only |merely )?(an? )?(ai|artificial intelligence|"
    r"(large )?language model|llm|chat ?bot|bot|virtual assistant|ai assistant|assistant|"
    r"computer program|program|machine)\b"
    r"|\bas an? (ai|artificial intelligence|(large )?language model|llm|chat ?bot)\b"
    r"|\bi (was|have been|am|'ve been|'m) (told|instructed|programmed|configured|prompted|"
    r"asked by (the|my) (system|developers?|university|examiners?)|trained|designed) to\b"
    r"|\b(openai|anthropic|chatgpt|gpt-?\d|claude|gemini|llama)\b"
)
"""The examiner talking about its own nature or instructions (module docstring)."""


@lru_cache(maxsize=8192)
def self_reference(text: str) -> str | None:
    """The matched words if ``text`` talks about the examiner's nature or instructions (cached:
    the pipeline checks a text and its sentences more than once)."""
    match = SELF_REFERENCE.search(normalise(text))
    return match.group(0).strip() if match else None


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
        return self._phrases.search(text) or self_reference(text)

    def apply(self, text: str, context: FilterContext) -> FilterOutcome | None:
        """Drop every sentence that breaks character; None when there is none."""
        first = self._match(text)
        if first is None:
            return None
        kept = [sentence for sentence in sentences(text) if self._match(sentence) is None]
        replacement = join_sentences(kept) if kept else context.neutral_continue
        if self._match(replacement) is not None:
            replacement = context.neutral_continue
        return FilterOutcome(replacement, f"matched persona-break phrase '{first}'")
