"""OUT-003: the topic_containment filter.

The node's scenario domain (title, scenario, brief, opening), its evidence targets (labels,
descriptions, rubric texts: single words of them are vocabulary, never leaks) and the
candidate's own words at the node are the on-topic vocabulary. A sentence drifts when

* it uses an off-topic cue (small talk, sport, politics, personal questions...) that the
  node's vocabulary does not contain; or
* it has at least :data:`MIN_CONTENT_WORDS` content words (not function words, not the
  examiner's procedural words) and none of them belongs to the node's vocabulary (which
  includes what the examiner may say verbatim there: its opening, scenario and closing).

Drifting sentences are removed; when nothing is left the examiner redirects to the current
question (``FilterContext.redirect``, in the exam's language, then the question). The check
is deliberately conservative: a follow-up that shares even one content word with the node passes.
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
    stem,
    words,
)
from ioa.output_filters.vocabulary import OFF_TOPIC_CUES, PROCEDURAL_WORDS, STOPWORDS

MIN_CONTENT_WORDS: Final = 6


@lru_cache(maxsize=8192)
def content_stems(text: str) -> frozenset[str]:
    """Stems of the content words of ``text`` (length >= 3, not function/procedural words)."""
    return frozenset(
        stem(word)
        for word in words(text)
        if len(word) >= 3 and word not in STOPWORDS and word not in PROCEDURAL_WORDS
    )


def _content_count(text: str) -> int:
    return sum(
        1
        for word in words(text)
        if len(word) >= 3 and word not in STOPWORDS and word not in PROCEDURAL_WORDS
    )


@dataclass(slots=True)
class TopicContainmentFilter:
    """Removes sentences that leave the node's scenario domain."""

    cues: Sequence[str] = OFF_TOPIC_CUES
    action: str = "redirect"
    severity: str = "error"
    name: str = "topic_containment"
    rule_id: str = "OUT-003"
    _cue_patterns: tuple[tuple[str, re.Pattern[str]], ...] = field(init=False, repr=False)
    _any_cue: PhraseSet = field(init=False, repr=False)
    _cache: dict[tuple[object, ...], tuple[frozenset[str], str]] = field(
        default_factory=dict, init=False, repr=False
    )
    """Vocabulary and text of the node's fixed domain (scenario, rubric texts), per node."""

    def __post_init__(self) -> None:
        self._cue_patterns = tuple((normalise(cue), phrase_pattern(cue)) for cue in self.cues)
        self._any_cue = PhraseSet(self.cues)

    def _domain(self, context: FilterContext) -> tuple[frozenset[str], str]:
        key = (context.scenario_domain, context.rubric_texts)
        cached = self._cache.get(key)
        if cached is None:
            rubric = " ".join(item.text for item in context.rubric_texts)
            text = f"{context.scenario_domain} {rubric}"
            cached = (content_stems(text), normalise(text))
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[key] = cached
        return cached

    def _in_domain(self, text: str, context: FilterContext) -> bool:
        """Whether a content word of ``text`` belongs to the node's vocabulary."""
        stems = content_stems(text)
        vocabulary, _ = self._domain(context)
        if not stems.isdisjoint(vocabulary):
            return True
        return any(
            not stems.isdisjoint(content_stems(extra))
            for extra in (
                *context.extra_vocabulary,
                *context.candidate_turns,
                *context.speakable_texts,
            )
        )

    def _cue_allowed(self, pattern: re.Pattern[str], context: FilterContext) -> bool:
        _, domain_text = self._domain(context)
        if pattern.search(domain_text):
            return True
        return any(
            pattern.search(normalise(extra))
            for extra in (*context.extra_vocabulary, *context.candidate_turns)
        )

    def drift_reason(self, text: str, context: FilterContext) -> str | None:
        """Why ``text`` leaves the node's domain, or None if it stays."""
        normalised = normalise(text)
        if self._any_cue.search(text) is not None:
            for cue, pattern in self._cue_patterns:
                if pattern.search(normalised) and not self._cue_allowed(pattern, context):
                    return f"off-topic cue '{cue}'"
        count = _content_count(text)
        if count >= MIN_CONTENT_WORDS and not self._in_domain(text, context):
            return f"{count} content words, none from the node's domain"
        return None

    def apply(self, text: str, context: FilterContext) -> FilterOutcome | None:
        """Drop drifting sentences and redirect if nothing is left; None when on topic."""
        reason = self.drift_reason(text, context)
        if reason is None:
            return None
        kept = [s for s in sentences(text) if self.drift_reason(s, context) is None]
        replacement = join_sentences(kept)
        if not kept or self.drift_reason(replacement, context) is not None:
            question = context.current_question.strip()
            replacement = (
                f"{context.redirect} {question}"
                if question and self.drift_reason(question, context) is None
                else context.redirect
            )
        if not replacement:
            replacement = context.neutral_continue
        return FilterOutcome(replacement, reason)
