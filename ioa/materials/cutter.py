"""Normalising extracted text and cutting it into sentences (candidate-materials.md §4).

:func:`normalise` turns any text into paragraphs, each on one line, separated by a blank
line (so normalising twice changes nothing): Unicode NFC, every control or
format character a space, lines that continue a paragraph joined with a space, a blank line or
a list item (``-``, ``*``, ``•``, ``1.``, ``2)``) starting a new paragraph, list markers
dropped, whitespace runs collapsed. :func:`sentences` splits each paragraph after ``.``, ``!``
or ``?`` (and closing quotes or brackets) followed by a space and an upper-case letter, a digit
or an opening quote, except after a known abbreviation. Offsets index the normalised text, so
``normalised[s.start:s.end] == s.text`` for every sentence.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

MAX_MATERIAL_CHARS: Final = 200_000
"""Only this many characters of a material's text are read."""

_LIST_MARKER: Final = re.compile(r"^(?:[-*•▪◦‣]|\(?\d{1,3}[.)])(?:\s+|$)")
_SPACES: Final = re.compile(r"\s+")
_CLOSERS: Final = "\"'\u201d\u2019\u00bb)\\]"
_BOUNDARY: Final = re.compile(rf"[.!?]+[{_CLOSERS}]*\s+")
_OPENERS: Final = frozenset("\"'\u201c\u2018\u00ab([\u00bf\u00a1")
_ABBREVIATIONS: Final = frozenset(
    {"e.g", "i.e", "etc", "vs", "cf", "al", "fig", "dr", "mr", "mrs", "ms", "prof",
     "z.b", "bzw", "vgl", "usw", "ca", "d.h", "u.a", "p.ej", "pág", "sr", "sra", "ej"}
)  # fmt: skip
_LINE_BREAKS: Final = re.compile(r"\r\n|[\r\n\u2028\u2029\x0b\x0c\x1c\x1d\x1e\x85]")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of the normalised text: its position among all sentences and its span."""

    index: int
    start: int
    end: int
    text: str


def _visible(character: str) -> str:
    return " " if unicodedata.category(character)[0] == "C" else character


def _clean_line(line: str) -> str:
    visible = "".join(_visible(character) for character in line)
    return _SPACES.sub(" ", visible).strip()


def normalise(text: str) -> str:
    """The text as one-line paragraphs separated by blank lines (see the module docstring)."""
    lines = _LINE_BREAKS.split(unicodedata.normalize("NFC", text[:MAX_MATERIAL_CHARS]))
    paragraphs: list[list[str]] = []
    new_paragraph = True
    for raw in lines:
        line = _clean_line(raw)
        if not line:
            new_paragraph = True
            continue
        marker = _LIST_MARKER.match(line)
        if marker is not None:
            while marker is not None:  # "1) - item": every leading marker goes
                line = line[marker.end() :].strip()
                marker = _LIST_MARKER.match(line)
            new_paragraph = True
            if not line:
                continue
        if new_paragraph or not paragraphs:
            paragraphs.append([line])
        else:
            paragraphs[-1].append(line)
        new_paragraph = False
    return "\n\n".join(" ".join(parts) for parts in paragraphs)


def _ends_sentence(paragraph: str, boundary: re.Match[str]) -> bool:
    """A boundary match ends a sentence unless an abbreviation precedes it or the next word
    does not start like a sentence."""
    following = paragraph[boundary.end() : boundary.end() + 1]
    if not following or not (following.isupper() or following.isdigit() or following in _OPENERS):
        return False
    before = (
        paragraph[: boundary.start()].rsplit(" ", 1)[-1].lower().lstrip("(\"'\u201c\u2018\u00ab")
    )
    return before not in _ABBREVIATIONS


def _paragraph_spans(paragraph: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    begin = 0
    for boundary in _BOUNDARY.finditer(paragraph):
        if _ends_sentence(paragraph, boundary):
            end = boundary.end() - (len(boundary.group(0)) - len(boundary.group(0).rstrip()))
            spans.append((begin, end))
            begin = boundary.end()
    spans.append((begin, len(paragraph)))
    return [(start, end) for start, end in spans if paragraph[start:end].strip()]


def sentences(normalised: str) -> list[Sentence]:
    """Every sentence of :func:`normalise`'s output, in order, with offsets into it."""
    found: list[Sentence] = []
    offset = 0
    for paragraph in normalised.split("\n"):
        for start, end in _paragraph_spans(paragraph):
            text = paragraph[start:end]
            lead = len(text) - len(text.lstrip())
            text = text.strip()
            begin = offset + start + lead
            found.append(Sentence(len(found), begin, begin + len(text), text))
        offset += len(paragraph) + 1
    return found
