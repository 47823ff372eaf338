"""The candidate's spoken turn ends when the answer is over, not after a fixed silence
(docs/voice.md "End of a turn", ``ioa.runtime.answer_end``).

:class:`ExamTurnStopStrategy` is the user aggregator's stop strategy in voice mode. It follows
the VAD (speaking or not, and when the speech ended, by the audio's own clock), the final
transcripts of the turn so far, and the audio of the turn; when the VAD reports the end of a
stretch of speech it asks the smart-turn model (``bot.voice.turn_model``) how finished it
sounded, and the end-of-turn policy (:func:`ioa.runtime.answer_end.turn_wait`) how long the
silence must last from those and the words. The turn ends when that silence has passed with the
transcript of its last stretch of speech in (a slow recogniser's words of an earlier stretch do
not end it; :func:`late_words_wait` bounds the wait, longer for a longer stretch); any speech
before then cancels it, and the turn goes on. A typed answer (the recogniser replaced by typing)
ends the turn at once, as in text mode.

The silence is counted on the audio the bot has heard, not on the wall clock
(:class:`bot.activity.AudioClock`): audio that arrives late (a network hiccup, a loaded machine)
may hold the candidate's next sentence, and the VAD reports speech only once it has processed
it. The VAD passes each chunk on before it decides on it, so when a chunk arrives here, every
start the VAD confirmed on the chunks before it has arrived too; the turn ends at the first chunk
that comes after the silence's end. Should no audio come at all (the stream stopped), a
wall-clock fallback ends the turn :data:`AUDIO_STALL_SECS` later.

The waits come from the package and the candidate's extra time (:func:`tune_turn_taking`). The
aggregator's own watchdog (``user_turn_stop_timeout``) is set past the thinking pause, so it
never cuts a thinking candidate short.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Final

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.aggregators.llm_response_universal import LLMUserAggregatorParams
from pipecat.turns.types import ProcessFrameResult
from pipecat.turns.user_stop.base_user_turn_stop_strategy import BaseUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from bot.activity import AudioClock, speech_instant
from bot.pipeline import transcript_confidence
from bot.text_transport import TypedTranscriptionFrame
from bot.turn_settlement import TurnSettlement
from ioa.runtime.answer_end import (
    RELIABLE_CONFIDENCE,
    TurnTiming,
    reply_wait,
    turn_timing,
    turn_wait,
)
from ioa.schema import AssessmentPackage

if TYPE_CHECKING:  # the model (onnxruntime) is loaded by voice sessions only: bot.audio
    from bot.voice.turn_model import TurnModel

logger = logging.getLogger(__name__)

AUDIO_KEPT_SECS: Final = 8
"""The turn's last seconds of audio kept for the model (``bot.voice.turn_model`` hears 8 s)."""

AUDIO_STALL_SECS: Final = 2.0
"""How long past the silence's end, by the wall clock, a turn waits for audio that has not come
before it ends without it (the stream stopped, rather than lagged: ``MAX_AUDIO_LAG_SECS``)."""

LATE_WORDS_SECS: Final = 3.0
"""The longest a turn waits, past the silence's end by the wall clock, for the words of its last
stretch of speech when the recogniser has not given them yet (:func:`late_words_wait`; a
loaded recogniser answered 1.7 s after the speech ended in CI); then it ends with the words it
has, and the late words are the next turn's (``bot.pipeline.UnheardSpeech`` reports speech that
got none)."""

LATE_WORDS_BASE_SECS: Final = 0.5
LATE_WORDS_PER_SPEECH_SEC: Final = 1.5
"""The wait for a stretch's words grows with the stretch (a recogniser takes longer over more
audio): ``LATE_WORDS_BASE_SECS + LATE_WORDS_PER_SPEECH_SEC`` x its length, at most
:data:`LATE_WORDS_SECS`. A short sound after a finished answer ("hm", 0.5 s, which the
recogniser gives no words for) kept the candidate waiting the whole 3 s for its words: 4.5 s
after it (CI, ``test_a_short_sound_after_the_answer_is_not_waited_for``); now 1.25 s past the
silence's end, 2.75 s after the sound, which a recogniser that answers does well within."""


def late_words_wait(speech_secs: float) -> float:
    """How long past the silence's end a turn waits for the words of its last stretch of speech,
    ``speech_secs`` long (:data:`LATE_WORDS_PER_SPEECH_SEC`)."""
    return min(LATE_WORDS_SECS, LATE_WORDS_BASE_SECS + LATE_WORDS_PER_SPEECH_SEC * speech_secs)


WORDS_WAITED_FOR_SECS: Final = 0.5
"""Speech shorter than this (a cough, a click: ``bot.pipeline.MIN_UNHEARD_SPEECH_SECS``) is not
waited for: the recogniser usually gives no words for it."""

WATCHDOG_MARGIN_SECS: Final = 3.0
"""How far past the thinking pause the aggregator's watchdog is set (it ends a turn no
strategy ended, counting from the last VAD or transcript activity)."""


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """A decision to end a turn: its words, the policy's silence for them, the model's
    probability when the words were unsure, and the reply pause when it ended early (then
    ``settle_at``: when, by the audio's clock, it stays over)."""

    text: str
    wait: float
    probability: float | None
    reply: float | None = None
    settle_at: float | None = None


class ExamTurnStopStrategy(BaseUserTurnStopStrategy):  # type: ignore[no-untyped-call]
    """Ends the candidate's turn by the exam's end-of-turn policy (module docstring)."""

    def __init__(
        self,
        *,
        timing: TurnTiming | None = None,
        language: str = "en",
        model: TurnModel | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.timing = timing or TurnTiming()
        self.host_timing = self.timing
        """The host's defaults, which a package's settings override (:func:`tune_turn_taking`)."""
        self.language = language
        self._model = model
        self._clock = clock
        self._audio: deque[bytes] = deque()
        self._audio_bytes = 0
        self._sample_rate = 16000
        self._speaking = False
        self._texts: list[str] = []
        self._reliable = True
        self._speech_end: float | None = None
        self._speech_start: float | None = None
        self._words_due = False
        """The latest stretch of speech ended and no transcript has come since: the words
        before it are an earlier stretch's, and the turn does not end on them alone."""
        self._stretch_secs = 0.0
        """How long the latest stretch of speech lasted (the VAD's start to its stop)."""
        self._probability: float | None = None
        self._timer: asyncio.Task[None] | None = None
        self._heard = AudioClock()
        """The capture time of the audio heard so far."""
        self._covered: float | None = None
        """The capture time up to which the audio and the VAD's decisions on it have all
        arrived (the end of the chunk before the latest): the silence is counted on it."""
        self._pending: tuple[float, TurnEnd] | None = None
        """When the silence that ends the turn is over (audio time), and the decision."""
        self.decisions: list[TurnEnd] = []
        """Each decision to end a turn: for tests and benches."""
        self.settlement = TurnSettlement()
        """Whether the latest turn, ended on the reply pause, may still go on (runtime
        semantics §18); read by the observation handler."""
        self._settle_at: float | None = None
        """When (audio time) the latest turn, ended on the reply pause, has stayed over."""

    async def handle_user_turn_started(self) -> None:
        await self._new_turn()

    async def handle_user_turn_stopped(self) -> None:
        await self._new_turn()

    async def cleanup(self) -> None:
        await super().cleanup()  # type: ignore[no-untyped-call]
        await self._cancel_timer()

    async def _new_turn(self) -> None:
        self._texts = []
        self._words_due = False
        self._probability = None
        self._speech_end = None
        await self._cancel_timer()

    async def _hear(self, frame: InputAudioRawFrame) -> None:
        """A chunk of audio: the chunks before it are all heard, with the VAD's decisions on
        them; a turn whose silence they cover ends now."""
        if self._heard.position > 0:
            self._covered = self._heard.now()
        pending = self._pending
        if pending is not None and self._covered is not None and self._covered >= pending[0]:
            await self._cancel_timer()
            if not self._speaking:
                await self._end(pending[1])
        settle_at = self._settle_at
        if settle_at is not None and not self._speaking and (self._covered or 0.0) >= settle_at:
            self._settle_at = None
            self.settlement.settled()
        self._heard.advance(frame, self._clock())
        self._keep_audio(frame)

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        await super().process_frame(frame)
        if isinstance(frame, InputAudioRawFrame):
            await self._hear(frame)
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            self._speaking = True
            self._settle_at = None  # the candidate went on: it stays unsettled
            self._speech_start = speech_instant(frame) or self._clock()
            self._probability = None
            await self._cancel_timer()
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            self._speaking = False
            self._speech_end = speech_instant(frame) or self._clock()
            # A cough or a click after the answer gives no words: not waited for.
            started = self._speech_start if self._speech_start is not None else self._speech_end
            self._stretch_secs = self._speech_end - started
            self._words_due = self._stretch_secs >= WORDS_WAITED_FOR_SECS
            if self._model is not None:
                self._probability = await self._model.judge(
                    b"".join(self._audio), self._sample_rate
                )
            await self._arm()
        elif isinstance(frame, TypedTranscriptionFrame) and frame.text.strip():
            # A typed answer (the recogniser replaced by typing: bot.examiner_faults) is a
            # whole turn, as in text mode: it ends now, with the words spoken before it.
            self._texts.append(frame.text.strip())
            self._speech_end = None
            await self._cancel_timer()
            await self._end(TurnEnd(self.text, 0.0, None))
        elif isinstance(frame, TranscriptionFrame) and frame.text.strip():
            self._texts.append(frame.text.strip())
            self._words_due = False
            if self._speech_end is None and not self._speaking:
                # Words of speech that ended before this turn began (a late transcript
                # started it): the silence runs from now, never the watchdog's 9 s.
                self._speech_end = self._clock()
            self._reliable = transcript_confidence(frame) >= RELIABLE_CONFIDENCE
            await self._arm()
        return ProcessFrameResult.CONTINUE

    def _keep_audio(self, frame: InputAudioRawFrame) -> None:
        """The last :data:`AUDIO_KEPT_SECS` of audio, for the model."""
        self._sample_rate = frame.sample_rate or self._sample_rate
        self._audio.append(frame.audio)
        self._audio_bytes += len(frame.audio)
        limit = AUDIO_KEPT_SECS * self._sample_rate * 2
        while self._audio and self._audio_bytes - len(self._audio[0]) >= limit:
            self._audio_bytes -= len(self._audio.popleft())

    @property
    def text(self) -> str:
        """The turn's words so far."""
        return " ".join(self._texts)

    async def _arm(self) -> None:
        """(Re)schedule the end of the turn: silence, the speech's end and a transcript are
        needed; the wait is the policy's. The turn ends when the audio heard covers the wait
        (:meth:`_hear`), or :data:`AUDIO_STALL_SECS` after it if no audio comes."""
        if self._speaking or self._speech_end is None or not self._texts:
            return
        await self._cancel_timer()
        wait = turn_wait(
            self.timing,
            self.text,
            self.language,
            self._probability,
            words_reliable=self._reliable,
        )
        reply = reply_wait(self.timing, wait, self._probability)
        silence_end = self._speech_end + (wait if reply is None else reply)
        decision = TurnEnd(
            self.text,
            wait,
            self._probability if not self._reliable else None,
            reply=reply,
            settle_at=None if reply is None else self._speech_end + wait,
        )
        if self._words_due:
            # The last stretch's words are still with the recogniser: wait for them (the
            # transcript re-arms), at most late_words_wait past the silence's end.
            late = late_words_wait(self._stretch_secs)
            self._timer = self.task_manager.create_task(
                self._end_after(silence_end + late - self._clock(), decision),
                f"{self}::late_words",
            )
            return
        if self._covered is not None and self._covered >= silence_end:
            await self._end(decision)
            return
        self._pending = (silence_end, decision)
        self._timer = self.task_manager.create_task(
            self._end_after(silence_end + AUDIO_STALL_SECS - self._clock(), decision),
            f"{self}::end_after",
        )

    async def _end_after(self, delay: float, decision: TurnEnd) -> None:
        """The fallback when no audio comes: the turn ends ``delay`` s from now."""
        try:
            await asyncio.sleep(max(0.0, delay))
        except asyncio.CancelledError:
            return
        self._timer = None
        self._pending = None
        if not self._speaking:
            await self._end(decision)

    async def _end(self, decision: TurnEnd) -> None:
        self.decisions.append(decision)
        self._speech_end = None
        self._pending = None
        self._settle_at = decision.settle_at
        if decision.settle_at is None:
            self.settlement.ended()
        else:
            self.settlement.ended_early()
        await self.trigger_user_turn_stopped()

    async def _cancel_timer(self) -> None:
        self._pending = None
        timer, self._timer = self._timer, None
        if timer is not None and not timer.done() and timer is not asyncio.current_task():
            await self.task_manager.cancel_task(timer)


def exam_user_params(
    *, timing: TurnTiming | None = None, language: str = "en", model: TurnModel | None = None
) -> LLMUserAggregatorParams:
    """The user aggregator's parameters for voice: :class:`ExamTurnStopStrategy` alone, the
    watchdog past the thinking pause."""
    strategy = ExamTurnStopStrategy(timing=timing, language=language, model=model)
    return LLMUserAggregatorParams(
        user_turn_strategies=UserTurnStrategies(stop=[strategy]),
        user_turn_stop_timeout=strategy.timing.thinking_secs + WATCHDOG_MARGIN_SECS,
    )


def turn_strategy(params: LLMUserAggregatorParams | None) -> ExamTurnStopStrategy | None:
    """The :class:`ExamTurnStopStrategy` among ``params``' stop strategies, if any."""
    strategies = params.user_turn_strategies if params is not None else None
    for strategy in (strategies.stop or []) if strategies is not None else []:
        if isinstance(strategy, ExamTurnStopStrategy):
            return strategy
    return None


def tune_turn_taking(
    params: LLMUserAggregatorParams | None,
    package: AssessmentPackage,
    multiplier: Decimal | float = 1,
) -> TurnTiming | None:
    """Set the package's turn timing (``metadata.extensions.voice``), scaled by the candidate's
    extra time, on the voice strategy in ``params`` and the watchdog past it; None in text
    mode. A package setting that is not valid is logged and the defaults kept (the publication
    gate refuses such a package: PKG-014)."""
    strategy = turn_strategy(params)
    if strategy is None or params is None:
        return None
    try:
        timing = turn_timing(package.metadata.extensions, float(multiplier), strategy.host_timing)
    except ValueError as error:
        logger.warning("turn timing: %s; the defaults apply", error)
        timing = strategy.host_timing.scaled(float(multiplier))
    strategy.timing = timing
    strategy.language = package.metadata.language or strategy.language
    params.user_turn_stop_timeout = timing.thinking_secs + WATCHDOG_MARGIN_SECS
    return timing
