"""The output-filter contract: what a filter sees, what it returns, what an interception is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Protocol

NEUTRAL_CONTINUE: Final = "Please go on."
"""The last-resort utterance when nothing of the proposed text can be kept. Procedural and
neutral: it neither hints, judges, nor changes topic."""

NEUTRAL_PROBE: Final = "Could you tell me a little more about your reasoning?"
"""Neutral replacement for a sentence removed for rubric leakage (OUT-002)."""

REDIRECT: Final = "Let's stay with the current question."
"""What leads back to the question when a turn left the topic (OUT-003)."""


@dataclass(frozen=True, slots=True)
class RubricText:
    """A text the candidate must never hear from the examiner (OUT-002): a target's
    description or a rubric level's label or description, with the target it belongs to."""

    target_id: str
    text: str


@dataclass(frozen=True, slots=True)
class FilterContext:
    """Everything a filter may look at for one utterance of one node.

    Built by the runtime from the compiled node's ``metadata.outputFilterContext`` and the
    session (the candidate's words at this node, the question being asked).
    """

    node_id: str
    rubric_texts: tuple[RubricText, ...] = ()
    scenario_domain: str = ""
    """The node's title, scenario, brief and opening: what counts as on-topic (OUT-003)."""
    extra_vocabulary: tuple[str, ...] = ()
    """More on-topic texts (the node's target labels)."""
    candidate_turns: tuple[str, ...] = ()
    """The candidate's turns at this node, one text each: on-topic vocabulary (the examiner
    may refer back to what the candidate said), and echoing them is not a rubric leak. Kept
    as separate texts so that what is derived from each is computed once."""
    current_question: str = ""
    """The question being asked (used to redirect back to the topic)."""
    neutral_continue: str = NEUTRAL_CONTINUE
    """What is said instead of a turn a filter removed entirely, in the exam's language."""
    redirect: str = REDIRECT
    neutral_probe: str = NEUTRAL_PROBE
    """What replaces a sentence removed for a leak, in the exam's language."""
    """What leads back to the question when a turn left the topic, in the exam's language."""
    protected_texts: tuple[str, ...] = ()
    """Everything the LLM was told in confidence (role message, task messages, briefs, rubric,
    marking criteria, learning outcomes): the ``protected_text`` filter's input."""
    speakable_texts: tuple[str, ...] = ()
    """Texts the examiner may say verbatim at this node (opening, scenario, closing)."""

    @property
    def candidate_text(self) -> str:
        """The candidate's turns joined."""
        return " ".join(self.candidate_turns)


@dataclass(frozen=True, slots=True)
class Interception:
    """One filter changed the text: recorded as a ``guardrail_triggered`` event (proctor-only)."""

    filter_name: str
    rule_id: str
    action: str
    severity: str
    original_text: str
    replacement_text: str
    detail: str
    """Why, without quoting protected text (e.g. ``matched 'as an ai'``, ``target tgt-x``)."""


@dataclass(frozen=True, slots=True)
class FilterOutcome:
    """What one filter did to the text: ``None`` when it passed the text unchanged."""

    text: str
    detail: str


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """The validated utterance(s) and every interception made on the way."""

    original_text: str
    parts: tuple[str, ...]
    """What may be spoken, in order; each part is at most ``maxChars`` long and passes every
    filter unchanged. Empty when nothing can be said."""
    interceptions: tuple[Interception, ...] = field(default=())

    @property
    def text(self) -> str:
        """The parts joined with spaces."""
        return " ".join(self.parts)

    @property
    def changed(self) -> bool:
        """True when any filter intercepted the text."""
        return bool(self.interceptions)


class OutputFilter(Protocol):
    """One stage of the output validation pipeline (chapter 07 §8)."""

    name: str
    rule_id: str
    action: str
    severity: str

    def apply(self, text: str, context: FilterContext) -> FilterOutcome | None:
        """Return the replacement text and why, or ``None`` if ``text`` passes."""
        ...
