"""What goes wrong during an exam turn, as controller inputs (chapter 07 §11).

:class:`FaultWatch` owns the turn watch (:class:`~bot.turn_deadline.TurnWatch`) and listens for
the pipeline's errors:

* **A failed turn** (the LLM missed the deadline, used up its requests, gave no usable reply)
  becomes a ``TurnFault``: what the LLM is still doing for it is interrupted and the controller
  records the fault and answers with the current question.
* **A provider error** (LLM/STT/TTS) becomes a ``Fault``: the controller pauses the exam
  (``ioa.runtime.outage``: the candidate's clocks stop, nothing for them to do). A transient
  fault is cleared as soon as the provider is seen working (a transcript, a reply with a tool
  call: :meth:`FaultWatch.provider_worked`), else after a back-off (:class:`OutageBackoff`:
  ``VIVA_BOT_FAULT_RETRY_SECONDS``, doubling while the provider keeps failing, at most
  :data:`MAX_RETRY_SECONDS`), and errors of
  a provider whose fault is still open are counted, not reported again: one pause per outage,
  no pause/resume flapping. A hosted recogniser or voice down for
  ``VIVA_SPEECH_FALLBACK_SECONDS`` is replaced by the offline one for the rest of the session
  (``bot.speech_fallback``): the exam carries on. A recogniser with no offline one in reserve
  (a German or Spanish exam: PocketSphinx hears English only) is replaced by typing: the
  candidate is told, in the exam's language, to type their answers, the exam carries on, and
  the recogniser's further errors pause nothing (``system_error`` ``stt_typing``: the exam room
  shows its answer box). Only the outage limit ends an exam
  (``VIVA_OUTAGE_LIMIT_SECONDS``).
  A transient LLM error during an owed turn only fails that turn (the fallback answers it)
  unless it keeps happening (``provider_failures_to_pause``).
* **A failing ``report_observation`` handler** is logged (by the hydrator) and stored as a
  ``system_error``; the LLM gets a neutral fallback (bounded retries, ``bot.rerun_budget``).
* **A faulty model reply** (:data:`MODEL_FAULTS`: a tool call whose arguments are not JSON, a
  call to a function the node does not offer, a reply with neither text nor a tool call, text
  without the tool, a second or late report) is stored as it happens
  (:func:`record_model_fault`: ``system_error``, component ``bot``, severity ``warning``, no
  text for the candidate), whether or not the retry then succeeds; a turn it finally fails is
  recorded as well (``llm_no_usable_reply``, ``llm_budget_exhausted``, ``llm_timeout``:
  ``ioa.runtime.turn_faults``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Final, Literal

from pipecat.frames.frames import ErrorFrame, InterruptionWorkerFrame
from pipecat.pipeline.worker import PipelineWorker

from bot.conf import BotSettings
from bot.examiner_inbox import Decisions, log_failure
from bot.examiner_stats import CoreStats
from bot.pipeline import BotIO, ExaminerPipeline, error_component
from bot.speech_fallback import FALLBACK_MESSAGES
from bot.turn_deadline import TurnLimits, TurnWatch
from ioa.events import payloads as p
from ioa.runtime import Fault, FaultCleared, TurnFault
from ioa.runtime.texts import for_language

logger = logging.getLogger(__name__)

INTERRUPTION_WAIT_SECONDS: Final = 5.0
"""How long a timed-out turn waits at most for its interruption to pass the pipeline before the
controller answers anyway. The fallback must not be queued before the interruption has passed:
the interruption drops every interruptible frame it overtakes, the fallback question among them,
and the candidate then waits in silence (seen in the chaos run on a loaded machine with a wait of
0.5 s, issue #33). On a quiet machine the interruption passes in milliseconds; a pipeline that
cannot pass one in 5 s is stuck, and the fallback is sent anyway."""
MAX_RETRY_SECONDS: Final = 60.0
"""The longest wait before a failing provider is tried again."""
TYPING_CODE: Final = "stt_typing"
"""The ``system_error`` code of the recogniser replaced by typing (the exam room's cue)."""
STABLE_SECONDS: Final = 120.0
"""A provider that has worked this long since its last fault starts its back-off afresh."""
MODEL_FAULTS: Final = {
    "model_unparsable_tool_call": "a tool call's arguments were not JSON",
    "model_unknown_tool": "a call to a function the node does not offer",
    "model_empty_reply": "a reply with neither text nor a tool call",
    "model_text_without_tool": "a reply in text without report_observation (not spoken)",
    "model_extra_report": "a second report_observation in one response (ignored)",
    "model_late_report": "a report_observation after its turn was answered (ignored)",
}
"""The ``system_error`` codes of a faulty model reply, with the message stored for each. Not
``llm_``-prefixed: marking flags ``llm_*`` warnings as turns the fallback answered
(``ioa.marking.flags``), and a reply retried successfully was no such turn."""


def record_model_fault(decisions: Decisions, code: str, **details: object) -> None:
    """Store a faulty model reply (:data:`MODEL_FAULTS`) as ``system_error`` after the inputs
    handed in before it, without waiting: component ``bot``, severity ``warning``, ``details``
    for the proctor and the audit, nothing for the candidate (no ``userMessage``). Nothing is
    stored once the inbox is closed."""
    logger.warning("bot %s: model fault %s %s", decisions.session_id, code, details)
    if decisions.closed:
        return
    payload = p.SystemErrorPayload(
        code=code,
        message=MODEL_FAULTS.get(code, code.replace("_", " ")),
        component="bot",
        severity="warning",
        details=details,
    )
    stored = asyncio.ensure_future(decisions.submit_foreign([payload]))
    stored.add_done_callback(log_failure)


@dataclass
class OutageBackoff:
    """When a failing provider is tried again: ``base`` seconds after its first fault, then
    twice as long each time it fails again (within an open fault or soon after a clearing), at
    most :data:`MAX_RETRY_SECONDS`."""

    base: float
    delay: float = 0.0
    cleared_at: float | None = None
    errors: int = 0

    def next_delay(self, now: float) -> float:
        """The wait before the next clearing, after one more error at ``now``."""
        self.errors += 1
        if self.cleared_at is not None and now - self.cleared_at > STABLE_SECONDS:
            self.delay = 0.0
        self.delay = self.base if self.delay <= 0 else min(self.delay * 2, MAX_RETRY_SECONDS)
        return self.delay


class FaultWatch:
    """See the module docstring."""

    def __init__(
        self,
        *,
        decisions: Decisions,
        stats: CoreStats,
        config: BotSettings,
        language: str | None = None,
    ) -> None:
        self._decisions = decisions
        self._language = language
        self._typing = False
        """The recogniser was replaced by typing (module docstring)."""
        self._stats = stats
        self._retry_seconds = config.fault_retry_seconds
        self._fallback_seconds = config.speech_fallback_seconds
        self._outage_since: dict[str, float] = {}
        """When each speech provider's current outage began (monotonic; until it works)."""
        self._session_id: uuid.UUID = decisions.session_id
        self._pipeline: ExaminerPipeline | None = None
        self._io: BotIO | None = None
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._backoffs: dict[str, OutageBackoff] = {}
        self._interrupting: set[asyncio.Task[None]] = set()
        self.turns = TurnWatch(
            TurnLimits(
                deadline_seconds=config.turn_deadline_seconds,
                max_requests=config.max_llm_requests_per_turn,
                provider_failures_to_pause=config.provider_failures_to_pause,
            ),
            on_fail=self._turn_failed,
        )

    def attach(self, pipeline: ExaminerPipeline, io: BotIO) -> None:
        """Listen for the pipeline's errors (an error frame becomes a fault)."""
        self._pipeline = pipeline
        self._io = io

        @pipeline.worker.event_handler("on_pipeline_error")
        async def _error(worker: PipelineWorker, frame: ErrorFrame) -> None:
            await self._pipeline_error(frame)

    def close(self) -> None:
        """Stop the turn watch and the pending fault clearings."""
        self.turns.stop()
        for timer in self._timers.values():
            timer.cancel()
        for task in self._interrupting:
            task.cancel()

    async def handler_failed(self, error: BaseException, node_id: str) -> None:
        """The ``report_observation`` handler failed: store ``system_error`` (the hydrator
        has logged it)."""
        self._stats.handler_errors += 1
        try:
            await self._decisions.submit_foreign(
                [
                    p.SystemErrorPayload(
                        code="observation_handler_failed",
                        message=f"{type(error).__name__}: {error}"[:2000] or "handler failed",
                        component="bot",
                        severity="error",
                        details={"nodeId": node_id or None, "error": type(error).__name__},
                    )
                ]
            )
        except Exception:
            logger.exception("bot %s: could not record the handler failure", self._session_id)

    def _turn_failed(self, code: str, detail: str, problems: tuple[str, ...]) -> None:
        """A turn failed: stop what the LLM is still doing for it and let the controller
        record the fault and answer with the current question."""
        self._stats.turn_faults += 1
        logger.warning("bot %s: turn fault %s (%s): %s", self._session_id, code, problems, detail)
        pipeline = self._pipeline
        fault = TurnFault(code=code, detail=detail, problems=problems)
        if code == "llm_timeout" and pipeline is not None and pipeline.reporter.idle:
            task = asyncio.get_running_loop().create_task(self._interrupt_then(pipeline, fault))
            self._interrupting.add(task)
            task.add_done_callback(self._interrupting.discard)
            return
        self._decisions.post(fault)

    async def _interrupt_then(self, pipeline: ExaminerPipeline, fault: TurnFault) -> None:
        """Interrupt the LLM's hung reply, and only once the interruption has passed the
        pipeline (at most :data:`INTERRUPTION_WAIT_SECONDS`) let the controller answer: the
        interruption drops every interruptible frame it overtakes, and a fallback question
        queued before it had passed would be dropped unspoken."""
        passed = pipeline.reporter.next_interruption()
        await pipeline.worker.queue_frame(InterruptionWorkerFrame())
        try:
            await asyncio.wait_for(passed, INTERRUPTION_WAIT_SECONDS)
        except TimeoutError:
            logger.warning(
                "bot %s: the interruption did not pass in %g s; the fallback is sent anyway",
                self._session_id,
                INTERRUPTION_WAIT_SECONDS,
            )
        self._decisions.post(fault)

    async def _pipeline_error(self, frame: ErrorFrame) -> None:
        assert self._pipeline is not None and self._io is not None
        component = error_component(frame, self._pipeline, self._io)
        if component is None:
            logger.warning("bot %s: pipeline error: %s", self._session_id, frame.error)
            return
        usable = bool(getattr(frame.processor, "is_usable", True))
        severity: Literal["transient", "fatal"] = "transient" if usable else "fatal"
        summary = "summar" in str(frame.error).lower()  # Pipecat's context summariser
        if component == "llm" and usable and self.turns.owed and not summary:
            detail = str(frame.error)[:1000]
            if not self.turns.provider_failed(detail):
                return  # this turn gets the fallback; only repeated failures pause the exam
        await self._provider_fault(component, severity, str(frame.error)[:1000])

    def provider_failed(self, component: str, detail: str) -> None:
        """``component`` failed without an error frame (the voice gave no audio for an
        utterance: ``bot.pipeline.SpeechReporter``): a transient fault, as an error would be."""
        failing = asyncio.ensure_future(self._provider_fault(component, "transient", detail))
        failing.add_done_callback(log_failure)

    async def _provider_fault(
        self, component: str, severity: Literal["transient", "fatal"], detail: str
    ) -> None:
        """A provider's fault (module docstring): the offline service once its outage has
        lasted long enough, counted while its fault is open, else a ``Fault`` for the
        controller and a clearing after the back-off."""
        if component == "stt" and self._typing:
            logger.info("bot %s: recogniser still failing (typing): %s", self._session_id, detail)
            return
        if severity == "transient" and component in ("stt", "tts"):
            self._outage_since.setdefault(component, time.monotonic())
            if self._fallback_due(component):
                await self._fall_back(component)
                return
        if severity == "transient" and component in self._timers:
            self._still_failing(component)
            return
        self._stats.faults += 1
        logger.warning("bot %s: %s %s fault: %s", self._session_id, component, severity, detail)
        self._decisions.post(Fault(component=component, severity=severity, detail=detail))
        if severity == "transient":
            self._arm_clearing(component)

    def provider_worked(self, component: str) -> None:
        """``component`` was seen working (a transcript, a reply with a tool call): its open
        fault clears now rather than at the end of its back-off."""
        self._outage_since.pop(component, None)
        timer = self._timers.pop(component, None)
        if timer is None:
            return
        timer.cancel()
        self._backoffs[component].cleared_at = time.monotonic()
        self._decisions.post(FaultCleared(component=component))

    def _still_failing(self, component: str) -> None:
        """Another error while the provider's fault is open: no new fault (the exam is
        already paused for it), the clearing moves further out."""
        timer = self._timers.pop(component, None)
        if timer is not None:
            timer.cancel()
        backoff = self._backoffs.get(component)
        if backoff is not None and backoff.errors == 1:
            logger.warning(
                "bot %s: %s still failing; trying again with back-off", self._session_id, component
            )
        self._arm_clearing(component)

    def _arm_clearing(self, component: str) -> None:
        backoff = self._backoffs.setdefault(component, OutageBackoff(self._retry_seconds))
        delay = backoff.next_delay(time.monotonic())

        def clear() -> None:
            self._timers.pop(component, None)
            backoff.cleared_at = time.monotonic()
            if self._fallback_due(component):
                switching = asyncio.ensure_future(self._fall_back(component))
                switching.add_done_callback(log_failure)
                return
            self._decisions.post(FaultCleared(component=component))

        self._timers[component] = asyncio.get_running_loop().call_later(delay, clear)

    def _fallback_due(self, component: str) -> bool:
        """The provider's outage has lasted ``VIVA_SPEECH_FALLBACK_SECONDS`` and an offline
        service is in reserve for it, not yet used (``bot.speech_fallback``)."""
        fallback = self._io.fallbacks.get(component) if self._io is not None else None
        since = self._outage_since.get(component)
        if fallback is None and component == "stt" and self._io is not None:
            # No recogniser in reserve: typing stands in (once).
            usable = self._io.stt is not None and not self._io.text_turns and not self._typing
        else:
            usable = fallback is not None and not fallback.used
        return (
            usable
            and self._fallback_seconds > 0
            and since is not None
            and time.monotonic() - since >= self._fallback_seconds
        )

    async def _fall_back(self, component: str) -> None:
        """Switch ``component`` to its offline service for the rest of the session, tell the
        candidate and the record (``system_error`` ``<component>_fallback``), and clear the
        fault: the exam paused for it carries on."""
        assert self._pipeline is not None and self._io is not None
        if component not in self._io.fallbacks:
            await self._type_instead()
            return
        fallback = self._io.fallbacks[component]
        if fallback.used:
            return
        timer = self._timers.pop(component, None)
        if timer is not None:
            timer.cancel()
        lasted = time.monotonic() - self._outage_since.pop(component, time.monotonic())
        provider = fallback.offline_label[0]
        logger.warning(
            "bot %s: %s down for %.0f s; switching to %s",
            self._session_id,
            component,
            lasted,
            provider,
        )
        await self._pipeline.worker.queue_frame(fallback.switch_frame())
        try:
            await self._decisions.submit_foreign(
                [
                    p.SystemErrorPayload(
                        code=f"{component}_fallback",
                        message=f"{component} down for {lasted:.0f} s: switched to {provider}",
                        component="bot",
                        severity="warning",
                        userMessage=FALLBACK_MESSAGES[fallback.kind],
                        details={"component": component, "provider": provider},
                    )
                ]
            )
        except Exception:
            logger.exception("bot %s: could not record the fallback", self._session_id)
        self._decisions.post(FaultCleared(component=component))

    async def _type_instead(self) -> None:
        """The recogniser is down and none stands in: the candidate types their answers from
        now on (module docstring); the record and the candidate are told, the exam carries on."""
        if self._typing:
            return
        self._typing = True
        timer = self._timers.pop("stt", None)
        if timer is not None:
            timer.cancel()
        lasted = time.monotonic() - self._outage_since.pop("stt", time.monotonic())
        logger.warning(
            "bot %s: recogniser down for %.0f s and none in reserve; typing",
            self._session_id,
            lasted,
        )
        try:
            await self._decisions.submit_foreign(
                [
                    p.SystemErrorPayload(
                        code=TYPING_CODE,
                        message=f"stt down for {lasted:.0f} s: answers are typed",
                        component="bot",
                        severity="warning",
                        userMessage=for_language(self._language).typing_fallback,
                        details={"component": "stt", "provider": "typing"},
                    )
                ]
            )
        except Exception:
            logger.exception("bot %s: could not record the typing fallback", self._session_id)
        self._decisions.post(FaultCleared(component="stt"))
