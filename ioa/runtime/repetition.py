"""Repetition loops (``repetition_loop``, our 03 chapter §8): the conversation at a node is stuck.

Two triggers, checked on every ``report_observation`` that reaches the guardrails (not under
anxiety, not when a low-STT-confidence reprompt is due):

* the examiner: the text it is about to say is a near-repeat (:func:`similarity` >=
  :data:`SIMILARITY_THRESHOLD`) of one of its last :data:`WINDOW` utterances at this node visit
  (``examiner_utterance_final`` with purpose question, follow-up or prompt). The window restarts
  when the candidate's repeat, rephrase or clarification request is accepted, so saying the
  question again after such a request is never a loop;
* the candidate: their latest answer turn is a near-repeat of their previous answer at the node
  (the last candidate turn before the examiner last spoke), and it was recorded after the
  episode's latest attempt (one turn is one trigger).

Texts with fewer than :data:`MIN_WORDS` words and the runtime's fixed procedural texts
(:data:`FIXED_TEXTS`) are never compared; command turns and distrusted turns neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ioa.output_filters import NEUTRAL_SUPPORT
from ioa.output_filters.text import words
from ioa.runtime import texts
from ioa.runtime.state import RuntimeState, Turn

SIMILARITY_THRESHOLD: Final = 0.8
"""Two texts whose word-set Jaccard similarity reaches this are near-repeats."""
WINDOW: Final = 3
"""How many of the examiner's latest utterances at the node a new one is compared with."""
MIN_WORDS: Final = 4
"""Shorter texts ("Please go on.", "Yes.") are never a repetition loop."""

FIXED_TEXTS: Final = frozenset(
    words(text)
    for table in texts.TABLES.values()
    for text in ("Please go on.", NEUTRAL_SUPPORT, *table.spoken().values())
)
"""The runtime's procedural phrases in every language (as word tuples): saying them again is
not a loop."""


def similarity(first: str, second: str) -> float:
    """Normalised token Jaccard similarity: the number of distinct words (lower-case
    alphanumeric runs, apostrophes removed) the texts share over the number either has; 1.0
    for two texts without words."""
    a, b = set(words(first)), set(words(second))
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def comparable(text: str) -> bool:
    """A text that can take part in a repetition loop: at least :data:`MIN_WORDS` words and
    not one of the :data:`FIXED_TEXTS`."""
    found = words(text)
    return len(found) >= MIN_WORDS and found not in FIXED_TEXTS


def near_repeat(first: str, second: str) -> bool:
    """Both texts are comparable and their :func:`similarity` reaches the threshold."""
    return (
        comparable(first)
        and comparable(second)
        and similarity(first, second) >= SIMILARITY_THRESHOLD
    )


@dataclass(frozen=True, slots=True)
class Repetition:
    """What repeats: ``who`` and a description for ``triggerDescription`` (no quoted text)."""

    who: Literal["examiner", "candidate"]
    description: str


def _usable(state: RuntimeState, turn: Turn) -> bool:
    return turn.turn_id not in state.command_turns and turn.turn_id not in state.distrusted_turns


def new_answer(state: RuntimeState, answer: list[Turn], since_ms: int | None) -> Turn | None:
    """The candidate's latest usable answer turn, if it was recorded after ``since_ms``."""
    usable = [t for t in answer if _usable(state, t)]
    if not usable:
        return None
    latest = usable[-1]
    return latest if since_ms is None or latest.at_ms > since_ms else None


def _previous_answer(state: RuntimeState) -> Turn | None:
    node = state.node
    if node is None:
        return None
    for turn_id in reversed(node.turn_ids):
        turn = state.turns[turn_id]
        if turn.index < state.answered_upto and _usable(state, turn):
            return turn
    return None


def detect(
    state: RuntimeState, spoken: str, answer: list[Turn], since_ms: int | None
) -> Repetition | None:
    """The repetition loop the observation shows (module docstring), examiner first.
    ``since_ms`` is the open episode's latest attempt (a candidate turn counts once)."""
    node = state.node
    if node is None:
        return None
    if comparable(spoken):
        for earlier in reversed(node.examiner_texts[-WINDOW:]):
            if near_repeat(spoken, earlier):
                return Repetition(
                    "examiner",
                    f"the examiner's next utterance repeats one of its last {WINDOW} at node "
                    f"{node.node_id} (similarity {similarity(spoken, earlier):.2f} >= "
                    f"{SIMILARITY_THRESHOLD})",
                )
    latest = new_answer(state, answer, since_ms)
    previous = _previous_answer(state)
    if latest is not None and previous is not None and near_repeat(latest.text, previous.text):
        return Repetition(
            "candidate",
            f"candidate turn {latest.turn_id} repeats their previous answer {previous.turn_id} "
            f"at node {node.node_id} (similarity {similarity(latest.text, previous.text):.2f} "
            f">= {SIMILARITY_THRESHOLD})",
        )
    return None
