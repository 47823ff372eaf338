"""A hosted speech provider with the offline one in reserve (issue #30).

An exam must not end, nor stay paused for minutes, because a hosted recogniser or voice is
down. When a hosted STT or TTS is configured, :func:`with_fallback` puts it in a Pipecat
``ServiceSwitcher`` (manual strategy) together with the offline service that can stand in for
it: PocketSphinx for an English exam (the offline recogniser is honest about English only, so
a German or Spanish exam has no recogniser in reserve), eSpeak NG in the exam's language for
the voice. The hosted service is active; the offline one starts with the pipeline (its decoder
processes are shared by the bot process's sessions) and sees no frames until it is switched to.

The decision is the fault watch's (``bot.examiner_faults``): once a provider's outage has lasted
``VIVA_SPEECH_FALLBACK_SECONDS`` (0: never) it pushes :meth:`SpeechFallback.switch_frame`, the
exam carries on with the offline service, and a ``system_error`` (code ``stt_fallback`` /
``tts_fallback``, severity ``warning``) tells the candidate, the proctor and the record. The
switch is once per session: the hosted provider is not tried again in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from pipecat.frames.frames import ManuallySwitchServiceFrame
from pipecat.pipeline.service_switcher import ServiceSwitcher, ServiceSwitcherStrategyManual
from pipecat.processors.frame_processor import FrameProcessor

SpeechKind = Literal["stt", "tts"]

FALLBACK_MESSAGES: Final[dict[SpeechKind, str]] = {
    "stt": (
        "Our speech recogniser is not available, so a simpler one is listening to you now. "
        "It may mishear you more often: you can check what it heard on your screen and "
        "correct it there. Your time was not running while we switched."
    ),
    "tts": (
        "The examiner's usual voice is not available, so it speaks with a simpler voice now. "
        "Your time was not running while we switched."
    ),
}
"""What the candidate is told when a provider is replaced by the offline one."""


@dataclass
class SpeechFallback:
    """A hosted service and the offline one in reserve, behind one ``ServiceSwitcher``."""

    kind: SpeechKind
    hosted: FrameProcessor
    offline: FrameProcessor
    offline_label: tuple[str, str]
    """The offline service's usage label (provider, model or voice)."""
    switcher: ServiceSwitcher[ServiceSwitcherStrategyManual]
    used: bool = False
    """The offline service has been switched to (once per session)."""

    def owns(self, processor: object) -> bool:
        """``processor`` is the switcher or one of its services."""
        return processor is self.switcher or processor is self.hosted or processor is self.offline

    def switch_frame(self) -> ManuallySwitchServiceFrame:
        """The frame that makes the offline service the active one; marks the switch made."""
        self.used = True
        return ManuallySwitchServiceFrame(service=self.offline)


def with_fallback(
    kind: SpeechKind,
    hosted: FrameProcessor,
    offline: FrameProcessor,
    offline_label: tuple[str, str],
) -> SpeechFallback:
    """``hosted`` active, ``offline`` in reserve (module docstring)."""
    switcher = ServiceSwitcher(
        services=[hosted, offline], strategy_type=ServiceSwitcherStrategyManual
    )
    return SpeechFallback(kind, hosted, offline, offline_label, switcher)
