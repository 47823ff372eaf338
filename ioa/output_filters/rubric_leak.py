"""OUT-002: the rubric_leak filter.

``spokenText`` is compared with every target description and rubric level text of the node.
A sentence leaks when, after discounting word sequences the candidate said themselves:

* it shares a run of at least :data:`MIN_RUN` consecutive words with a protected text, at least
  :data:`MIN_RUN_CONTENT` of which are content words (near-verbatim quotation); or
* it contains at least :data:`MIN_CONTAINMENT` of the word trigrams of a protected text that has
  at least :data:`MIN_TRIGRAMS` trigrams (a close paraphrase).

A sentence also leaks when it uses a rubric level label or an outcome name as a verdict about
the candidate ("That answer is mostly complete", ``ioa.output_filters.rubric_label``); the
same words in ordinary use ("Could you complete the picture?", "a partial order") pass.

Leaking sentences are removed; when nothing is left, a neutral probe is asked instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from ioa.output_filters.base import FilterContext, FilterOutcome, RubricText
from ioa.output_filters.rubric_label import OUTCOME, label_index, verdict_label
from ioa.output_filters.text import join_sentences, ngrams, sentences, words
from ioa.output_filters.vocabulary import STOPWORDS

MIN_RUN: Final = 5
MIN_RUN_CONTENT: Final = 3
MIN_TRIGRAMS: Final = 3
MIN_CONTAINMENT: Final = 0.5


@dataclass(frozen=True, slots=True)
class _Protected:
    target_id: str
    tokens: tuple[str, ...]
    trigrams: frozenset[tuple[str, ...]]


class _CandidateWords:
    """The candidate's words at the node as one padded string, built on first use (only when
    a text shares trigrams with protected content), for fast "did they say this?" checks."""

    def __init__(self, turns: tuple[str, ...]) -> None:
        self._turns = turns
        self._joined: str | None = None

    def said(self, tokens: Sequence[str]) -> bool:
        if self._joined is None:
            self._joined = _joined_words(self._turns)
        return f" {' '.join(tokens)} " in self._joined


@lru_cache(maxsize=64)
def _joined_words(turns: tuple[str, ...]) -> str:
    """The words of ``turns`` as one padded string (cached: the node's turns are the same for
    every check of an utterance, and the string grows with the node's turns)."""
    return " " + " ".join(" ".join(words(turn)) for turn in turns) + " "


def _longest_shared_run(
    spoken: Sequence[str], protected: Sequence[str], candidate: _CandidateWords
) -> int:
    """Length of the longest run of words shared by both sequences that has enough content
    words and was not said by the candidate (runs are grown from shared words only)."""
    positions: dict[str, list[int]] = {}
    for j, token in enumerate(protected):
        positions.setdefault(token, []).append(j)
    best = 0
    for i, token in enumerate(spoken):
        for j in positions.get(token, ()):
            if i and j and spoken[i - 1] == protected[j - 1]:
                continue  # not the start of a run
            length = 1
            while (
                i + length < len(spoken)
                and j + length < len(protected)
                and spoken[i + length] == protected[j + length]
            ):
                length += 1
            if length >= MIN_RUN and length > best:
                run = tuple(spoken[i : i + length])
                content = sum(1 for word in run if word not in STOPWORDS)
                if content >= MIN_RUN_CONTENT and not _said_by_candidate(run, candidate):
                    best = length
    return best


def _said_by_candidate(run: tuple[str, ...], candidate: _CandidateWords) -> bool:
    """True when every 5-word window of ``run`` occurs in the candidate's words."""
    windows = ngrams(run, MIN_RUN)
    return bool(windows) and all(candidate.said(window) for window in windows)


@dataclass(slots=True)
class RubricLeakFilter:
    """Removes sentences that quote or closely paraphrase protected rubric content."""

    action: str = "intercept"
    severity: str = "error"
    name: str = "rubric_leak"
    rule_id: str = "OUT-002"
    _cache: dict[tuple[RubricText, ...], tuple[_Protected, ...]] = field(
        default_factory=dict, init=False, repr=False
    )

    def _protected(self, texts: tuple[RubricText, ...]) -> tuple[_Protected, ...]:
        cached = self._cache.get(texts)
        if cached is None:
            items = []
            for item in texts:
                tokens = tuple(words(item.text))
                if len(tokens) >= MIN_RUN - 1:
                    items.append(_Protected(item.target_id, tokens, frozenset(ngrams(tokens, 3))))
            cached = tuple(items)
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[texts] = cached
        return cached

    def leaked_target(self, text: str, context: FilterContext) -> str | None:
        """The id of the target whose protected text ``text`` leaks (``outcome`` for an
        outcome name used as a verdict), or None."""
        found = self._leak(text, context)
        return None if found is None else found[0]

    def _leak(self, text: str, context: FilterContext) -> tuple[str, str] | None:
        """(target, why) of the first leak in ``text``: a label used as a verdict, else a
        quoted or paraphrased description (module docstring)."""
        labels = label_index(context.rubric_texts)
        for sentence in sentences(text):
            target = verdict_label(sentence, labels)
            if target == OUTCOME:
                return target, "an outcome name used as a verdict"
            if target is not None:
                return target, f"a rubric level label of target {target} used as a verdict"
        described = self._described(text, context)
        if described is None:
            return None
        return described, f"near-verbatim rubric content of target {described}"

    def _described(self, text: str, context: FilterContext) -> str | None:
        """The target whose description or level description ``text`` quotes or closely
        paraphrases, or None."""
        protected = self._protected(context.rubric_texts)
        if not protected:
            return None
        spoken = words(text)
        if len(spoken) < MIN_RUN - 1:
            return None
        all_trigrams = ngrams(spoken, 3)
        if not any(item.trigrams & all_trigrams for item in protected):
            return None  # fast path: a shared run or a paraphrase needs shared trigrams
        candidate = _CandidateWords(context.candidate_turns)
        for item in protected:
            common = item.trigrams & all_trigrams
            if not common:
                continue
            if _longest_shared_run(spoken, item.tokens, candidate) >= MIN_RUN:
                return item.target_id
            if len(item.trigrams) >= MIN_TRIGRAMS and len(common) / len(item.trigrams) >= (
                MIN_CONTAINMENT
            ):
                shared = sum(1 for trigram in common if not candidate.said(trigram))
                if shared / len(item.trigrams) >= MIN_CONTAINMENT:
                    return item.target_id
        return None

    def apply(self, text: str, context: FilterContext) -> FilterOutcome | None:
        """Drop leaking sentences; None when nothing leaks."""
        leak = self._leak(text, context)
        if leak is None:
            return None
        kept = [
            sentence
            for sentence in sentences(text)
            if self.leaked_target(sentence, context) is None
        ]
        replacement = join_sentences(kept)
        if not kept or self.leaked_target(replacement, context) is not None:
            replacement = context.neutral_probe
        return FilterOutcome(replacement, leak[1])
