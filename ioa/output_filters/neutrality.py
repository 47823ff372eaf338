"""POL-008: assessment neutrality of what is said to an anxious candidate.

When ``anxietyDetected`` is true, the runtime's response is limited to neutral procedural
support. :func:`check_neutrality` finds assessment-relevant reassurance or discouragement
("You're doing great", "That's correct", "That's wrong"); the runtime then replaces the whole
turn with :data:`NEUTRAL_SUPPORT` and records a ``guardrail_triggered`` event.
"""

from __future__ import annotations

from typing import Final

from ioa.output_filters.text import PhraseSet
from ioa.output_filters.vocabulary import REASSURANCE_PHRASES

NEUTRAL_SUPPORT: Final = "Take your time. Would you like me to repeat the question?"
"""The chapter's neutral procedural support (07 §5, POL-008)."""

_PHRASES: Final = PhraseSet(REASSURANCE_PHRASES)


def check_neutrality(text: str) -> str | None:
    """The assessment-relevant reassurance/discouragement phrase in ``text``, or None."""
    return _PHRASES.search(text)
