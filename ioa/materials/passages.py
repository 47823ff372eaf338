"""The passages of a material that a grounded node may ask about (candidate-materials.md §4).

A passage is a sentence of the normalised text that has 6 to 120 words, at most
:data:`MAX_PASSAGE_CHARS` characters, and a cue (:mod:`ioa.materials.cues`). At most
:data:`MAX_PASSAGES` are kept per material, spread evenly over the document (first and last
included), so one ``material_attached`` event holds them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ioa.materials.cues import Cue, cue_of
from ioa.materials.cutter import Sentence, normalise, sentences
from ioa.schema.grounding import MAX_PASSAGE_CHARS

CUTTER_VERSION: Final = "ioa-cutter/1"
"""Recorded in ``material_attached``: the same version cuts the same text the same way."""
MAX_PASSAGES: Final = 32
MIN_WORDS: Final = 6
MAX_WORDS: Final = 120


@dataclass(frozen=True, slots=True)
class Passage:
    """A qualifying sentence: ``<materialId>:<sentence index>``, its span in the normalised
    text, its cue and its text."""

    passage_id: str
    index: int
    start: int
    end: int
    cue: Cue
    text: str


def passage_id(material_id: str, index: int) -> str:
    """The stable id of the ``index``-th sentence of a material."""
    return f"{material_id}:{index}"


def _qualifies(sentence: Sentence) -> bool:
    words = len(sentence.text.split())
    return MIN_WORDS <= words <= MAX_WORDS and len(sentence.text) <= MAX_PASSAGE_CHARS


def spread(count: int, keep: int) -> list[int]:
    """``keep`` positions out of ``count`` spread evenly, first and last included (all of them
    when ``count <= keep``)."""
    if count <= keep:
        return list(range(count))
    return sorted({round(i * (count - 1) / (keep - 1)) for i in range(keep)})


def qualifying_passages(
    material_id: str, text: str, language: str | None = None
) -> tuple[Passage, ...]:
    """The passages of ``text`` a grounded node may draw, in document order."""
    found = []
    for sentence in sentences(normalise(text)):
        if not _qualifies(sentence):
            continue
        cue = cue_of(sentence.text, language)
        if cue is not None:
            found.append(
                Passage(
                    passage_id(material_id, sentence.index),
                    sentence.index,
                    sentence.start,
                    sentence.end,
                    cue,
                    sentence.text,
                )
            )
    return tuple(found[position] for position in spread(len(found), MAX_PASSAGES))
