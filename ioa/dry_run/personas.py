"""The simulated candidates of the dry run: who they are and what each one does at a node.

A persona is a pure policy. At each of its turns it sees the node it is at (:class:`Turn`)
and answers with one :class:`Move`: say something (and how a faithful examiner would read it:
which evidence targets it covers, its quality, whether it sounds anxious), press a command
button, or stay silent for a while. The dry run plays the examiner from that reading, so a
package's flow is tried without a language model and the report depends on the package only.

=================  =========================================================================
``strong``         covers every evidence target in its first answer, then confirms
``partial``        covers only the first target of each node, then gives vague answers
``silent``         never says anything
``off_topic``      talks about something else every time
``anxious``        first says it is nervous and blank, then answers like ``strong``
``command_heavy``  presses repeat, clarification and rephrase at every node, then answers
``skipper``        asks to skip at every turn (a refused skip is followed by silence)
=================  =========================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from ioa.schema.nodes import Node

Quality = Literal["substantive", "partial", "off_topic", "unclear"]


@dataclass(frozen=True, slots=True)
class Turn:
    """What a persona knows when it is its turn."""

    node: Node
    index: int
    """0 for the persona's first move at this visit of the node."""
    covered: frozenset[str]
    """Evidence targets of the node already recorded."""


@dataclass(frozen=True, slots=True)
class Say:
    """An answer, and how the examiner reads it."""

    text: str
    covers: tuple[str, ...] = ()
    quality: Quality = "substantive"
    anxious: bool = False


@dataclass(frozen=True, slots=True)
class Press:
    """An exam-room command button."""

    command: str


@dataclass(frozen=True, slots=True)
class Silence:
    """Say nothing for ``seconds`` (timers run)."""

    seconds: int


Move = Say | Press | Silence

SILENCE_SEC: Final = 30
"""How long a silent move lasts."""
GIVE_UP_AFTER: Final = 12
"""A persona stays silent after this many moves at one visit of a node (no endless loops)."""

_CONFIRM: Final = "I think that covers what I wanted to say."
_VAGUE: Final = (
    "I am not completely sure, it has something to do with that, I think.",
    "Maybe it depends on the situation, I cannot say much more.",
    "I would have to look that up, I only remember part of it.",
)
_OFF_TOPIC: Final = "Last weekend I watched a football match and the weather was lovely."
_NERVOUS: Final = "Sorry, I am really nervous and my mind has gone completely blank."


def answer(node: Node, target_ids: tuple[str, ...]) -> Say:
    """An answer that covers ``target_ids`` (or a short contribution at a node with none)."""
    if not node.evidenceTargets:
        return Say("I enjoyed the part of the course about this topic most.")
    if not target_ids:
        return Say(_CONFIRM)
    labels = [t.label for t in node.evidenceTargets if t.id in target_ids]
    return Say("My answer: " + "; ".join(labels) + ".", covers=target_ids)


def _all_ids(node: Node) -> tuple[str, ...]:
    return tuple(t.id for t in node.evidenceTargets)


def _give_up(turn: Turn) -> bool:
    return turn.index >= GIVE_UP_AFTER


def strong(turn: Turn) -> Move:
    if _give_up(turn):
        return Silence(SILENCE_SEC)
    missing = tuple(t for t in _all_ids(turn.node) if t not in turn.covered)
    return answer(turn.node, missing)


def partial(turn: Turn) -> Move:
    if _give_up(turn):
        return Silence(SILENCE_SEC)
    first = _all_ids(turn.node)[:1]
    if turn.index == 0 or not turn.node.evidenceTargets:
        return answer(turn.node, first)
    return Say(_VAGUE[(turn.index - 1) % len(_VAGUE)], quality="partial")


def silent(turn: Turn) -> Move:
    return Silence(SILENCE_SEC)


def off_topic(turn: Turn) -> Move:
    if _give_up(turn):
        return Silence(SILENCE_SEC)
    return Say(_OFF_TOPIC, quality="off_topic")


def anxious(turn: Turn) -> Move:
    if turn.index == 0:
        return Say(_NERVOUS, quality="unclear", anxious=True)
    return strong(Turn(turn.node, turn.index - 1, turn.covered))


COMMANDS: Final = ("repeat", "clarification", "request_rephrase")


def command_heavy(turn: Turn) -> Move:
    if turn.index < len(COMMANDS):
        return Press(COMMANDS[turn.index])
    return strong(Turn(turn.node, turn.index - len(COMMANDS), turn.covered))


SKIP_ATTEMPTS: Final = 2


def skipper(turn: Turn) -> Move:
    if turn.index < SKIP_ATTEMPTS:
        return Press("skip")
    return Silence(SILENCE_SEC)


PERSONAS: Final[Mapping[str, Callable[[Turn], Move]]] = {
    "strong": strong,
    "partial": partial,
    "silent": silent,
    "off_topic": off_topic,
    "anxious": anxious,
    "command_heavy": command_heavy,
    "skipper": skipper,
}
"""Every persona, in report order."""
