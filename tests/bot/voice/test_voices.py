"""The offline examiner voices: the voices the docs name exist in the bundled eSpeak NG, are
listed from the engine itself, and a language tag (``en-gb``) finds its voice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.voice.espeak import Voice, engine

DOCS = Path(__file__).resolve().parents[3] / "docs" / "voice.md"


def documented_voices() -> set[str]:
    """Every eSpeak voice named in docs/voice.md's voice rows (``en-us``, ``en-gb+f2`` …)."""
    text = DOCS.read_text()
    rows = [line for line in text.splitlines() if "voice" in line.lower() and "`en" in line]
    return {m for line in rows for m in re.findall(r"`(en[a-z-]*(?:\+[a-z0-9]+)?)`", line)}


def test_the_docs_name_voices() -> None:
    assert {"en-us", "en-gb"} <= documented_voices()


@pytest.mark.parametrize("name", sorted(documented_voices()))
def test_every_documented_voice_speaks(name: str) -> None:
    pcm = engine().synthesize("The examiner speaks.", Voice(name=name))
    assert len(pcm) > engine().sample_rate  # over half a second of 16-bit audio


def test_voices_are_listed_from_the_engine() -> None:
    voices = engine().voices()
    by_id = {v.identifier: v for v in voices}
    assert len(voices) > 50  # the wheel bundles every eSpeak NG language
    assert "en-gb" in by_id["gmw/en"].languages
    assert "en-us" in by_id["gmw/en-US"].languages
    assert all(v.name for v in voices)


def test_a_language_tag_picks_that_languages_voice() -> None:
    british = engine().synthesize("Tomato and schedule.", Voice(name="en-gb"))
    american = engine().synthesize("Tomato and schedule.", Voice(name="en-us"))
    assert british and american and british != american


def test_an_unknown_voice_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="no voice 'xx-nowhere'"):
        engine().synthesize("Hello.", Voice(name="xx-nowhere"))
