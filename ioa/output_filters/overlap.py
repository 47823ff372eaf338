"""OUT-002 beyond the rubric: the ``protected_text`` filter (our chapter 04 §7).

Nothing the LLM was told in confidence may reach the candidate: the role message, the task
messages (briefs, evidence lines, constraints, the do/don't blocks), every node's prompt seed,
target labels and descriptions, rubric level labels and descriptions, marking criteria and
learning-outcome texts. No phrase list: every such text is split into segments (sentences and
lines) and compared with each spoken sentence by **content-word bigram overlap**:

* words are normalised (lower case, straight quotes), stemmed (``ioa.output_filters.text.stem``)
  and function words are dropped (``vocabulary.STOPWORDS``); a segment's features are the
  bigrams of its remaining content words, so "the data structure used" and "which data
  structure is used" share ``(data, structur)``;
* bigrams the candidate said at this node, and bigrams of the speakable texts (the question
  being asked, the node's opening, scenario and closing) are discounted: the examiner may echo
  the candidate and repeat its own question;
* a sentence **leaks** a segment when it shares at least :data:`MIN_SHARED` of the segment's
  bigrams and at least :data:`MIN_CONTAINMENT` of them (a close paraphrase or a quotation).

Weights are numbers, not words: a sentence that talks about marks, weights or points together
with a number or a fraction leaks the weighting (:data:`WEIGHT_TALK`).

Thresholds (tested in ``tests/ioa/output_filters/test_overlap.py`` with paraphrases that must be
caught and innocent examiner questions that must pass): ``MIN_SHARED = 3``,
``MIN_CONTAINMENT = 0.4``. Segments with fewer than 3 bigrams are not compared (too short to say
anything confidential: "Absent", "Complete").

Cost: the protected side is indexed once per tuple of protected texts (shared by every session
of a package), the speakable discount once per question (its bigrams only); texts' bigrams are
cached. A spoken sentence costs one pass over its words and a count per segment sharing a
bigram.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import Final

from ioa.output_filters.base import FilterContext, FilterOutcome
from ioa.output_filters.text import join_sentences, normalise, sentences, stem, words
from ioa.output_filters.vocabulary import STOPWORDS

MIN_SHARED: Final = 3
MIN_CONTAINMENT: Final = 0.4
MIN_SEGMENT_BIGRAMS: Final = 3

WEIGHT_TALK: Final = re.compile(
    r"\b(weight(ed|s|ing)?|worth|marks?|points?|percent|per cent|score[sd]?|grad(e|ed|ing)|"
    r"rubric|marking scheme)\b.{0,60}(\d|%|\bhalf\b|\bthird\b|\bquarter\b)|"
    r"(\d|%|\bhalf\b|\bthird\b|\bquarter\b).{0,60}\b(weight(ed|s|ing)?|of the marks|points|"
    r"of (your|the) (grade|score))\b"
)
"""Talk about how the answer is weighted or scored, with a number or fraction."""

Bigram = tuple[str, str]


@lru_cache(maxsize=8192)
def content_stems(text: str) -> tuple[str, ...]:
    """The stemmed content words of ``text``, in order (cached: the same protected, speakable
    and candidate texts are read at every utterance)."""
    return tuple(stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1)


def bigrams(tokens: Sequence[str]) -> frozenset[Bigram]:
    """Adjacent pairs of ``tokens``."""
    return frozenset(pairwise(tokens))


@lru_cache(maxsize=8192)
def text_bigrams(text: str) -> frozenset[Bigram]:
    """The content-word bigrams of ``text`` (cached)."""
    return bigrams(content_stems(text))


def segments(text: str) -> list[str]:
    """Sentences and lines of a protected text (task messages are line-structured)."""
    found: list[str] = []
    for line in text.splitlines():
        line = line.strip(" -*\t")
        if line:
            found.extend(sentences(line))
    return found


@dataclass(frozen=True, slots=True)
class _Segment:
    source: int
    features: frozenset[Bigram]


@dataclass(frozen=True, slots=True)
class _Segments:
    """The segments of the protected texts with their bigrams before any discount, and which
    segments each bigram occurs in (built once per tuple of protected texts)."""

    segments: tuple[_Segment, ...]
    by_bigram: dict[Bigram, tuple[int, ...]]


@lru_cache(maxsize=64)
def _protected_segments(protected: tuple[str, ...]) -> _Segments:
    items: list[_Segment] = []
    index: dict[Bigram, list[int]] = {}
    for source, text in enumerate(protected):
        for segment in segments(text):
            features = text_bigrams(segment)
            if len(features) < MIN_SEGMENT_BIGRAMS:  # cannot reach it after a discount
                continue
            for feature in features:
                index.setdefault(feature, []).append(len(items))
            items.append(_Segment(source, features))
    return _Segments(tuple(items), {k: tuple(v) for k, v in index.items()})


@dataclass(frozen=True, slots=True)
class ProtectedIndex:
    """The protected segments of one context and the speakable bigrams discounted from them.

    A segment's features are its bigrams minus the speakable ones; segments left with fewer
    than :data:`MIN_SEGMENT_BIGRAMS` are not compared. The segments are indexed once per tuple
    of protected texts (:func:`_protected_segments`, shared by every session of a package) and
    the discount is applied when a segment is compared, so a new question costs only its own
    bigrams, not a rebuild of the protected side.
    """

    protected: _Segments
    speakable: frozenset[Bigram]
    _sizes: dict[int, int] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, protected: Iterable[str], speakable: Iterable[str]) -> ProtectedIndex:
        allowed: frozenset[Bigram] = frozenset().union(*(text_bigrams(t) for t in speakable))
        return cls(_protected_segments(tuple(protected)), allowed)

    def size(self, position: int) -> int:
        """How many features segment ``position`` keeps after the speakable discount."""
        found = self._sizes.get(position)
        if found is None:
            features = self.protected.segments[position].features
            found = self._sizes[position] = (
                len(features - self.speakable)
                if not self.speakable.isdisjoint(features)
                else len(features)
            )
        return found


def leaked_segment(
    text: str, index: ProtectedIndex, candidate: frozenset[Bigram] = frozenset()
) -> int | None:
    """The protected source ``text`` leaks (its position in the protected texts), or None."""
    spoken = text_bigrams(text) - candidate - index.speakable
    by_bigram = index.protected.by_bigram
    counts: dict[int, int] = {}
    for feature in spoken:
        for position in by_bigram.get(feature, ()):
            counts[position] = counts.get(position, 0) + 1
    for position, shared in counts.items():
        if shared < MIN_SHARED:
            continue
        size = index.size(position)
        # ``shared`` counts spoken bigrams, never speakable ones: the same count as over the
        # discounted features
        if size >= MIN_SEGMENT_BIGRAMS and shared / size >= MIN_CONTAINMENT:
            return index.protected.segments[position].source
    return None


@lru_cache(maxsize=8192)
def talks_weights(text: str) -> bool:
    """Whether ``text`` talks about marks or weights with a number (:data:`WEIGHT_TALK`;
    cached)."""
    return WEIGHT_TALK.search(normalise(text)) is not None


@dataclass(slots=True)
class ProtectedTextFilter:
    """Removes sentences that quote or paraphrase protected text, or talk about weights."""

    action: str = "intercept"
    severity: str = "error"
    name: str = "protected_text"
    rule_id: str = "OUT-002"
    _cache: dict[tuple[tuple[str, ...], tuple[str, ...]], ProtectedIndex] = field(
        default_factory=dict, init=False, repr=False
    )
    _candidate_key: tuple[str, ...] | None = field(default=None, init=False, repr=False)
    _candidate_bigrams: frozenset[Bigram] = field(default=frozenset(), init=False, repr=False)

    def _index(self, context: FilterContext) -> ProtectedIndex:
        speakable = (*context.speakable_texts, context.current_question)
        key = (context.protected_texts, speakable)
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) > 64:
                self._cache.clear()
            found = self._cache[key] = ProtectedIndex.build(context.protected_texts, speakable)
        return found

    def _candidate(self, turns: tuple[str, ...]) -> frozenset[Bigram]:
        """The bigrams the candidate said at this node (the last tuple's, cached; a tuple that
        extends the last one adds only its new turns)."""
        key = self._candidate_key
        if key == turns:
            return self._candidate_bigrams
        if key is not None and len(turns) > len(key) and turns[: len(key)] == key:
            found = self._candidate_bigrams.union(*(text_bigrams(t) for t in turns[len(key) :]))
        else:
            found = frozenset().union(*(text_bigrams(t) for t in turns))
        self._candidate_key, self._candidate_bigrams = turns, found
        return found

    def _why(
        self, sentence: str, index: ProtectedIndex, candidate: frozenset[Bigram]
    ) -> str | None:
        source = leaked_segment(sentence, index, candidate)
        if source is not None:
            return f"overlaps protected text #{source}"
        if talks_weights(sentence):
            return "talks about marks or weights"
        return None

    def apply(self, text: str, context: FilterContext) -> FilterOutcome | None:
        """Drop every leaking sentence; None when nothing leaks."""
        if not context.protected_texts and not talks_weights(text):
            return None
        index = self._index(context)
        candidate = self._candidate(context.candidate_turns)
        whole = self._why(text, index, candidate)
        parts = sentences(text)
        reasons = [self._why(s, index, candidate) for s in parts]
        if whole is None and not any(reasons):
            return None
        kept = [s for s, why in zip(parts, reasons, strict=True) if why is None]
        replacement = join_sentences(kept)
        if not kept or self._why(replacement, index, candidate) is not None:
            replacement = context.neutral_probe
        first = next((why for why in reasons if why), whole)
        return FilterOutcome(replacement, first or "protected text")
