"""Speech providers: build the Pipecat STT and TTS services the settings ask for.

``VIVA_STT_PROVIDER`` and ``VIVA_TTS_PROVIDER`` choose, like ``VIVA_LLM_PROVIDER`` for the LLM
(``bot.providers``). The default, ``offline``, is PocketSphinx and eSpeak NG inside the process
(no network, no key). A hosted provider's Pipecat module is imported only when it is chosen, and
only its extra needs installing (``pip install 'pipecat-ai[deepgram]==1.14.0'``).

==================  ======================================  ==========================  ==========
provider            STT / TTS service                       key (or ``VIVA_S/TT_API_KEY``)  extra
==================  ======================================  ==========================  ==========
``offline``         PocketSphinx / eSpeak NG                none                        (bundled)
``deepgram``        ``DeepgramSTTService`` (live WebSocket)  ``DEEPGRAM_API_KEY``        deepgram
                    / ``DeepgramTTSService``
``openai``          ``OpenAISTTService`` / ``OpenAITTSService``  ``OPENAI_API_KEY``     openai
``openai_compatible`` the same at ``VIVA_S/TT_BASE_URL``    optional                    openai
``azure``           ``AzureSTTService`` / ``AzureTTSService``  ``AZURE_SPEECH_API_KEY``  azure
                    (+ ``AZURE_SPEECH_REGION``)
``google``          ``GoogleSTTService`` / ``GoogleTTSService``  ``GOOGLE_APPLICATION_    google
                                                            CREDENTIALS`` (a JSON file)
``cartesia``        ``CartesiaSTTService`` / ``CartesiaTTSService``  ``CARTESIA_API_KEY``  cartesia
``elevenlabs``      ``ElevenLabsRealtimeSTTService`` /      ``ELEVENLABS_API_KEY``      elevenlabs
                    ``ElevenLabsTTSService``
==================  ======================================  ==========================  ==========

Per kind (``STT``/``TTS``): ``VIVA_<KIND>_MODEL``, ``VIVA_<KIND>_LANGUAGE`` (a BCP 47 tag Pipecat
knows, default ``en``), ``VIVA_<KIND>_API_KEY``, ``VIVA_<KIND>_BASE_URL`` (any provider: point it at
a proxy, a private endpoint or a local peer) and ``VIVA_<KIND>_REGION`` (Azure); the TTS voice is
``VIVA_TTS_VOICE`` (a provider voice id; Cartesia and ElevenLabs have no default voice).

:func:`resolve_speech` reads and checks everything without importing Pipecat, so the system check
(``bot.checks``) and a process's start refuse a misconfiguration with a message naming the
variable. A provider failing mid-exam pushes an ``ErrorFrame``; the bot core records it as a
``stt``/``tts`` fault and the runtime recovers or pauses with a message (docs/bot.md).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from bot.providers import ProviderError

if TYPE_CHECKING:
    from pipecat.services.stt_service import STTService
    from pipecat.services.tts_service import TTSService
    from pipecat.transcriptions.language import Language

Kind = Literal["stt", "tts"]
PIPECAT_VERSION: Final = "1.14.0"
TTS_QUIET_SECONDS: Final = 10.0
"""How long a voice may send no audio within a sentence before Pipecat takes the sentence as
over (its TTS services' ``stop_frame_timeout_s``, 3 s by default). A hosted voice under load, or
eSpeak on a busy machine, can take more than 3 s for a sentence's first audio: the sentence then
ended before its audio came, was stored as cut with nothing heard, and the exam paused for a
fault of the voice while the candidate heard the examiner speak. A voice whose request fails
still ends its sentence at once; only one that hangs is waited for this long."""


class SpeechProviderError(ProviderError):
    """A speech provider cannot be used as configured (the message names the variable)."""


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """What one provider needs: its Pipecat extra, SDK module, key and defaults."""

    extra: str | None
    sdk: str | None
    key_variable: str | None
    key_required: bool = True
    base_url_required: bool = False
    region_variable: str | None = None
    default_model: dict[Kind, str | None] = field(default_factory=dict)
    default_voice: str | None = None
    voice_required: bool = False
    kinds: frozenset[Kind] = frozenset({"stt", "tts"})


SPECS: Final[dict[str, ProviderSpec]] = {
    "offline": ProviderSpec(extra=None, sdk=None, key_variable=None, key_required=False),
    "deepgram": ProviderSpec(
        extra="deepgram",
        sdk="deepgram",
        key_variable="DEEPGRAM_API_KEY",
        default_model={"stt": "nova-3-general", "tts": None},
        default_voice="aura-2-helena-en",
    ),
    "openai": ProviderSpec(
        extra="openai",
        sdk="openai",
        key_variable="OPENAI_API_KEY",
        default_model={"stt": "gpt-4o-transcribe", "tts": "gpt-4o-mini-tts"},
        default_voice="alloy",
    ),
    "openai_compatible": ProviderSpec(
        extra="openai",
        sdk="openai",
        key_variable=None,
        key_required=False,
        base_url_required=True,
        default_model={"stt": "whisper-1", "tts": "tts-1"},
        default_voice="alloy",
    ),
    "azure": ProviderSpec(
        extra="azure",
        sdk="azure.cognitiveservices.speech",
        key_variable="AZURE_SPEECH_API_KEY",
        region_variable="AZURE_SPEECH_REGION",
        default_voice="en-GB-SoniaNeural",
    ),
    "google": ProviderSpec(
        extra="google",
        sdk="google.cloud.speech_v2",
        key_variable="GOOGLE_APPLICATION_CREDENTIALS",
        default_voice="en-GB-Chirp3-HD-Charon",
    ),
    "cartesia": ProviderSpec(
        extra="cartesia",
        sdk="websockets",
        key_variable="CARTESIA_API_KEY",
        voice_required=True,
    ),
    "elevenlabs": ProviderSpec(
        extra="elevenlabs",
        sdk="websockets",
        key_variable="ELEVENLABS_API_KEY",
        voice_required=True,
    ),
}
STT_PROVIDERS: Final = frozenset(name for name, spec in SPECS.items() if "stt" in spec.kinds)
TTS_PROVIDERS: Final = frozenset(name for name, spec in SPECS.items() if "tts" in spec.kinds)


def _raw(name: str) -> str | None:
    """``settings.<name>`` when Django defines it, else the environment (blank = unset)."""
    from django.conf import settings

    value: object = getattr(settings, name, None) if settings.configured else None
    if value is None:
        value = os.environ.get(name)
    text = "" if value is None else str(value).strip()
    return text or None


@dataclass(frozen=True, slots=True)
class SpeechChoice:
    """A resolved speech provider (``api_key`` is never shown)."""

    kind: Kind
    provider: str
    model: str | None
    voice: str | None
    language: str
    base_url: str | None
    region: str | None
    api_key: str | None = field(default=None, repr=False)

    @property
    def offline(self) -> bool:
        return self.provider == "offline"

    @property
    def variable(self) -> str:
        return f"VIVA_{self.kind.upper()}_PROVIDER"

    @property
    def usage_label(self) -> tuple[str, str]:
        """``(provider, model or voice)`` for usage records."""
        detail = self.model if self.kind == "stt" else (self.voice or self.model)
        return self.provider, detail or self.language


def _check_language(variable: str, value: str) -> str:
    from pipecat.transcriptions.language import Language

    try:
        return Language(value).value
    except ValueError:
        raise SpeechProviderError(
            f"{variable}={value!r} is not a language tag Pipecat knows (e.g. en, en-GB, fr)"
        ) from None


def _check_installed(variable: str, provider: str, spec: ProviderSpec) -> None:
    if spec.sdk is None:
        return
    try:
        found = importlib.util.find_spec(spec.sdk) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise SpeechProviderError(
            f"{variable}={provider} needs Pipecat's {spec.extra!r} extra: "
            f"pip install 'pipecat-ai[{spec.extra}]=={PIPECAT_VERSION}'"
        )


def _credentials(kind: Kind, variable: str, provider: str, spec: ProviderSpec) -> str | None:
    key = _raw(f"VIVA_{kind.upper()}_API_KEY") or (
        _raw(spec.key_variable) if spec.key_variable else None
    )
    if spec.key_required and not key:
        raise SpeechProviderError(
            f"{variable}={provider} needs {spec.key_variable} (or VIVA_{kind.upper()}_API_KEY)"
        )
    if provider == "google" and key and not os.path.isfile(key):
        raise SpeechProviderError(
            f"{variable}=google: GOOGLE_APPLICATION_CREDENTIALS={key!r} is not a readable "
            "service-account JSON file"
        )
    return key


def resolve_speech(kind: Kind) -> SpeechChoice:
    """The provider, model, voice, language and endpoint the settings select for ``kind``;
    raises :class:`SpeechProviderError` naming the variable that is wrong."""
    upper = kind.upper()
    variable = f"VIVA_{upper}_PROVIDER"
    provider = (_raw(variable) or "offline").lower()
    allowed = STT_PROVIDERS if kind == "stt" else TTS_PROVIDERS
    if provider not in allowed:
        raise SpeechProviderError(
            f"{variable}={provider!r} is not one of {', '.join(sorted(allowed))}"
        )
    spec = SPECS[provider]
    language = _raw(f"VIVA_{upper}_LANGUAGE") or "en"
    if provider == "offline":
        voice = _raw("VIVA_TTS_VOICE") if kind == "tts" else None
        return SpeechChoice(kind, provider, None, voice, language, None, None)
    _check_installed(variable, provider, spec)
    language = _check_language(f"VIVA_{upper}_LANGUAGE", language)
    base_url = _raw(f"VIVA_{upper}_BASE_URL")
    if spec.base_url_required and not base_url:
        raise SpeechProviderError(f"{variable}={provider} needs VIVA_{upper}_BASE_URL")
    if base_url and not base_url.startswith(("http://", "https://", "ws://", "wss://")):
        raise SpeechProviderError(
            f"VIVA_{upper}_BASE_URL={base_url!r} is not an http(s):// or ws(s):// URL"
        )
    region = None
    if spec.region_variable:
        region = _raw(f"VIVA_{upper}_REGION") or _raw(spec.region_variable)
        if not region and not base_url:
            raise SpeechProviderError(
                f"{variable}={provider} needs {spec.region_variable} (or VIVA_{upper}_REGION), "
                f"or a private endpoint in VIVA_{upper}_BASE_URL"
            )
    voice = None
    if kind == "tts":
        voice = _raw("VIVA_TTS_VOICE") or spec.default_voice
        if spec.voice_required and not voice:
            raise SpeechProviderError(
                f"{variable}={provider} needs VIVA_TTS_VOICE (a {provider} voice id)"
            )
    model = _raw(f"VIVA_{upper}_MODEL") or spec.default_model.get(kind)
    key = _credentials(kind, variable, provider, spec)
    return SpeechChoice(kind, provider, model, voice, language, base_url, region, key)


OFFLINE_STT_ENGINES: Final = {"pocketsphinx": "en-us", "whisper": "tiny.en"}
"""The offline recognisers ``VIVA_OFFLINE_STT`` chooses from, with their model names."""


def offline_stt_engine() -> str:
    """The offline recogniser ``VIVA_OFFLINE_STT`` names (default ``pocketsphinx``); raises
    :class:`SpeechProviderError` naming the variable for another value."""
    engine = (_raw("VIVA_OFFLINE_STT") or "pocketsphinx").lower()
    if engine not in OFFLINE_STT_ENGINES:
        raise SpeechProviderError(
            f"VIVA_OFFLINE_STT={engine!r} is not one of {', '.join(sorted(OFFLINE_STT_ENGINES))}"
        )
    return engine


def configuration_problems() -> list[str]:
    """Every speech misconfiguration, as messages (empty when all resolve)."""
    problems = []
    for check in (lambda: resolve_speech("stt"), lambda: resolve_speech("tts"), offline_stt_engine):
        try:
            check()
        except SpeechProviderError as exc:
            problems.append(str(exc))
    return problems


# --- building the services (imports the chosen provider's Pipecat module only) ------------------


def _language(choice: SpeechChoice) -> Language:
    from pipecat.transcriptions.language import Language

    return Language(choice.language)


def _ws(url: str) -> str:
    """A WebSocket URL for an http(s) base URL (ws(s) kept)."""
    if url.startswith("https://"):
        return "wss://" + url[len("https://") :]
    if url.startswith("http://"):
        return "ws://" + url[len("http://") :]
    return url


def _stt_deepgram(c: SpeechChoice) -> STTService:
    from pipecat.services.deepgram.stt import DeepgramSTTService

    settings = DeepgramSTTService.Settings(
        model=c.model, language=_language(c), interim_results=True
    )
    return DeepgramSTTService(api_key=c.api_key or "", base_url=c.base_url or "", settings=settings)


def _stt_openai(c: SpeechChoice) -> STTService:
    from pipecat.services.openai.stt import OpenAISTTService

    settings = OpenAISTTService.Settings(model=c.model, language=_language(c))
    return OpenAISTTService(
        api_key=c.api_key or "not-needed", base_url=c.base_url, settings=settings
    )


def _stt_azure(c: SpeechChoice) -> STTService:
    from pipecat.services.azure.stt import AzureSTTService

    return AzureSTTService(
        api_key=c.api_key or "",
        region=c.region,
        private_endpoint=c.base_url,
        settings=AzureSTTService.Settings(language=_language(c)),
    )


def _stt_google(c: SpeechChoice) -> STTService:
    from pipecat.services.google.stt import GoogleSTTService

    settings = GoogleSTTService.Settings(language=_language(c))
    if c.model:
        settings.model = c.model
    return GoogleSTTService(credentials_path=c.api_key, settings=settings)


def _stt_cartesia(c: SpeechChoice) -> STTService:
    from pipecat.services.cartesia.stt import CartesiaSTTService

    settings = CartesiaSTTService.Settings(language=_language(c))
    if c.model:
        settings.model = c.model
    return CartesiaSTTService(api_key=c.api_key or "", base_url=c.base_url or "", settings=settings)


def _stt_elevenlabs(c: SpeechChoice) -> STTService:
    from pipecat.services.elevenlabs.stt import ElevenLabsRealtimeSTTService

    api_key = c.api_key or ""
    if c.base_url:
        base_url = c.base_url.split("://", 1)[-1]
        return ElevenLabsRealtimeSTTService(api_key=api_key, model=c.model, base_url=base_url)
    return ElevenLabsRealtimeSTTService(api_key=api_key, model=c.model)


def _tts_deepgram(c: SpeechChoice) -> TTSService:
    from pipecat.services.deepgram.tts import DeepgramTTSService

    return DeepgramTTSService(
        api_key=c.api_key or "",
        base_url=_ws(c.base_url) if c.base_url else "wss://api.deepgram.com",
        settings=DeepgramTTSService.Settings(voice=c.voice),
        stop_frame_timeout_s=TTS_QUIET_SECONDS,
    )


def _tts_openai(c: SpeechChoice) -> TTSService:
    from pipecat.services.openai.tts import OpenAITTSService

    settings = OpenAITTSService.Settings(model=c.model, voice=c.voice)
    return OpenAITTSService(
        api_key=c.api_key or "not-needed",
        base_url=c.base_url,
        settings=settings,
        stop_frame_timeout_s=TTS_QUIET_SECONDS,
    )


def _tts_azure(c: SpeechChoice) -> TTSService:
    from pipecat.services.azure.tts import AzureTTSService

    return AzureTTSService(
        api_key=c.api_key or "",
        region=c.region,
        private_endpoint=c.base_url,
        settings=AzureTTSService.Settings(voice=c.voice, language=_language(c)),
        stop_frame_timeout_s=TTS_QUIET_SECONDS,
    )


def _tts_google(c: SpeechChoice) -> TTSService:
    from pipecat.services.google.tts import GoogleTTSService

    return GoogleTTSService(
        credentials_path=c.api_key,
        settings=GoogleTTSService.Settings(voice=c.voice, language=_language(c)),
        stop_frame_timeout_s=TTS_QUIET_SECONDS,
    )


def _tts_cartesia(c: SpeechChoice) -> TTSService:
    from pipecat.services.cartesia.tts import CartesiaTTSService

    settings = CartesiaTTSService.Settings(voice=c.voice, language=_language(c))
    if c.model:
        settings.model = c.model
    api_key = c.api_key or ""
    if c.base_url:
        return CartesiaTTSService(
            api_key=api_key,
            settings=settings,
            url=_ws(c.base_url),
            stop_frame_timeout_s=TTS_QUIET_SECONDS,
        )
    return CartesiaTTSService(
        api_key=api_key, settings=settings, stop_frame_timeout_s=TTS_QUIET_SECONDS
    )


def _tts_elevenlabs(c: SpeechChoice) -> TTSService:
    from pipecat.services.elevenlabs.tts import ElevenLabsTTSService

    settings = ElevenLabsTTSService.Settings(voice=c.voice)
    if c.model:
        settings.model = c.model
    api_key = c.api_key or ""
    if c.base_url:
        return ElevenLabsTTSService(
            api_key=api_key,
            settings=settings,
            url=_ws(c.base_url),
            stop_frame_timeout_s=TTS_QUIET_SECONDS,
        )
    return ElevenLabsTTSService(
        api_key=api_key, settings=settings, stop_frame_timeout_s=TTS_QUIET_SECONDS
    )


STT_BUILDERS: Final[dict[str, Callable[[SpeechChoice], STTService]]] = {
    "deepgram": _stt_deepgram,
    "openai": _stt_openai,
    "openai_compatible": _stt_openai,
    "azure": _stt_azure,
    "google": _stt_google,
    "cartesia": _stt_cartesia,
    "elevenlabs": _stt_elevenlabs,
}
TTS_BUILDERS: Final[dict[str, Callable[[SpeechChoice], TTSService]]] = {
    "deepgram": _tts_deepgram,
    "openai": _tts_openai,
    "openai_compatible": _tts_openai,
    "azure": _tts_azure,
    "google": _tts_google,
    "cartesia": _tts_cartesia,
    "elevenlabs": _tts_elevenlabs,
}


def build_hosted_stt(choice: SpeechChoice) -> STTService:
    """The Pipecat STT service of a hosted ``choice`` (not ``offline``)."""
    return STT_BUILDERS[choice.provider](choice)


def build_hosted_tts(choice: SpeechChoice) -> TTSService:
    """The Pipecat TTS service of a hosted ``choice`` (not ``offline``)."""
    return TTS_BUILDERS[choice.provider](choice)
