"""Linking a signal to the transcript turns that support it (EVD-009 ``turnIds``).

1. The candidate's turns since the examiner last spoke (the answer the LLM is reporting on)
   whose words contain the excerpt's words (at least :data:`MIN_EXCERPT_COVERAGE` of them, or
   the excerpt verbatim);
2. else the earlier turns of the current node visit that contain them (most signals quote
   the candidate, so this finds the turn even when it was not the latest one);
3. otherwise all the answer turns, else the latest candidate turn of the node.

No candidate turn at all means there is nothing the signal can rest on: it is rejected.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from ioa.ledger.model import TurnInfo
from ioa.output_filters.text import normalise, words

MIN_EXCERPT_COVERAGE: Final = 0.6


@lru_cache(maxsize=4096)
def _word_set(text: str) -> frozenset[str]:
    return frozenset(words(text))


def _matches(excerpt_words: Sequence[str], excerpt_norm: str, turn: TurnInfo) -> bool:
    if excerpt_norm and excerpt_norm in normalise(turn.text):
        return True
    if not excerpt_words:
        return False
    turn_words = _word_set(turn.text)
    present = sum(1 for word in excerpt_words if word in turn_words)
    return present / len(excerpt_words) >= MIN_EXCERPT_COVERAGE


def link_turns(
    excerpt: str,
    node_turns: Sequence[TurnInfo],
    answer_turns: Sequence[TurnInfo],
) -> tuple[tuple[TurnInfo, ...], str]:
    """The turns a signal rests on, and how they were found (``excerpt`` or ``recent``).

    ``node_turns`` are the candidate's turns of the current node visit in order;
    ``answer_turns`` the ones since the examiner last spoke. Empty when there are none.
    """
    excerpt_words = words(excerpt)
    excerpt_norm = normalise(excerpt)
    for pool in (answer_turns, node_turns):
        matched = tuple(turn for turn in pool if _matches(excerpt_words, excerpt_norm, turn))
        if matched:
            return matched, "excerpt"
    if answer_turns:
        return tuple(answer_turns), "recent"
    if node_turns:
        return (node_turns[-1],), "recent"
    return (), "none"
