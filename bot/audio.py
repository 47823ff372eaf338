"""Voice plumbing shared by the bot's transports and services (docs/voice.md).

* the pipeline's sample rates (16 kHz in: Silero VAD and the PocketSphinx model both want it;
  24 kHz out) and the transport parameters every voice transport uses;
* Silero VAD (shipped inside Pipecat, runs on onnxruntime: no download);
* the offline STT/TTS services built from the voice settings;
* PCM/WAV helpers.

Voice settings are read from Django settings when configured, else from the environment, so
the bot runs the same inline, in a Celery worker or in a test: see :func:`voice_setting`.
"""

from __future__ import annotations

import dataclasses
import io
import os
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypedDict

from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import InputAudioRawFrame
from pipecat.pipeline.worker import PipelineParams
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.services.stt_service import SegmentedSTTService

from bot.activity import TimedVADProcessor
from bot.speech_fallback import SpeechFallback, with_fallback
from bot.speech_providers import (
    OFFLINE_STT_ENGINES,
    TTS_QUIET_SECONDS,
    build_hosted_stt,
    build_hosted_tts,
    offline_stt_engine,
    resolve_speech,
)
from bot.voice.languages import VoiceLanguageError, offline_stt_available, offline_voice
from bot.voice.turn_end import exam_user_params
from bot.voice.turn_model import shared_turn_model
from ioa.runtime.answer_end import TurnTiming

if TYPE_CHECKING:
    from pipecat.frames.frames import Frame
    from pipecat.processors.aggregators.llm_response_universal import LLMUserAggregatorParams
    from pipecat.processors.frame_processor import FrameProcessor
    from pipecat.transports.base_transport import BaseTransport

    from bot.pipeline import BotIO
    from bot.speech_providers import SpeechChoice
    from bot.voice.offline_tts import EspeakTTSService

VOICE_IN_SAMPLE_RATE: Final = 16000
"""Candidate audio: what Silero VAD and the en-US PocketSphinx model take."""
VOICE_OUT_SAMPLE_RATE: Final = 24000
"""Examiner audio produced by TTS; transports resample for the wire."""
VAD_STOP_SECS: Final = 0.6
"""Silence that ends a VAD segment for a recogniser that decodes segments (PocketSphinx, an
OpenAI-compatible endpoint). Longer than Pipecat's 0.2 s so a short pause inside an answer does
not split it into many segments (each decoded and scored on its own)."""
STREAMING_VAD_STOP_SECS: Final = 0.3
"""The same for a streaming recogniser (Deepgram's live protocol), which hears the whole stream
and only finalises its words at the VAD's stop: a shorter stop costs it no words, and the turn's
end, the reply and the silence clock come 0.3 s sooner (issue #30; runtime semantics §18)."""


def voice_setting(name: str, default: str) -> str:
    """A voice setting: ``settings.<name>`` when Django is configured and has it, else the
    environment variable ``<name>``, else ``default``."""
    try:
        from django.conf import settings

        if settings.configured and hasattr(settings, name):
            value = getattr(settings, name)
            if value is not None and str(value) != "":
                return str(value)
    except ImportError:  # pragma: no cover - Django is always installed with the bot
        pass
    value = os.environ.get(name, "").strip()
    return value or default


def pipeline_params(**overrides: object) -> PipelineParams:
    """``PipelineParams`` for a voice pipeline (16 kHz in, 24 kHz out); ``overrides`` are
    other ``PipelineParams`` fields, validated by pydantic as the constructor would."""
    values: dict[str, object] = {
        "audio_in_sample_rate": VOICE_IN_SAMPLE_RATE,
        "audio_out_sample_rate": VOICE_OUT_SAMPLE_RATE,
    }
    values.update(overrides)
    return PipelineParams.model_validate(values)


class TransportAudioParams(TypedDict):
    """The audio fields of ``TransportParams`` (:func:`transport_audio_params`)."""

    audio_in_enabled: bool
    audio_in_sample_rate: int
    audio_out_enabled: bool
    audio_out_sample_rate: int
    audio_out_10ms_chunks: int


def transport_audio_params() -> TransportAudioParams:
    """The audio fields of ``TransportParams``/``LiveKitParams`` every voice transport uses."""
    return {
        "audio_in_enabled": True,
        "audio_in_sample_rate": VOICE_IN_SAMPLE_RATE,
        "audio_out_enabled": True,
        "audio_out_sample_rate": VOICE_OUT_SAMPLE_RATE,
        "audio_out_10ms_chunks": 2,
    }


def build_vad_analyzer(*, stop_secs: float = VAD_STOP_SECS) -> SileroVADAnalyzer:
    """Silero VAD (the model ships inside Pipecat); it runs at the pipeline's input rate, which
    must be 16 kHz (the default here) or 8 kHz."""
    return SileroVADAnalyzer(params=VADParams(stop_secs=stop_secs))


def build_vad_processor(*, stop_secs: float = VAD_STOP_SECS) -> VADProcessor:
    """A ``VADProcessor`` to put between the input transport and the STT service, so a
    segmented STT sees ``VADUserStarted/StoppedSpeakingFrame`` (the alternative is a
    ``vad_analyzer`` on the user aggregator, which broadcasts them upstream). Its frames carry
    the audio's own time (``bot.activity.TimedVADProcessor``)."""
    return TimedVADProcessor(vad_analyzer=build_vad_analyzer(stop_secs=stop_secs))


def vad_for(stt: FrameProcessor) -> VADProcessor:
    """The VAD for ``stt``: a recogniser that decodes segments gets :data:`VAD_STOP_SECS`, a
    streaming one :data:`STREAMING_VAD_STOP_SECS`."""
    segmented = isinstance(stt, SegmentedSTTService)
    return build_vad_processor(stop_secs=VAD_STOP_SECS if segmented else STREAMING_VAD_STOP_SECS)


def offline_stt_usage() -> tuple[str, str]:
    """The offline recogniser's (engine, model) for usage records."""
    engine = offline_stt_engine()
    return engine, OFFLINE_STT_ENGINES[engine]


def _offline_stt_decoders() -> int:
    """``VIVA_STT_DECODERS``: how many segments the offline recogniser decodes at once."""
    from bot.voice.sphinx_decoder import DEFAULT_MAX_DECODERS

    return int(voice_setting("VIVA_STT_DECODERS", str(DEFAULT_MAX_DECODERS)))


def build_offline_stt() -> SegmentedSTTService:
    """The offline STT ``VIVA_OFFLINE_STT`` chooses: PocketSphinx (``VIVA_STT_DECODERS``: size
    of the process-wide decoder pool) or Whisper tiny.en (that many decodes at once)."""
    from bot.voice.offline_stt import PocketsphinxSTTService

    decoders = _offline_stt_decoders()
    if offline_stt_engine() == "whisper":
        from bot.voice.whisper_stt import OfflineWhisperSTTService, shared_decoder

        return OfflineWhisperSTTService(decoder=shared_decoder(decoders))
    return PocketsphinxSTTService(max_decoders=decoders)


def warm_offline_stt() -> None:
    """Load the offline recogniser ``VIVA_OFFLINE_STT`` chooses, sized as
    :func:`build_offline_stt` sizes it (the first caller sets the size): PocketSphinx's decoder
    worker processes (each loads its decoder), or Whisper's model."""
    decoders = _offline_stt_decoders()
    if offline_stt_engine() == "whisper":
        from bot.voice.whisper_stt import shared_decoder

        shared_decoder(decoders).warm_up()
        return
    from bot.voice.offline_stt import decoder_pool

    decoder_pool(max_decoders=decoders).warm_up()


def build_offline_tts(*, slower: bool = False, voice: str | None = None) -> EspeakTTSService:
    """eSpeak NG TTS from ``VIVA_TTS_VOICE`` and ``VIVA_TTS_RATE_WPM``; ``slower`` starts at the
    "slower speech" rate (a candidate's accommodation)."""
    from bot.voice.offline_tts import (
        DEFAULT_VOICE,
        NORMAL_RATE_WPM,
        SLOWER_RATE_WPM,
        EspeakTTSService,
    )

    if voice is None:
        voice = voice_setting("VIVA_TTS_VOICE", DEFAULT_VOICE)
    normal = int(voice_setting("VIVA_TTS_RATE_WPM", str(NORMAL_RATE_WPM)))
    rate_wpm = min(normal, SLOWER_RATE_WPM) if slower else normal
    return EspeakTTSService(voice=voice, rate_wpm=rate_wpm, stop_frame_timeout_s=TTS_QUIET_SECONDS)


def voice_user_params(*, language: str = "en") -> LLMUserAggregatorParams:
    """``LLMUserAggregatorParams`` for voice: the candidate's turn ends when the answer is over
    (``bot.voice.turn_end``: the exam's end-of-turn policy with the smart-turn model, unless
    ``VIVA_VOICE_TURN_MODEL=off``), not after a fixed silence. The waits are the defaults
    until the session sets the package's (``tune_turn_taking``). VAD frames come from the
    ``VADProcessor`` at the input (:func:`voice_io`)."""
    model_setting = voice_setting("VIVA_VOICE_TURN_MODEL", "smart-turn").lower()
    if model_setting not in {"smart-turn", "off"}:
        raise ValueError(
            f"VIVA_VOICE_TURN_MODEL must be 'smart-turn' or 'off', not {model_setting!r}"
        )
    model = shared_turn_model(enabled=model_setting == "smart-turn")
    return exam_user_params(timing=host_turn_timing(), language=language, model=model)


REPLY_PAUSE_DEFAULT: Final = "off"
"""The host's reply pause when ``VIVA_VOICE_REPLY_PAUSE_SEC`` is unset: none. In Chromium, with
natural answers of finished sentences about a second apart, the examiner began its reply in the
gap and spoke over the candidate's next sentence (CI, 2026-12-07: "Thank" before it stopped),
and a reply cut that way left the turn to the deadline, whose fallback repeated the question
while the candidate was still answering (since fixed in ``bot.turn_deadline``; runtime semantics
§18, "Off by default"). A host or a package (``replyPauseSec``) that wants the faster reply opts
in."""


def host_turn_timing() -> TurnTiming:
    """The host's default turn timing: ``VIVA_VOICE_REPLY_PAUSE_SEC`` sets the reply pause
    (seconds, or ``off``, the default :data:`REPLY_PAUSE_DEFAULT`: no turn ends before its
    finished pause; runtime semantics §18); a package's ``metadata.extensions.voice`` overrides
    it (``tune_turn_taking``)."""
    base = TurnTiming()
    setting = voice_setting("VIVA_VOICE_REPLY_PAUSE_SEC", REPLY_PAUSE_DEFAULT).lower()
    if setting == "off":
        return dataclasses.replace(base, reply_secs=base.finished_secs)
    try:
        return dataclasses.replace(base, reply_secs=float(setting))
    except ValueError as error:
        raise ValueError(
            f"VIVA_VOICE_REPLY_PAUSE_SEC must be a number of seconds or 'off': {setting!r}"
        ) from error


def offline_tts_language(language: str) -> dict[str, str]:
    """The eSpeak voice of an exam not in English; English keeps ``VIVA_TTS_VOICE``."""
    return {} if language == "en" else {"voice": offline_voice(language)}


def in_language(choice: SpeechChoice, language: str) -> SpeechChoice:
    """``choice`` (a hosted provider's ``SpeechChoice``) asked for the exam's ``language``
    (English keeps the configured ``VIVA_*_LANGUAGE``, such as ``en-GB``)."""
    if language == "en" or str(choice.language).split("-")[0].lower() == language:
        return choice
    return dataclasses.replace(choice, language=language)


def voice_io(
    transport: BaseTransport | None = None,
    *,
    input: FrameProcessor | None = None,
    output: FrameProcessor | None = None,
    slower: bool = False,
    stt: FrameProcessor | None = None,
    tts: FrameProcessor | None = None,
    language: str = "en",
) -> BotIO:
    """The bot core's ``BotIO`` for voice (``bot.pipeline``), in the exam's ``language``.

    * input: the transport's input (or ``input``) followed by Silero VAD
      (:func:`build_vad_processor`), so the segmented STT sees the VAD frames before the audio
      leaves it, at any pace; the user aggregator's turn strategies see them too;
    * STT and TTS unless given: the providers ``VIVA_STT_PROVIDER`` / ``VIVA_TTS_PROVIDER``
      select (``bot.speech_providers``; offline by default; ``slower``: the offline voice
      starts at the slower speech rate);
    * speech controls for the controller's ``AdjustSpeech`` effects, and the provider names for
      usage records.

    The offline TTS speaks with the language's eSpeak voice; a hosted provider is asked for the
    language; the offline STT refuses a language it has no model for
    (:class:`bot.voice.languages.VoiceLanguageError`) rather than hear it as English.
    """
    from pipecat.pipeline.pipeline import Pipeline

    from bot.pipeline import BotIO
    from bot.voice.offline_tts import EspeakTTSService

    stt_choice = resolve_speech("stt") if stt is None else None
    tts_choice = resolve_speech("tts") if tts is None else None
    if stt is None:
        assert stt_choice is not None
        if stt_choice.offline and not offline_stt_available(language):
            raise VoiceLanguageError(f"the offline STT has no model for {language!r}")
        stt = (
            build_offline_stt()
            if stt_choice.offline
            else build_hosted_stt(in_language(stt_choice, language))
        )
    if tts is None:
        assert tts_choice is not None
        tts = (
            build_offline_tts(slower=slower, voice=offline_tts_language(language).get("voice"))
            if tts_choice.offline
            else build_hosted_tts(in_language(tts_choice, language))
        )
    source = input if input is not None else (transport.input() if transport else None)
    vad = vad_for(stt)
    providers: dict[str, tuple[str, str]] = {}
    offline_usage = getattr(stt, "USAGE", None)  # an offline recogniser names itself
    if isinstance(offline_usage, tuple):
        providers["stt"] = offline_usage
    elif stt_choice is not None:
        providers["stt"] = stt_choice.usage_label
    if isinstance(tts, EspeakTTSService):
        providers["tts"] = ("espeak-ng", tts.voice.name)
    elif tts_choice is not None:
        providers["tts"] = tts_choice.usage_label
    fallbacks = _fallbacks(
        stt if stt_choice is not None and not stt_choice.offline else None,
        tts if tts_choice is not None and not tts_choice.offline else None,
        language=language,
        slower=slower,
    )
    if "stt" in fallbacks:
        stt = fallbacks["stt"].switcher
    if "tts" in fallbacks:
        tts = fallbacks["tts"].switcher

    def adjust_speech(setting: str, value: str) -> list[Frame]:
        if not isinstance(tts, EspeakTTSService):
            return []
        try:
            return [tts.delivery_update(setting, value)]
        except ValueError:
            return []

    return BotIO(
        transport=transport,
        input=Pipeline([source, vad]) if source is not None else vad,
        output=output,
        stt=stt,
        tts=tts,
        text_turns=False,
        user_params=voice_user_params(language=language),
        providers=providers,
        adjust_speech=adjust_speech,
        fallbacks=fallbacks,
    )


def _fallbacks(
    hosted_stt: FrameProcessor | None,
    hosted_tts: FrameProcessor | None,
    *,
    language: str,
    slower: bool,
) -> dict[str, SpeechFallback]:
    """The offline services in reserve for the hosted ones (``bot.speech_fallback``): none when
    ``VIVA_SPEECH_FALLBACK_SECONDS`` is 0; a recogniser only for a language the offline one
    knows."""
    if float(voice_setting("VIVA_SPEECH_FALLBACK_SECONDS", "30")) <= 0:
        return {}
    fallbacks: dict[str, SpeechFallback] = {}
    if hosted_stt is not None and offline_stt_available(language):
        fallbacks["stt"] = with_fallback(
            "stt", hosted_stt, build_offline_stt(), offline_stt_usage()
        )
    if hosted_tts is not None:  # eSpeak's voice for the language (VIVA_TTS_VOICE is the host's)
        voice = build_offline_tts(slower=slower, voice=offline_voice(language))
        fallbacks["tts"] = with_fallback("tts", hosted_tts, voice, ("espeak-ng", voice.voice.name))
    return fallbacks


def pcm_duration_secs(pcm: bytes, sample_rate: int, channels: int = 1) -> float:
    """Length of 16-bit PCM in seconds."""
    return len(pcm) / (2 * channels * sample_rate)


def wav_bytes(pcm: bytes, sample_rate: int, channels: int = 1) -> bytes:
    """16-bit PCM wrapped in a WAV container."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(pcm)
    return buffer.getvalue()


def read_wav(path: str | Path) -> tuple[bytes, int]:
    """``(pcm, sample_rate)`` of a 16-bit mono WAV file."""
    with wave.open(str(path), "rb") as source:
        if source.getsampwidth() != 2 or source.getnchannels() != 1:
            raise ValueError(f"{path}: expected 16-bit mono PCM")
        return source.readframes(source.getnframes()), source.getframerate()


def input_audio_frames(
    pcm: bytes, sample_rate: int, *, chunk_ms: int = 20
) -> Iterator[InputAudioRawFrame]:
    """``pcm`` cut into ``InputAudioRawFrame`` chunks, as an input transport delivers them."""
    size = max(2, sample_rate * chunk_ms // 1000 * 2)
    for start in range(0, len(pcm), size):
        yield InputAudioRawFrame(
            audio=pcm[start : start + size], sample_rate=sample_rate, num_channels=1
        )
