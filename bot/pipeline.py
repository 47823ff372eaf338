"""The examiner's Pipecat pipeline and ``FlowManager`` (the builder, and the processors that
connect Pipecat to the runtime controller).

::

    [transport.input()] → [STT] → TranscriptHook → user aggregator → LLMRunGate → LLM
        → LLMSpeechFilter → TTS (or TextSpeech) → [transport.output()] → SpeechReporter
        → UsageMeter → assistant aggregator

* :class:`TranscriptHook` (ADP-013): every final transcript goes to the controller with its STT
  confidence (in voice mode with when its speech started and ended, by the VAD). In text mode
  each typed answer is a whole turn: the hook hands it to the core, which records it and then
  appends it to the LLM context and runs the LLM (when the exam is in progress). In voice mode
  the user aggregator's turn strategies decide when the LLM runs.
* :class:`LLMRunGate`: the LLM only runs while the exam is in progress (never in the silent
  boot node, while paused, or after the end).
* :class:`LLMSpeechFilter`: nothing the LLM writes as free text is ever spoken. The examiner
  speaks only the controller's ``Speak`` effects (validated text), queued as
  :class:`ExaminerSpeakFrame`. A response with text but no ``report_observation`` call is
  reported to the core as an unusable reply: its text is never spoken (issue #30).
  Every response's end is reported with the tools it called (the turn watch,
  ``bot.turn_deadline``, judges unusable replies and unknown tools).
* :class:`SpeechReporter`: reports each examiner utterance's start (its first audio past the
  output, ``atMs``; in text its ``TTSStartedFrame``) and end (``TTSStoppedFrame``) as
  ``UtteranceStarted`` / ``UtteranceFinished``, so the controller records
  ``examiner_utterance_started`` / ``_final``;
  a barge-in (``InterruptionFrame``) while an interruptible utterance is being spoken is
  reported first as ``CandidateInterrupted``, then the utterance ends with when its audio
  stopped and the text heard until then (``bot.spoken_text``).
* :class:`UsageMeter`: Pipecat's usage metrics (LLM tokens, STT seconds, TTS characters).

The seam for voice (:class:`BotIO`): a transport (or an input/output processor pair) and
optional STT and TTS services. Text mode is ``BotIO`` with :class:`~bot.text_transport.TextSpeech`
as the TTS and no transport (``bot.text_transport``).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pipecat.flows import FlowManager
from pipecat.frames.frames import (
    DataFrame,
    ErrorFrame,
    Frame,
    FunctionCallInProgressFrame,
    FunctionCallsStartedFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    MetricsFrame,
    OutputAudioRawFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    TTSTextFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import (
    LLMUsageMetricsData,
    STTUsageMetricsData,
    TTSUsageMetricsData,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMAssistantAggregatorParams,
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.llm_service import LLMService
from pipecat.transports.base_transport import BaseTransport
from pipecat.turns.user_turn_strategies import ExternalUserTurnStrategies
from pipecat.utils.context.llm_context_summarization import (
    LLMAutoContextSummarizationConfig,
    LLMContextSummaryConfig,
)

from bot.activity import VoiceActivityHook, speech_instant
from bot.speech_fallback import SpeechFallback
from bot.spoken_text import HeardSpeech, Interruption, SpokenWordsFrame
from bot.text_transport import TextSpeech
from bot.usage import Component, Counter

logger = logging.getLogger(__name__)

DEFAULT_STT_CONFIDENCE = 1.0
"""Confidence of a transcript whose STT service reports none (text, or a service without it)."""
MIN_UNHEARD_SPEECH_SECS = 0.5
"""Speech shorter than this (a cough, a click) that the recogniser gives no words for is let go."""
UNHEARD_WAIT_SECS = 3.0
"""How long after speech ends its transcript is waited for before the speech counts as unheard,
plus half the speech's length (a segmented recogniser decodes at up to ~0.3x real time), at most
:data:`UNHEARD_WAIT_MAX_SECS`."""
UNHEARD_WAIT_MAX_SECS = 12.0


@dataclass
class ExaminerSpeakFrame(TTSSpeakFrame):
    """A controller ``Speak`` effect on its way to TTS (the only text ever spoken)."""

    utterance_id: str = ""


@dataclass
class UnparsedToolCallFrame(DataFrame):
    """The LLM called ``function_name`` with arguments that are not JSON: Pipecat drops such a
    call without a trace, so the LLM service reports it (``bot.providers``) before its
    response ends. ``error`` says where parsing failed; the arguments themselves are not kept."""

    function_name: str = ""
    error: str = ""
    chars: int = 0


class PipelineCore(Protocol):
    """What the processors need from the examiner core (``bot.examiner.ExaminerCore``)."""

    def llm_allowed(self) -> bool: ...

    def llm_started(self) -> bool: ...

    def llm_rerun_started(self) -> bool: ...

    def llm_response_ended(self, text: str, calls: Sequence[str]) -> None: ...

    def llm_interrupted(self) -> None: ...

    def tool_call_unparsed(self, name: str, error: str, chars: int) -> None: ...

    async def candidate_turn(
        self,
        text: str,
        confidence: float,
        *,
        input_id: str | None = None,
        sent_at: float | None = None,
    ) -> None: ...

    def candidate_activity(
        self, activity: Literal["composing", "speaking"], active: bool, when: float | None
    ) -> None: ...

    def candidate_transcript(
        self,
        text: str,
        confidence: float,
        *,
        input_id: str | None = None,
        spoken: tuple[float, float] | None = None,
        sent_at: float | None = None,
    ) -> None: ...

    def candidate_partial(self, text: str, stability: float) -> None: ...

    def candidate_unheard(self, duration_ms: int) -> None: ...

    def utterance_started(self, utterance_id: str, when: float | None = None) -> None: ...

    def utterance_unplayed(self, utterance_id: str) -> None: ...

    def utterances_dropped(self, utterance_ids: tuple[str, ...]) -> None: ...

    def utterance_finished(
        self, utterance_id: str, duration_ms: int, *, interruption: Interruption | None = None
    ) -> None: ...

    def candidate_interrupted(self, utterance_id: str) -> None: ...

    def text_without_tool(self, text: str) -> None: ...

    def usage(self, component: Component, counter: Counter, model: str | None) -> None: ...


def transcript_confidence(frame: TranscriptionFrame) -> float:
    """The STT confidence of a final transcript: the frame's ``confidence`` if it has one,
    else a ``confidence`` in the STT service's raw ``result`` (a mapping, an object, or the
    first alternative of a Deepgram-style result), else :data:`DEFAULT_STT_CONFIDENCE`."""
    candidates: list[object] = [getattr(frame, "confidence", None)]
    result = frame.result
    if isinstance(result, Mapping):
        candidates.append(result.get("confidence"))
    elif result is not None:
        candidates.append(getattr(result, "confidence", None))
        channel = getattr(result, "channel", None)
        alternatives = getattr(channel, "alternatives", None)
        if alternatives:
            candidates.append(getattr(alternatives[0], "confidence", None))
    for value in candidates:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return min(1.0, max(0.0, float(value)))
    return DEFAULT_STT_CONFIDENCE


def partial_stability(frame: InterimTranscriptionFrame) -> float:
    """How settled an interim transcript is (0-1): the service's own ``stability`` or
    ``confidence`` when its result carries one (Google, Deepgram), else 0.5."""
    result = frame.result
    for name in ("stability", "confidence"):
        value = result.get(name) if isinstance(result, Mapping) else getattr(result, name, None)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return min(1.0, max(0.0, float(value)))
    channel = getattr(result, "channel", None)
    alternatives = getattr(channel, "alternatives", None)
    if alternatives:
        value = getattr(alternatives[0], "confidence", None)
        if isinstance(value, int | float):
            return min(1.0, max(0.0, float(value)))
    return 0.5


class SpeechSpans:
    """When the candidate's transcribed speech started and ended, by the VAD (voice mode).

    An STT whose transcript carries the VAD span of its own segment (the offline recogniser's
    ``speech_start``/``speech_end``) gives it; for any other, a transcript covers the VAD
    segments completed since the previous transcript (from the first one's start to the last
    one's end). Without a completed segment the span is unknown (``None``) and the controller
    estimates it from the words."""

    def __init__(self) -> None:
        self._done: list[tuple[float, float]] = []
        self._open: float | None = None

    def vad(self, frame: VADUserStartedSpeakingFrame | VADUserStoppedSpeakingFrame) -> None:
        instant = speech_instant(frame)
        if instant is None:
            return
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._open = instant
        elif self._open is not None:
            self._done.append((self._open, max(self._open, instant)))
            self._open = None

    def transcript(self, frame: TranscriptionFrame) -> tuple[float, float] | None:
        """The span of ``frame``'s speech (class docstring); consumes the segments it covers."""
        start = getattr(frame.result, "speech_start", None)
        end = getattr(frame.result, "speech_end", None)
        if isinstance(start, float) and isinstance(end, float):
            self._done = [span for span in self._done if span[0] > end]
            return start, max(start, end)
        if not self._done:
            return None
        span = (self._done[0][0], self._done[-1][1])
        self._done = []
        return span


class UnheardSpeech:
    """Speech the recogniser gives no words for (issue #30): the VAD heard the candidate, and
    no final transcript came for it within :data:`UNHEARD_WAIT_SECS` (plus half its length)
    after it ended. ``report(duration_ms)`` is called once for it; a transcript, or more speech,
    restarts the wait."""

    def __init__(self, report: Callable[[int], None]) -> None:
        self._report = report
        self._speech_secs = 0.0
        self._started: float | None = None
        self._timer: asyncio.TimerHandle | None = None

    def vad(self, frame: VADUserStartedSpeakingFrame | VADUserStoppedSpeakingFrame) -> None:
        """Speech started or stopped (timed by the audio, ``bot.activity.speech_instant``)."""
        instant = speech_instant(frame) or time.time()
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._cancel()
            self._started = instant
            return
        if self._started is None:
            return
        self._speech_secs += max(0.0, instant - self._started)
        self._started = None
        wait = min(UNHEARD_WAIT_MAX_SECS, UNHEARD_WAIT_SECS + 0.5 * self._speech_secs)
        self._timer = asyncio.get_running_loop().call_later(wait, self._expired)

    def heard(self) -> None:
        """A final transcript with words: the speech so far was heard."""
        self._cancel()
        self._speech_secs = 0.0

    def close(self) -> None:
        self._cancel()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        speech, self._speech_secs = self._speech_secs, 0.0
        if self._started is None and speech >= MIN_UNHEARD_SPEECH_SECS:
            self._report(round(speech * 1000))


class TranscriptHook(FrameProcessor):
    """Feeds final candidate transcripts to the controller (module docstring), in voice mode
    with when their speech started and ended (:class:`SpeechSpans`), and speech that got no
    words at all (:class:`UnheardSpeech`)."""

    def __init__(self, core: PipelineCore, *, text_turns: bool) -> None:
        super().__init__()
        self._core = core
        self._text_turns = text_turns
        self._last_partial = ""
        self._spans = SpeechSpans()
        self._unheard = UnheardSpeech(core.candidate_unheard)
        self._answers_from: float | None = None

    def answers_from(self, instant: float) -> None:
        """The exam started at ``instant`` (wall-clock seconds): a transcript whose speech was
        over before it is dropped, never reported nor handed to the LLM (issue #30: audio from
        before Start is never an answer; speech running across the start counts)."""
        self._answers_from = instant

    async def cleanup(self) -> None:
        await super().cleanup()  # type: ignore[no-untyped-call]
        self._unheard.close()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, VADUserStartedSpeakingFrame | VADUserStoppedSpeakingFrame):
            self._spans.vad(frame)
            self._unheard.vad(frame)
        if isinstance(frame, TranscriptionFrame) and frame.text.strip():
            self._unheard.heard()
        if direction is FrameDirection.DOWNSTREAM and isinstance(frame, TranscriptionFrame):
            confidence = transcript_confidence(frame)
            input_id = getattr(frame, "input_id", None)  # a typed answer from the inbox
            sent_at = getattr(frame, "sent_at", None)
            if self._text_turns:
                await self._core.candidate_turn(
                    frame.text, confidence, input_id=input_id, sent_at=sent_at
                )
                return
            spoken = self._spans.transcript(frame)
            if input_id is None and self._before_start(spoken):
                logger.info("transcript of speech from before the start dropped")
                return
            self._core.candidate_transcript(
                frame.text, confidence, input_id=input_id, spoken=spoken, sent_at=sent_at
            )
        elif direction is FrameDirection.DOWNSTREAM and isinstance(
            frame, InterimTranscriptionFrame
        ):
            # A streaming STT's partial: the live caption (``transcript_delta``); only a
            # change of words is worth sending.
            text = frame.text.strip()
            if text and text != self._last_partial:
                self._last_partial = text
                self._core.candidate_partial(text, partial_stability(frame))
        if isinstance(frame, TranscriptionFrame):
            self._last_partial = ""
        await self.push_frame(frame, direction)

    def _before_start(self, spoken: tuple[float, float] | None) -> bool:
        start = self._answers_from
        return start is not None and spoken is not None and spoken[1] < start


class LLMRunGate(FrameProcessor):
    """Lets an inference request through only while the exam is in progress, and only when
    there is something new to answer: a request whose context ends on the examiner's own
    words (a voice turn that ended with no words, by the aggregator's watchdog) is dropped."""

    def __init__(self, core: PipelineCore) -> None:
        super().__init__()
        self._core = core
        self.dropped = 0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if (
            direction is FrameDirection.DOWNSTREAM
            and isinstance(frame, LLMContextFrame)
            and (
                _nothing_new(frame) or not self._core.llm_allowed() or not self._core.llm_started()
            )
        ):
            self.dropped += 1
            return
        await self.push_frame(frame, direction)


def _nothing_new(frame: LLMContextFrame) -> bool:
    """The context's last message is the examiner's (``assistant``): no candidate words and no
    runtime instruction since it spoke."""
    messages = frame.context.messages
    last = messages[-1] if messages else None
    return isinstance(last, Mapping) and last.get("role") == "assistant"


class LLMSpeechFilter(FrameProcessor):
    """Drops the LLM's free text (never spoken); reports text-only responses, tool calls whose
    arguments were not JSON (:class:`UnparsedToolCallFrame`, not passed on), every response's
    end and every interruption (a response on its way is cut by it) to the core; gates the LLM
    re-runs that travel upstream."""

    def __init__(self, core: PipelineCore) -> None:
        super().__init__()
        self._core = core
        self._text: list[str] = []
        self._calls: list[str] = []
        self.dropped = 0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if (
            direction is FrameDirection.UPSTREAM
            and isinstance(frame, LLMContextFrame)
            and (not self._core.llm_allowed() or not self._core.llm_rerun_started())
        ):
            # The assistant aggregator re-runs the LLM upstream (after a tool result), past
            # the LLMRunGate: the same gate and the same per-turn budget apply here.
            self.dropped += 1
            return
        if direction is FrameDirection.DOWNSTREAM:
            if isinstance(frame, InterruptionFrame):
                self._core.llm_interrupted()
            elif isinstance(frame, LLMFullResponseStartFrame):
                self._text, self._calls = [], []
            elif isinstance(frame, FunctionCallsStartedFrame):
                self._calls += [call.function_name for call in frame.function_calls]
            elif isinstance(frame, FunctionCallInProgressFrame):
                if frame.function_name not in self._calls:
                    self._calls.append(frame.function_name)
            elif isinstance(frame, LLMTextFrame):
                self._text.append(frame.text)
                return
            elif isinstance(frame, UnparsedToolCallFrame):
                self._core.tool_call_unparsed(frame.function_name, frame.error, frame.chars)
                return
            elif isinstance(frame, LLMFullResponseEndFrame):
                text = "".join(self._text).strip()
                if text and not self._calls:
                    self._core.text_without_tool(text)
                self._core.llm_response_ended(text, tuple(self._calls))
                self._text, self._calls = [], []
        await self.push_frame(frame, direction)


@dataclass
class _Speaking:
    """The utterance being spoken: ``started`` (monotonic seconds) once it is heard."""

    utterance_id: str
    interruptible: bool
    started: float | None = None


class SpeechReporter(FrameProcessor):
    """Turns the TTS contexts of examiner utterances into speech reports, in order; a barge-in
    reports how much of the utterance was heard (``bot.spoken_text``).

    With ``audio`` (a voice pipeline) an utterance starts when its first audio has passed the
    output transport, when the candidate can first hear it, not when its synthesis began (a
    TTS may take a second before its first audio on a loaded machine); its length runs from
    there. Without audio (text) it starts with its TTS context. With audio, one whose voice
    gave no audio is reported unplayed (a fault of the voice) and ends as cut with nothing
    heard (the controller records its start with the end); one cut before its first audio ends
    at length 0."""

    def __init__(self, core: PipelineCore, *, audio: bool = True) -> None:
        super().__init__()
        self._core = core
        self._audio = audio
        self._pending: deque[tuple[str, bool]] = deque()
        self._current: _Speaking | None = None
        self._heard = HeardSpeech()
        self._interruption_waiters: list[asyncio.Future[None]] = []

    def expect(self, utterance_id: str, *, interruptible: bool = True) -> None:
        """An :class:`ExaminerSpeakFrame` with this id was queued."""
        self._pending.append((utterance_id, interruptible))

    @property
    def idle(self) -> bool:
        """Nothing queued or being spoken."""
        return not self._pending and self._current is None

    def next_interruption(self) -> asyncio.Future[None]:
        """Resolved when the next interruption reaches this processor: every processor before
        it (the LLM among them) has dropped what it was doing and what it had queued."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._interruption_waiters.append(waiter)
        return waiter

    def _start(self, current: _Speaking) -> None:
        """``current`` is heard from now on (its first audio played, or its text went out)."""
        current.started = time.monotonic()
        self._core.utterance_started(current.utterance_id, time.time())

    def _finish(self, interruption: Interruption | None = None, *, ended: bool = False) -> None:
        """The current utterance is over: cut (``interruption``), at its TTS context's end
        (``ended``) or because another began."""
        current = self._current
        if current is None:
            return
        self._current = None
        if current.started is None:  # nothing of it played
            elapsed_ms = 0
            if self._audio and ended:
                # The voice gave no audio (its request failed): a fault of the voice, and the
                # utterance is recorded as cut with nothing heard, never as spoken.
                self._core.utterance_unplayed(current.utterance_id)
                interruption = Interruption(time.time(), 0.0, "")
            elif not self._audio:
                self._start(current)
        elif self._audio:  # the audio played (an output may pass it faster than real time)
            elapsed_ms = round(self._heard.played_secs * 1000)
        else:
            elapsed_ms = int((time.monotonic() - current.started) * 1000)
        if interruption is not None:
            elapsed_ms = round(interruption.played_secs * 1000)
        self._core.utterance_finished(current.utterance_id, elapsed_ms, interruption=interruption)

    def _interrupted(self) -> None:
        """The candidate barged in: the controller hears of it (an interruption recovery,
        when the node has a handler), what was being said ends now with what was heard of it;
        queued interruptible utterances are dropped by the interruption and reported dropped
        (never recorded: nothing of them was heard, and the runtime knows a question dropped so
        was not asked). An uninterruptible utterance (a closing) ends as before, not as cut."""
        current = self._current
        if current is not None and current.interruptible:
            self._core.candidate_interrupted(current.utterance_id)
            heard = self._heard
            self._finish(Interruption(time.time(), heard.played_secs, heard.spoken_text()))
        self._finish()
        dropped = tuple(uid for uid, interruptible in self._pending if interruptible)
        self._pending = deque(item for item in self._pending if not item[1])
        if dropped:
            self._core.utterances_dropped(dropped)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        downstream = direction is FrameDirection.DOWNSTREAM
        if isinstance(frame, TTSStartedFrame) and downstream:
            self._finish()
            if self._pending:
                utterance_id, interruptible = self._pending.popleft()
                self._current = _Speaking(utterance_id, interruptible)
                self._heard = HeardSpeech()
                if not self._audio:
                    self._start(self._current)
        elif isinstance(frame, TTSStoppedFrame) and downstream:
            self._finish(ended=True)
        elif isinstance(frame, InterruptionFrame):
            self._interrupted()
            waiters, self._interruption_waiters = self._interruption_waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)
        elif self._current is not None and downstream:
            if isinstance(frame, OutputAudioRawFrame):
                if self._current.started is None:
                    self._start(self._current)
                self._heard.audio(frame)
            elif isinstance(frame, SpokenWordsFrame):
                self._heard.words(frame)
            elif isinstance(frame, TTSTextFrame):
                self._heard.text_played(frame.text)
        await self.push_frame(frame, direction)


class UsageMeter(FrameProcessor):
    """Counts Pipecat's usage metrics for cost accounting."""

    def __init__(self, core: PipelineCore) -> None:
        super().__init__()
        self._core = core

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, MetricsFrame):
            for data in frame.data:
                if isinstance(data, LLMUsageMetricsData):
                    usage = data.value
                    self._core.usage(
                        "llm",
                        Counter(
                            input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens
                        ),
                        data.model,
                    )
                elif isinstance(data, STTUsageMetricsData):
                    audio_ms = round(data.value.audio_seconds * 1000)
                    self._core.usage("stt", Counter(audio_ms=audio_ms), data.model)
                elif isinstance(data, TTSUsageMetricsData):
                    self._core.usage("tts", Counter(characters=int(data.value)), data.model)
        await self.push_frame(frame, direction)


@dataclass
class BotIO:
    """How the bot meets the candidate: the seam for voice transports.

    Give a ``transport`` (its ``input()``/``output()`` are used) or an ``input``/``output``
    processor pair, and optional ``stt`` and ``tts`` services. Without ``tts`` the bot runs in
    text mode (:class:`~bot.text_transport.TextSpeech`). ``text_turns``: every final transcript
    is a complete candidate turn (text mode); otherwise ``user_params`` (turn strategies, VAD)
    decide. ``providers`` names the STT/TTS services for usage records
    (``{"stt": ("deepgram", "nova-3")}``).
    """

    transport: BaseTransport | None = None
    input: FrameProcessor | None = None
    output: FrameProcessor | None = None
    stt: FrameProcessor | None = None
    tts: FrameProcessor | None = None
    text_turns: bool = True
    user_params: LLMUserAggregatorParams | None = None
    enable_rtvi: bool = False
    providers: dict[str, tuple[str, str]] = field(default_factory=dict)
    adjust_speech: Callable[[str, str], Sequence[Frame]] | None = None
    """Frames that change TTS delivery (``rate``: ``slower``; ``volume``: ``up``/``down``)."""
    fallbacks: Mapping[str, SpeechFallback] = field(default_factory=dict)
    """The offline services in reserve for hosted ``stt``/``tts`` (``bot.speech_fallback``);
    ``stt``/``tts`` are then their switchers."""


def text_io() -> BotIO:
    """Text mode: no audio, typed answers, examiner text out as events. Turns are whole typed
    answers, so the user aggregator needs no turn detection (no VAD, no turn model)."""
    return BotIO(
        tts=TextSpeech(),
        text_turns=True,
        user_params=LLMUserAggregatorParams(user_turn_strategies=ExternalUserTurnStrategies()),
    )


@dataclass(frozen=True, slots=True)
class Summarisation:
    """Auto context summarisation within a node (chapter 07 §6).

    ``enabled=False`` turns it off: a session with grounded nodes never summarises, since
    Pipecat's summary request flattens the node's messages, the quoted passage's block
    included, into one plain transcript and puts the model's summary back as a ``user``
    message (docs/spec/candidate-materials.md §6.1)."""

    enabled: bool = True
    max_context_tokens: int = 4000
    max_unsummarized_messages: int = 10
    target_context_tokens: int = 2000
    min_messages_after_summary: int = 2


@dataclass
class ExaminerPipeline:
    """A built pipeline: the worker, the flow manager and the processors the core talks to."""

    worker: PipelineWorker
    flow_manager: FlowManager
    aggregators: LLMContextAggregatorPair
    llm: LLMService
    reporter: SpeechReporter
    gate: LLMRunGate
    hook: TranscriptHook
    started: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)


def build_pipeline(
    *,
    core: PipelineCore,
    llm: LLMService,
    io: BotIO,
    summarisation: Summarisation | None = None,
) -> ExaminerPipeline:
    """Build the examiner pipeline (module docstring) and its ``FlowManager``.

    The flow is not initialised here: the core puts it in the silent boot node (or the node a
    resumed session is at) once the pipeline has started.
    """
    summary = summarisation or Summarisation()
    aggregators = LLMContextAggregatorPair(
        LLMContext(),
        user_params=io.user_params or LLMUserAggregatorParams(),
        assistant_params=LLMAssistantAggregatorParams(
            enable_auto_context_summarization=summary.enabled,
            auto_context_summarization_config=LLMAutoContextSummarizationConfig(
                max_context_tokens=summary.max_context_tokens,
                max_unsummarized_messages=summary.max_unsummarized_messages,
                summary_config=LLMContextSummaryConfig(
                    target_context_tokens=summary.target_context_tokens,
                    min_messages_after_summary=summary.min_messages_after_summary,
                ),
            ),
        ),
    )
    source = io.input or (io.transport.input() if io.transport is not None else None)
    sink = io.output or (io.transport.output() if io.transport is not None else None)
    gate = LLMRunGate(core)
    reporter = SpeechReporter(core, audio=io.tts is not None and not isinstance(io.tts, TextSpeech))
    hook = TranscriptHook(core, text_turns=io.text_turns)
    processors: list[FrameProcessor] = []
    if source is not None:
        processors.append(source)
    if io.stt is not None:
        processors.append(io.stt)
    if not io.text_turns:
        # Silero VAD's start/stop: the controller's silence clock follows the candidate.
        processors.append(VoiceActivityHook(core.candidate_activity))
    processors += [
        hook,
        aggregators.user(),
        gate,
        llm,
        LLMSpeechFilter(core),
        io.tts or TextSpeech(),
    ]
    if sink is not None:
        processors.append(sink)
    processors += [reporter, UsageMeter(core), aggregators.assistant()]
    worker = PipelineWorker(
        Pipeline(processors),
        params=PipelineParams(enable_metrics=True, enable_usage_metrics=True),
        idle_timeout_secs=None,
        enable_rtvi=io.enable_rtvi,
        check_dangling_tasks=False,
    )
    flow_manager = FlowManager(
        worker=worker, llm=llm, context_aggregator=aggregators, transport=io.transport
    )
    built = ExaminerPipeline(worker, flow_manager, aggregators, llm, reporter, gate, hook)

    @worker.event_handler("on_pipeline_started")
    async def _started(worker: PipelineWorker, frame: Frame) -> None:
        built.started.set()

    @worker.event_handler("on_pipeline_finished")
    async def _finished(worker: PipelineWorker, frame: Frame) -> None:
        built.finished.set()

    return built


def error_component(frame: ErrorFrame, pipeline: ExaminerPipeline, io: BotIO) -> str | None:
    """Which provider an error frame came from (``llm``/``stt``/``tts``), if any."""
    processor = frame.processor
    if processor is None:
        return None
    if processor is pipeline.llm:
        return "llm"
    if io.stt is not None and processor is io.stt:
        return "stt"
    if io.tts is not None and processor is io.tts and not isinstance(io.tts, TextSpeech):
        return "tts"
    for kind, fallback in io.fallbacks.items():
        if fallback.owns(processor):
            return kind
    return None


_logging_configured = False


def configure_pipecat_logging(level: str) -> None:
    """Pipecat logs through loguru at DEBUG by default; keep it at ``level`` (once)."""
    global _logging_configured
    if _logging_configured:
        return
    from loguru import logger as loguru_logger

    loguru_logger.remove()
    loguru_logger.add(sys.stderr, level=level)
    _logging_configured = True
