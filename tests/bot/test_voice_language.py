"""The offline voice follows the exam's language (bot.voice.languages, bot.audio.voice_io):
eSpeak NG speaks German and Spanish with their own voices; the offline STT, which has an English
model only, refuses another language instead of hearing it as English, and the page offers text
mode for such an exam."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bot.audio import in_language, voice_io
from bot.speech_providers import SpeechChoice
from bot.voice.espeak import Voice, engine
from bot.voice.languages import (
    OFFLINE_TTS_VOICES,
    VoiceLanguageError,
    offline_stt_available,
    offline_voice,
)
from bot.voice.offline_tts import EspeakTTSService
from ioa.languages import SUPPORTED_LANGUAGES
from ioa.runtime import texts
from publishing.services import version_publish
from sessions import exam_room
from sessions.models import ExamSession, Sitting
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory, example_document


def test_every_supported_language_has_an_offline_voice() -> None:
    assert set(OFFLINE_TTS_VOICES) == set(SUPPORTED_LANGUAGES)
    for language in SUPPORTED_LANGUAGES:
        resolved = engine().voice_for(offline_voice(language))  # raises if eSpeak has none
        assert resolved.rsplit("/", 1)[-1].lower().startswith(language), resolved


@pytest.mark.parametrize("language", ["de", "es"])
def test_espeak_speaks_the_runtime_lines_in_the_exam_language(language: str) -> None:
    line = texts.TABLES[language].paused
    pcm = engine().synthesize(line, Voice(name=offline_voice(language)))
    assert len(pcm) > 16_000  # well over a second of 16-bit audio


def test_a_german_exam_speaks_with_the_german_voice() -> None:
    io = voice_io(stt=object(), language="de")
    assert isinstance(io.tts, EspeakTTSService)
    assert io.tts.voice.name == "de"
    assert io.providers["tts"] == ("espeak-ng", "de")


def test_the_offline_stt_does_not_hear_german_as_english() -> None:
    assert offline_stt_available("en") and not offline_stt_available("de")
    with pytest.raises(VoiceLanguageError, match="'de'"):
        voice_io(tts=object(), language="de")


def test_a_hosted_provider_is_asked_for_the_exam_language() -> None:
    choice = SpeechChoice("stt", "deepgram", None, None, "en-GB", None, None)
    assert in_language(choice, "de").language == "de"
    assert in_language(choice, "en") is choice


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "supported"), [("cs201-graph-algorithms", True), ("cs201-graph-algorithms.de", False)]
)
def test_the_page_offers_voice_only_where_it_can_be_heard(name: str, supported: bool) -> None:
    author = AuthorFactory()
    document: dict[str, Any] = copy.deepcopy(example_document(name))
    version = version_publish(
        draft=DraftPackageFactory(owner=author, document=document), user=author
    ).version
    sitting = Sitting.objects.create(version=version, title="Orals", created_by=author)
    session = ExamSession.objects.create(sitting=sitting, candidate=CandidateFactory())
    assert exam_room.voice_language_supported(session) is supported
    if not supported:
        assert exam_room.voice_available(session) is False
