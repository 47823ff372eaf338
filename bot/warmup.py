"""A warm start: the voice dependencies load when a web or worker process starts, not on the
first candidate's offer.

Importing Pipecat, aiortc and the speech services, loading Silero VAD's ONNX model, a
PocketSphinx decoder and eSpeak NG take seconds on a small machine; done on the first offer
they delayed the first session's Start and cut the opening. :func:`warm_on_start` is called
by the ASGI entry (``config/asgi.py``, the web process) and by a Celery worker when it is ready
(``bot.tasks``), never by management commands, so ``manage.py`` stays fast.

* Only a process that hosts bots loads anything: the web process with ``VIVA_BOT_RUNNER=inline``,
  and a worker consuming the ``bots`` queue. With Celery bots the web process never builds a
  pipeline (SmallWebRTC needs inline bots; LiveKit media goes to the worker), so it only checks
  the configuration: loading there cost about 2.4 s of CPU in its first seconds (delaying the
  first live events by up to 0.4 s, ``bench/events.py``), its decoder worker processes and
  their memory, for nothing.

* The speech configuration is checked first, synchronously: a misconfigured provider stops the
  process at start-up (``ImproperlyConfigured`` naming the variable), as the system check does
  for ``manage.py``.
* The loading itself runs in a background thread so the server accepts connections at once; an
  offer arriving meanwhile simply waits for the imports it needs (Python's import lock).
  :func:`warm_voice` is the same work, blocking (``bench/voice.py`` times it).

``VIVA_VOICE_WARMUP=false`` turns it off (a process that never serves voice).
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from django.core.exceptions import ImproperlyConfigured

from bot.conf import _bool
from bot.speech_providers import SpeechProviderError, offline_stt_engine, resolve_speech

logger = logging.getLogger(__name__)

_started: threading.Thread | None = None
_lock = threading.Lock()


@dataclass
class WarmupReport:
    """Seconds each warm-up stage took (``stage -> seconds``), in order."""

    stages: dict[str, float] = field(default_factory=dict)

    def time(self, stage: str, work: Callable[[], object]) -> None:
        started = time.perf_counter()
        work()
        self.stages[stage] = time.perf_counter() - started

    @property
    def total(self) -> float:
        return sum(self.stages.values())


VOICE_MODULES: Final = ("bot.audio", "bot.pipeline", "bot.voice.webrtc", "bot.livekit")
"""Pipecat's pipeline, VAD and frames, the bot core's pipeline, aiortc and LiveKit."""


OFFLINE_STT_STAGES: Final = {"pocketsphinx": "PocketSphinx decoder", "whisper": "Whisper model"}
"""The warm-up stage that loads each offline recogniser (``VIVA_OFFLINE_STT``)."""


def _import_transports() -> None:
    for name in VOICE_MODULES:
        importlib.import_module(name)


def _load_vad() -> None:
    from bot.audio import build_vad_analyzer

    build_vad_analyzer()


def _load_turn_model() -> None:
    from bot.audio import voice_user_params

    voice_user_params()  # loads the process's smart-turn model unless it is turned off


def _load_offline_stt() -> None:
    from bot.audio import warm_offline_stt

    warm_offline_stt()


def _load_offline_tts() -> None:
    from bot.audio import voice_setting
    from bot.voice.espeak import Voice, engine

    engine().synthesize("Ready.", Voice(name=voice_setting("VIVA_TTS_VOICE", "en-us")))


def _build_voice_io() -> None:
    from bot.audio import voice_io

    voice_io()  # thrown away: a process's first build does one-off work (about 0.2 s)


def _build_llm() -> None:
    from bot.conf import bot_settings
    from bot.providers import build_llm

    build_llm(bot_settings())  # the provider's SDK (0.3 s of imports); the offline examiner starts


def warm_voice() -> WarmupReport:
    """Load everything a voice session needs now (blocking); returns what each stage took."""
    stt, tts = resolve_speech("stt"), resolve_speech("tts")
    report = WarmupReport()
    report.time("import Pipecat, aiortc, the bot", _import_transports)
    report.time("Silero VAD", _load_vad)
    report.time("smart-turn model", _load_turn_model)
    if stt.offline:
        stage = OFFLINE_STT_STAGES[offline_stt_engine()]
        report.time(stage, _load_offline_stt)
    else:
        from bot.speech_providers import build_hosted_stt

        report.time(f"{stt.provider} STT service", lambda: build_hosted_stt(stt))
    if tts.offline:
        report.time("eSpeak NG", _load_offline_tts)
    else:
        from bot.speech_providers import build_hosted_tts

        report.time(f"{tts.provider} TTS service", lambda: build_hosted_tts(tts))
    report.time("a session's speech services", _build_voice_io)
    report.time("LLM service", _build_llm)
    return report


def _warm_in_background() -> None:
    try:
        report = warm_voice()
    except Exception:  # a warm-up failure must not kill the server; the offer will report it
        logger.exception("voice warm-up failed")
        return
    logger.info(
        "voice warm-up done in %.2f s (%s)",
        report.total,
        ", ".join(f"{k} {v:.2f} s" for k, v in report.stages.items()),
    )


def warm_on_start(*, hosts_bots: bool = True) -> threading.Thread | None:
    """Check the speech configuration (raises ``ImproperlyConfigured``) and, in a process that
    ``hosts_bots``, start loading the voice dependencies in a background thread, once per
    process; ``None`` when nothing loads (turned off, or no bots here)."""
    global _started
    if not _bool("VIVA_VOICE_WARMUP", True):
        return None
    try:
        resolve_speech("stt")
        resolve_speech("tts")
    except SpeechProviderError as exc:
        raise ImproperlyConfigured(str(exc)) from exc
    if not hosts_bots:
        return None
    with _lock:
        if _started is None:
            _started = threading.Thread(
                target=_warm_in_background, name="voice-warmup", daemon=True
            )
            _started.start()
        return _started
