"""Pronunciations for words the recogniser's dictionary lacks (issue #17).

An exam's language model (:mod:`bot.voice.exam_language_model`) is built from the package's text,
which names things no general dictionary holds (``Dijkstra``, ``unvisited``, a drug, a place).
eSpeak NG's own letter-to-sound rules give their phonemes (``espeak_TextToPhonemes``, the
en-US voice, eSpeak's ASCII phoneme names); :func:`arpabet` maps those to the CMU phone set the
PocketSphinx en-US acoustic model uses. A phoneme with no counterpart makes the word
unpronounceable (``None``): it is then left out of the model, never guessed.

:data:`ACCENTS`: the exam's words also get eSpeak NG's British English pronunciation as a
variant (``word(2)`` in the decoder's dictionary) where it differs, so a candidate who says
``vertices`` or ``route`` the British way is still heard (the acoustic model is US English).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

# eSpeak NG's English phoneme names (phsource/ph_english*) → CMU/ARPAbet. Longest match first.
_PHONES: Final[dict[str, tuple[str, ...]]] = {
    "i@3": ("IY", "R"),
    "aI@": ("AY", "ER"),
    "aU@": ("AW", "ER"),
    "3:": ("ER",),
    "3": ("ER",),
    "@L": ("AH", "L"),
    "@2": ("AH",),
    "@5": ("AH",),
    "@": ("AH",),
    "a#": ("AH",),
    "aI": ("AY",),
    "aU": ("AW",),
    "a": ("AE",),
    "aa": ("AE",),
    "A@": ("AA", "R"),
    "A:": ("AA",),
    "0": ("AA",),
    "O@": ("AO", "R"),
    "O:": ("AO",),
    "O2": ("AO",),
    "OI": ("OY",),
    "o@": ("AO", "R"),
    "oU": ("OW",),
    "e@": ("EH", "R"),
    "eI": ("EY",),
    "E": ("EH",),
    "i@": ("IY", "R"),
    "i:": ("IY",),
    "i": ("IY",),
    "I#": ("IH",),
    "I2": ("IH",),
    "I": ("IH",),
    "U@": ("UH", "R"),
    "U": ("UH",),
    "u:": ("UW",),
    "V": ("AH",),
    "tS": ("CH",),
    "dZ": ("JH",),
    "t#": ("T",),
    "t2": ("T",),
    "d#": ("D",),
    "n-": ("N",),
    "l-": ("L",),
    "r-": ("R",),
    "?": ("T",),
    "T": ("TH",),
    "D": ("DH",),
    "S": ("SH",),
    "Z": ("ZH",),
    "N": ("NG",),
    "j": ("Y",),
    "h": ("HH",),
    "x": ("K",),
    "L": ("L",),
    **{c: (c.upper(),) for c in "pbtdkgfvszmnlrw"},
}
ACCENTS: Final = ("en-gb",)
"""eSpeak NG voices whose pronunciations of the exam's words become dictionary variants."""
_IGNORED: Final = frozenset("',%=_-#: ")
_LONGEST: Final = max(len(name) for name in _PHONES)


def arpabet(phonemes: str) -> str | None:
    """CMU phones (space-separated) for eSpeak's ASCII ``phonemes``; ``None`` when one has no
    counterpart."""
    found: list[str] = []
    index = 0
    while index < len(phonemes):
        for size in range(_LONGEST, 0, -1):
            name = phonemes[index : index + size]
            if name in _PHONES:
                found.extend(_PHONES[name])
                index += size
                break
        else:
            if phonemes[index] not in _IGNORED:
                return None
            index += 1
    return " ".join(found) or None


@lru_cache(maxsize=8192)
def pronounce(word: str, voice: str = "en-us") -> str | None:
    """CMU phones of ``word`` by eSpeak NG's rules for ``voice`` (US English), or ``None``."""
    from bot.voice.espeak import EspeakUnavailableError, engine

    try:
        return arpabet(engine().phonemes(word, voice))
    except (EspeakUnavailableError, ValueError):
        return None


def accent_variants(word: str) -> tuple[str, ...]:
    """CMU phones of ``word`` in each of :data:`ACCENTS` (eSpeak NG; unpronounceable ones left
    out), without repeats."""
    found = (pronounce(word, voice) for voice in ACCENTS)
    return tuple(dict.fromkeys(p for p in found if p is not None))
