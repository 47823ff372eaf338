"""OUT-004: the length filter.

No utterance is longer than ``maxChars`` (500). A longer text is split at sentence boundaries
(then at clause boundaries, then between words) into parts of at most ``maxChars``. At most
:data:`MAX_PARTS` parts are spoken: a text that needs more is shortened to its first and its last
part (the opening context and, usually, the question that ends the turn).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ioa.output_filters.base import FilterContext, FilterOutcome
from ioa.output_filters.text import sentences, tidy

MAX_PARTS: Final = 2
_CLAUSE: Final = re.compile(r"(?<=[,;:])\s+")


def _hard_split(piece: str, limit: int) -> list[str]:
    """Split a piece without usable punctuation between words (or inside a very long word)."""
    out: list[str] = []
    current = ""
    for word in piece.split(" "):
        while len(word) > limit:
            if current:
                out.append(current)
                current = ""
            out.append(word[:limit])
            word = word[limit:]
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= limit:
            current = candidate
        else:
            out.append(current)
            current = word
    if current:
        out.append(current)
    return out


def _pieces(text: str, limit: int) -> list[str]:
    """Sentences, with over-long sentences broken at clauses or between words."""
    out: list[str] = []
    for sentence in sentences(text):
        if len(sentence) <= limit:
            out.append(sentence)
            continue
        for clause in _CLAUSE.split(sentence):
            out.extend([clause] if len(clause) <= limit else _hard_split(clause, limit))
    return out


def split_text(text: str, limit: int) -> list[str]:
    """Pack the pieces of ``text`` greedily into parts of at most ``limit`` characters."""
    parts: list[str] = []
    current = ""
    for piece in _pieces(tidy(text), limit):
        candidate = f"{current} {piece}" if current else piece
        if len(candidate) <= limit:
            current = candidate
        else:
            parts.append(current)
            current = piece
    if current:
        parts.append(current)
    return parts


@dataclass(slots=True)
class LengthFilter:
    """Splits or shortens utterances longer than ``max_chars``."""

    max_chars: int = 500
    action: str = "summarize"
    severity: str = "error"
    name: str = "length"
    rule_id: str = "OUT-004"

    def parts(self, text: str) -> list[str]:
        """The spoken parts of ``text`` (a single part when it fits)."""
        cleaned = tidy(text)
        if len(cleaned) <= self.max_chars:
            return [cleaned] if cleaned else []
        parts = split_text(cleaned, self.max_chars)
        if len(parts) > MAX_PARTS:
            parts = [parts[0], parts[-1]]
        return parts

    def fits(self, text: str) -> bool:
        """True when ``text`` is already at most :data:`MAX_PARTS` lines of at most
        ``max_chars`` characters (lines are the parts this filter produced)."""
        lines = text.split("\n")
        if len(lines) == 1 and not tidy(text):
            return True
        return len(lines) <= MAX_PARTS and all(
            line == tidy(line) and 0 < len(line) <= self.max_chars for line in lines
        )

    def apply(self, text: str, context: FilterContext) -> FilterOutcome | None:
        """Split or shorten ``text`` into newline-separated parts; None when it fits."""
        if self.fits(text):
            return None
        flat = tidy(text.replace("\n", " "))
        if len(flat) <= self.max_chars:
            return FilterOutcome(flat, "parts rejoined")
        parts = self.parts(flat)
        how = "split" if len(split_text(flat, self.max_chars)) <= MAX_PARTS else "shortened"
        return FilterOutcome(
            "\n".join(parts),
            f"{len(flat)} characters {how} into {len(parts)} part(s) of at most {self.max_chars}",
        )
