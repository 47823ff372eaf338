"""Candidate materials: cutting extracted text into passages, the cues that make a passage
worth asking about, the seeded draw, and the offline examiner's question
(docs/spec/candidate-materials.md). Pure and deterministic: no clock, no randomness of its own.
"""

from ioa.materials.cues import Cue, cue_of
from ioa.materials.cutter import MAX_MATERIAL_CHARS, Sentence, normalise, sentences
from ioa.materials.draw import draw_key, draw_options
from ioa.materials.passages import (
    CUTTER_VERSION,
    MAX_PASSAGES,
    Passage,
    qualifying_passages,
)
from ioa.materials.question import grounded_question

__all__ = [
    "CUTTER_VERSION",
    "MAX_MATERIAL_CHARS",
    "MAX_PASSAGES",
    "Cue",
    "Passage",
    "Sentence",
    "cue_of",
    "draw_key",
    "draw_options",
    "grounded_question",
    "normalise",
    "qualifying_passages",
    "sentences",
]
