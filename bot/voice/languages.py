"""Which exam languages the offline voice can carry (docs/i18n.md, docs/voice.md).

* TTS: eSpeak NG (the ``espeakng-loader`` wheel ships every voice): each supported language has
  its voice, :data:`OFFLINE_TTS_VOICES`.
* STT: the ``pocketsphinx`` wheel ships only the US English model, so offline speech
  recognition exists for English only (:data:`OFFLINE_STT_LANGUAGES`). A German or Spanish exam
  on the offline STT is offered in text mode only (``sessions.exam_room.voice_available``),
  never recognised with the English model. A hosted STT provider is asked for the exam's
  language instead (``bot.audio.voice_io``).
"""

from __future__ import annotations

from typing import Final

from ioa.languages import SUPPORTED_LANGUAGES

OFFLINE_TTS_VOICES: Final = {"en": "en-us", "de": "de", "es": "es"}
"""The eSpeak NG voice per supported exam language."""

OFFLINE_STT_LANGUAGES: Final = frozenset({"en"})
"""Languages the bundled PocketSphinx model recognises."""

assert set(OFFLINE_TTS_VOICES) == set(SUPPORTED_LANGUAGES)


def offline_voice(language: str) -> str:
    """The eSpeak NG voice for an exam in ``language`` (a supported language)."""
    return OFFLINE_TTS_VOICES[language]


def offline_stt_available(language: str) -> bool:
    """Whether the offline STT can recognise ``language``."""
    return language in OFFLINE_STT_LANGUAGES


class VoiceLanguageError(RuntimeError):
    """The offline STT has no model for the exam's language (the page offers text only)."""
