"""The offline examiner's grounded question (candidate-materials.md §6): extractive, no model.

It quotes the start of the drawn passage (at most :data:`EXCERPT_WORDS` words, so the passage
is referred to, not read out) and asks the question its cue calls for, in the exam's language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ioa.compiler.material_block import quote_passage
from ioa.materials.cues import Cue

EXCERPT_WORDS: Final = 12

_QUESTIONS: Final[Mapping[str, Mapping[Cue, str]]] = {
    "en": {
        Cue.CHOICE: "In your work you wrote: “{excerpt}”. Why did you make that choice, and "
        "what alternative did you consider?",
        Cue.RESULT: "In your work you report: “{excerpt}”. How did you arrive at that result, "
        "and how sure are you of it?",
        Cue.LIMITATION: "In your work you note: “{excerpt}”. Where does that limitation come "
        "from, and how would you address it?",
    },
    "de": {
        Cue.CHOICE: "In Ihrer Arbeit schreiben Sie: „{excerpt}“. Warum haben Sie sich so "
        "entschieden, und welche Alternative haben Sie erwogen?",
        Cue.RESULT: "In Ihrer Arbeit berichten Sie: „{excerpt}“. Wie sind Sie zu diesem "
        "Ergebnis gekommen, und wie sicher sind Sie sich?",
        Cue.LIMITATION: "In Ihrer Arbeit stellen Sie fest: „{excerpt}“. Woher kommt diese "
        "Einschränkung, und wie würden Sie sie beheben?",
    },
    "es": {
        Cue.CHOICE: "En su trabajo escribió: «{excerpt}». ¿Por qué tomó esa decisión y qué "
        "alternativa consideró?",
        Cue.RESULT: "En su trabajo informa: «{excerpt}». ¿Cómo llegó a ese resultado y qué "
        "tan seguro está de él?",
        Cue.LIMITATION: "En su trabajo señala: «{excerpt}». ¿De dónde viene esa limitación y "
        "cómo la resolvería?",
    },
}


def excerpt(text: str, words: int = EXCERPT_WORDS) -> str:
    """The first ``words`` words of the passage on one line, with an ellipsis if cut."""
    parts = quote_passage(text).split(" ")
    cut = " ".join(parts[:words]).rstrip(".,;:!?")
    return cut + ("…" if len(parts) > words else "")


def grounded_question(text: str, cue: Cue | str, language: str | None = None) -> str:
    """The question about a passage with cue ``cue`` (English if the language has no table)."""
    table = _QUESTIONS.get((language or "en").split("-", 1)[0].lower(), _QUESTIONS["en"])
    return table[Cue(cue)].format(excerpt=excerpt(text))
