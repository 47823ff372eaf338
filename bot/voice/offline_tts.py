"""Offline text-to-speech: a Pipecat ``TTSService`` on eSpeak NG (no network, no API key).

:class:`EspeakTTSService` synthesises each sentence the base class hands it with
:mod:`bot.voice.espeak` in a worker thread and streams it as ``TTSAudioRawFrame`` chunks of
16-bit mono PCM, resampled from eSpeak's 22 050 Hz to the pipeline's output rate
(``PipelineParams.audio_out_sample_rate``, or ``sample_rate=`` if given). Each sentence's audio
is preceded by a :class:`bot.spoken_text.SpokenWordsFrame` with eSpeak's word timing, so a
barge-in records the text the candidate heard (``bot.spoken_text``).

Delivery is runtime-updatable through Pipecat's ``TTSUpdateSettingsFrame``:

* ``rate`` — words per minute (eSpeak: 80..450). :data:`NORMAL_RATE_WPM` by default;
  :data:`SLOWER_RATE_WPM` is the "slower speech" accommodation and the ``slow_down`` command;
* ``volume`` — eSpeak amplitude 0..200 (100 default);
* ``voice`` — an eSpeak voice name, optionally with a variant (``en-us``, ``en-gb``, ``en-us+f2``).

:meth:`EspeakTTSService.delivery_update` turns the runtime controller's ``AdjustSpeech`` effect
(``rate: slower|normal``, ``volume: up|down``) into that frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from loguru import logger
from pipecat.frames.frames import ErrorFrame, Frame, TTSUpdateSettingsFrame
from pipecat.services.settings import TTSSettings
from pipecat.services.tts_service import TTSService
from pipecat.transcriptions.language import Language
from pipecat.utils.types import NOT_GIVEN, NotGiven, is_given

from bot.spoken_text import SpokenWordsFrame, WordMark
from bot.voice.espeak import MAX_VOLUME, Voice, engine

NORMAL_RATE_WPM: Final = 160
"""The examiner's default speaking rate, words per minute."""
SLOWER_RATE_WPM: Final = 125
"""The "slower speech" accommodation (about 0.8 of normal)."""
DEFAULT_VOICE: Final = "en-us"
DEFAULT_VOLUME: Final = 100
VOLUME_STEP: Final = 20
"""How much ``volume: up|down`` changes the amplitude."""
MIN_AUDIBLE_VOLUME: Final = 40
CHUNK_SECONDS: Final = 0.2
"""Audio is pushed downstream in chunks of this length (interruptions cut at chunk edges)."""

_LANGUAGE_VOICES: Final[dict[str, str]] = {"en": "en-us", "en-us": "en-us", "en-gb": "en-gb"}


@dataclass
class EspeakTTSSettings(TTSSettings):
    """Settings of :class:`EspeakTTSService` (store and delta mode, see ``ServiceSettings``).

    Parameters:
        rate: Speaking rate in words per minute.
        volume: eSpeak amplitude, 0..200.
    """

    rate: int | NotGiven | None = field(default_factory=lambda: NOT_GIVEN)
    volume: int | NotGiven | None = field(default_factory=lambda: NOT_GIVEN)

    _aliases: ClassVar[dict[str, str]] = {"voice_id": "voice", "speed": "rate"}


class EspeakTTSService(TTSService):
    """Offline TTS on eSpeak NG; output is 16-bit mono PCM at the pipeline's sample rate."""

    Settings = EspeakTTSSettings
    _settings: EspeakTTSSettings

    def __init__(
        self,
        *,
        voice: str = DEFAULT_VOICE,
        rate_wpm: int = NORMAL_RATE_WPM,
        volume: int = DEFAULT_VOLUME,
        settings: EspeakTTSSettings | None = None,
        **kwargs: Any,  # Any: Pipecat's TTSService takes untyped **kwargs
    ) -> None:
        """Create the service; eSpeak NG is loaded here (fails fast if it is missing).

        Args:
            voice: eSpeak voice name (``en-us``, ``en-gb``, ``en-us+f2``...).
            rate_wpm: Initial speaking rate, words per minute.
            volume: Initial amplitude, 0..200.
            settings: A settings delta applied over those values.
            **kwargs: Passed to ``TTSService`` (e.g. ``sample_rate``).
        """
        store = EspeakTTSSettings(
            model=None, voice=voice, language=None, rate=rate_wpm, volume=volume
        )
        if settings is not None:
            store.apply_update(settings)
        kwargs.setdefault("push_start_frame", True)
        kwargs.setdefault("push_stop_frames", True)
        super().__init__(settings=store, **kwargs)
        self._engine = engine()
        self._normal_rate = int(rate_wpm)
        self._requested_volume: int | None = None

    def can_generate_metrics(self) -> bool:
        """Processing time and TTFB are measured around each sentence."""
        return True

    def language_to_service_language(self, language: Language) -> str | None:
        """An eSpeak voice for ``language`` (English only; ``None`` for the rest)."""
        code = str(language.value if isinstance(language, Language) else language).lower()
        return _LANGUAGE_VOICES.get(code) or _LANGUAGE_VOICES.get(code.split("-")[0])

    # Pipecat's TTSService narrows AIService's ServiceSettings to TTSSettings the same way.
    # Any: Pipecat types the changed settings as dict[str, Any].
    async def _update_settings(self, delta: TTSSettings) -> dict[str, Any]:  # type: ignore[override]
        changed = await super()._update_settings(delta)
        language = self._settings.language
        if "language" in changed and language in _LANGUAGE_VOICES.values():
            # A language change picks that language's voice (other languages keep the voice).
            self._settings.voice = str(language)
        return changed

    @property
    def voice(self) -> Voice:
        """The voice and delivery the next sentence is spoken with."""
        settings = self._settings
        return Voice(
            name=str(settings.voice) if is_given(settings.voice) and settings.voice else "en-us",
            rate_wpm=int(settings.rate)
            if is_given(settings.rate) and settings.rate
            else NORMAL_RATE_WPM,
            volume=int(settings.volume)
            if is_given(settings.volume) and settings.volume is not None
            else DEFAULT_VOLUME,
        ).clamped()

    def delivery_update(self, setting: str, value: str) -> TTSUpdateSettingsFrame:
        """The settings frame for the controller's ``AdjustSpeech(setting, value)`` effect.

        ``rate``: ``slower`` (the accommodation: :data:`SLOWER_RATE_WPM`, or 0.8 of a normal rate
        that is already slower), ``normal`` (the rate the service was created with), or a number
        of words per minute; ``volume``: ``up``, ``down`` (±20 from the last request),
        ``normal`` or a number. Queue the frame into the pipeline (it applies from the next
        sentence on). Raises ``ValueError`` for anything else.
        """
        if setting == "rate":
            rates = {
                "slower": min(SLOWER_RATE_WPM, int(self._normal_rate * 0.8)),
                "normal": self._normal_rate,
            }
            rate = int(value) if value.isdigit() else rates.get(value)
            if rate is None:
                raise ValueError(f"unknown speech rate {value!r}")
            delta = EspeakTTSSettings(rate=rate)
        elif setting == "volume":
            # From the last requested volume: updates queued in a row add up.
            base = self._requested_volume or self.voice.volume
            steps = {"up": base + VOLUME_STEP, "down": base - VOLUME_STEP, "normal": DEFAULT_VOLUME}
            volume = int(value) if value.isdigit() else steps.get(value)
            if volume is None:
                raise ValueError(f"unknown volume change {value!r}")
            self._requested_volume = min(MAX_VOLUME, max(MIN_AUDIBLE_VOLUME, volume))
            delta = EspeakTTSSettings(volume=self._requested_volume)
        else:
            raise ValueError(f"unknown speech setting {setting!r}")
        return TTSUpdateSettingsFrame(delta=delta, service=self)

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame | None, None]:
        """Synthesise one sentence and stream it as ``TTSAudioRawFrame`` chunks."""
        voice = self.voice
        try:
            await self.start_tts_usage_metrics(text)
            speech = await asyncio.to_thread(self._engine.speak, text, voice)
            yield SpokenWordsFrame(
                text=text,
                words=tuple(WordMark(w.end, w.audio_ms / 1000) for w in speech.words),
            )
            pcm = speech.pcm
            async for frame in self._stream_audio_frames_from_iterator(
                self._chunks(pcm), in_sample_rate=self._engine.sample_rate, context_id=context_id
            ):
                await self.stop_ttfb_metrics()
                yield frame
        except Exception as error:
            logger.error(f"{self}: eSpeak NG failed on {text!r}: {error}")
            yield ErrorFrame(error=f"offline TTS failed: {error}")
        finally:
            await self.stop_ttfb_metrics()

    async def _chunks(self, pcm: bytes) -> AsyncIterator[bytes]:
        size = max(2, int(self._engine.sample_rate * CHUNK_SECONDS) * 2)
        for start in range(0, len(pcm), size):
            yield pcm[start : start + size]
