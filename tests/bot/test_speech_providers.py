"""Speech providers chosen by configuration (``bot.speech_providers``): every hosted provider
builds its Pipecat service from the settings, and every misconfiguration is refused at start-up
(the system check) with a message naming the variable."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from bot.audio import voice_io
from bot.checks import check_speech_providers
from bot.speech_providers import (
    SpeechProviderError,
    build_hosted_stt,
    build_hosted_tts,
    resolve_speech,
)

SPEECH_VARIABLES = [
    f"VIVA_{kind}_{part}"
    for kind in ("STT", "TTS")
    for part in ("PROVIDER", "MODEL", "LANGUAGE", "API_KEY", "BASE_URL", "REGION")
] + [
    "VIVA_TTS_VOICE",
    "VIVA_SPEECH_FALLBACK_SECONDS",
    "DEEPGRAM_API_KEY",
    "OPENAI_API_KEY",
    "AZURE_SPEECH_API_KEY",
    "AZURE_SPEECH_REGION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CARTESIA_API_KEY",
    "ELEVENLABS_API_KEY",
]


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Any:
    for name in SPEECH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        if hasattr(settings, name):
            delattr(settings, name)
    return monkeypatch


def test_the_default_is_offline_and_builds_no_hosted_service() -> None:
    stt, tts = resolve_speech("stt"), resolve_speech("tts")
    assert (stt.provider, tts.provider) == ("offline", "offline")
    assert stt.offline and tts.offline
    assert check_speech_providers() == []


HOSTED = [
    # (kind, provider, environment, service class name, what the service points at)
    ("stt", "deepgram", {"DEEPGRAM_API_KEY": "k"}, "DeepgramSTTService"),
    ("tts", "deepgram", {"DEEPGRAM_API_KEY": "k"}, "DeepgramTTSService"),
    ("stt", "openai", {"OPENAI_API_KEY": "k"}, "OpenAISTTService"),
    ("tts", "openai", {"OPENAI_API_KEY": "k"}, "OpenAITTSService"),
    (
        "stt",
        "openai_compatible",
        {"VIVA_STT_BASE_URL": "http://127.0.0.1:9/v1"},
        "OpenAISTTService",
    ),
    (
        "tts",
        "openai_compatible",
        {"VIVA_TTS_BASE_URL": "http://127.0.0.1:9/v1"},
        "OpenAITTSService",
    ),
    ("stt", "cartesia", {"CARTESIA_API_KEY": "k"}, "CartesiaSTTService"),
    ("tts", "cartesia", {"CARTESIA_API_KEY": "k", "VIVA_TTS_VOICE": "v-1"}, "CartesiaTTSService"),
    ("stt", "elevenlabs", {"ELEVENLABS_API_KEY": "k"}, "ElevenLabsRealtimeSTTService"),
    (
        "tts",
        "elevenlabs",
        {"ELEVENLABS_API_KEY": "k", "VIVA_TTS_VOICE": "v"},
        "ElevenLabsTTSService",
    ),
]


@pytest.mark.parametrize(("kind", "provider", "env", "service"), HOSTED)
def test_each_hosted_provider_builds_its_pipecat_service(
    clean: pytest.MonkeyPatch, kind: str, provider: str, env: dict[str, str], service: str
) -> None:
    clean.setenv(f"VIVA_{kind.upper()}_PROVIDER", provider)
    for name, value in env.items():
        clean.setenv(name, value)
    choice = resolve_speech(kind)  # type: ignore[arg-type]
    assert choice.provider == provider
    built = (build_hosted_stt if kind == "stt" else build_hosted_tts)(choice)
    assert type(built).__name__ == service
    assert check_speech_providers() == []


def test_google_builds_from_a_service_account_file(
    clean: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    credentials = tmp_path / "sa.json"
    credentials.write_text("{}")
    clean.setenv("VIVA_TTS_PROVIDER", "google")
    clean.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(credentials))
    choice = resolve_speech("tts")
    assert (choice.voice, choice.api_key) == ("en-GB-Chirp3-HD-Charon", str(credentials))


def _hosted(clean: pytest.MonkeyPatch) -> None:
    """Deepgram's recogniser and OpenAI's voice."""
    clean.setenv("VIVA_STT_PROVIDER", "deepgram")
    clean.setenv("VIVA_STT_BASE_URL", "http://127.0.0.1:9")
    clean.setenv("DEEPGRAM_API_KEY", "k")
    clean.setenv("VIVA_TTS_PROVIDER", "openai")
    clean.setenv("OPENAI_API_KEY", "k")


def test_voice_io_uses_the_configured_providers(clean: pytest.MonkeyPatch) -> None:
    _hosted(clean)
    clean.setenv("VIVA_TTS_VOICE", "nova")
    io = voice_io()
    # The hosted services are active, each with the offline one in reserve (a long outage
    # switches to it: bot.speech_fallback).
    stt, tts = io.fallbacks["stt"], io.fallbacks["tts"]
    assert (io.stt, io.tts) == (stt.switcher, tts.switcher)
    assert type(stt.hosted).__name__ == "DeepgramSTTService"
    assert type(tts.hosted).__name__ == "OpenAITTSService"
    assert stt.switcher.strategy.active_service is stt.hosted
    assert tts.switcher.strategy.active_service is tts.hosted
    assert type(stt.offline).__name__ == "PocketsphinxSTTService"
    assert type(tts.offline).__name__ == "EspeakTTSService"
    assert tts.offline.voice.name == "en-us"  # eSpeak's own voice, not the host's "nova"
    assert io.providers == {"stt": ("deepgram", "nova-3-general"), "tts": ("openai", "nova")}


def test_without_a_fallback_the_hosted_services_are_used_alone(
    clean: pytest.MonkeyPatch,
) -> None:
    _hosted(clean)
    clean.setenv("VIVA_SPEECH_FALLBACK_SECONDS", "0")
    io = voice_io()
    assert type(io.stt).__name__ == "DeepgramSTTService"
    assert type(io.tts).__name__ == "OpenAITTSService"
    assert io.fallbacks == {}


def test_a_language_the_offline_recogniser_does_not_know_keeps_only_a_voice_in_reserve(
    clean: pytest.MonkeyPatch,
) -> None:
    _hosted(clean)
    io = voice_io(language="de")
    assert type(io.stt).__name__ == "DeepgramSTTService"  # never PocketSphinx for German
    assert set(io.fallbacks) == {"tts"}
    assert io.fallbacks["tts"].offline.voice.name.startswith("de")


MISCONFIGURED = [
    ({"VIVA_STT_PROVIDER": "whisperx"}, "VIVA_STT_PROVIDER='whisperx' is not one of"),
    ({"VIVA_TTS_PROVIDER": "deepgram"}, "VIVA_TTS_PROVIDER=deepgram needs DEEPGRAM_API_KEY"),
    ({"VIVA_STT_PROVIDER": "openai"}, "VIVA_STT_PROVIDER=openai needs OPENAI_API_KEY"),
    (
        {"VIVA_STT_PROVIDER": "openai_compatible"},
        "VIVA_STT_PROVIDER=openai_compatible needs VIVA_STT_BASE_URL",
    ),
    (
        {"VIVA_TTS_PROVIDER": "cartesia", "CARTESIA_API_KEY": "k"},
        "VIVA_TTS_PROVIDER=cartesia needs VIVA_TTS_VOICE",
    ),
    (
        {"VIVA_STT_PROVIDER": "deepgram", "DEEPGRAM_API_KEY": "k", "VIVA_STT_LANGUAGE": "klingon"},
        "VIVA_STT_LANGUAGE='klingon' is not a language tag",
    ),
    (
        {"VIVA_STT_PROVIDER": "deepgram", "DEEPGRAM_API_KEY": "k", "VIVA_STT_BASE_URL": "dg.local"},
        "VIVA_STT_BASE_URL='dg.local' is not an http(s):// or ws(s):// URL",
    ),
    (
        {"VIVA_STT_PROVIDER": "google", "GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent.json"},
        "GOOGLE_APPLICATION_CREDENTIALS='/nonexistent.json' is not a readable",
    ),
]


@pytest.mark.parametrize(("env", "message"), MISCONFIGURED)
def test_a_misconfiguration_names_the_variable(
    clean: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    for name, value in env.items():
        clean.setenv(name, value)
    kind = "stt" if any(k.startswith("VIVA_STT") for k in env) else "tts"
    with pytest.raises(SpeechProviderError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve_speech(kind)  # type: ignore[arg-type]
    errors = check_speech_providers()
    assert [e.id for e in errors] == ["bot.E001"]
    assert message in errors[0].msg


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.skipif(
    _installed("azure.cognitiveservices.speech"), reason="the azure extra is installed here"
)
def test_a_provider_whose_extra_is_not_installed_says_which_to_install(
    clean: pytest.MonkeyPatch,
) -> None:
    clean.setenv("VIVA_STT_PROVIDER", "azure")
    clean.setenv("AZURE_SPEECH_API_KEY", "k")
    clean.setenv("AZURE_SPEECH_REGION", "uksouth")
    with pytest.raises(SpeechProviderError, match=r"pip install 'pipecat-ai\[azure\]==1.14.0'"):
        resolve_speech("stt")


def test_manage_py_check_fails_on_a_misconfigured_provider(clean: pytest.MonkeyPatch) -> None:
    clean.setenv("VIVA_TTS_PROVIDER", "elevenlabs")
    clean.setenv("VIVA_TTS_VOICE", "a-voice-id")
    with pytest.raises(
        SystemCheckError, match="VIVA_TTS_PROVIDER=elevenlabs needs ELEVENLABS_API_KEY"
    ):
        call_command("check")
