"""The examiner core: the runtime controller as the bot's brain, wired into Pipecat.

:class:`ExaminerCore` is the ``report_observation`` handler (an
:class:`~bot.flow_nodes.ObservationSink`), the pipeline processors' counterpart
(:class:`~bot.pipeline.PipelineCore`) and the applier of the controller's effects.

* **One input at a time.** Every controller input (transcripts, observations, speech reports,
  ticks, commands, proctor inputs, faults) goes through one inbox task: the controller decides,
  the decision's events are stored (``Journal.record``: fenced by ``expected_version``), then
  its effects are applied. Nothing is applied that was not stored first.
* **Observations.** The handler hands the LLM's arguments to the controller and returns what it
  decided: stay (the validated text is spoken; the LLM does not run again unless the controller
  asks it to, ``PromptLlm``), or move (Pipecat Flows performs the transition once the tool result
  is in the context). The LLM never chooses the node and never speaks on its own.
* **Effects.** ``Speak`` → an :class:`~bot.pipeline.ExaminerSpeakFrame` (validated text, to TTS
  verbatim); ``EnterNode`` → the compiled node, driven (no LLM run on entry: the controller's
  opening follows as ``Speak`` and is also put in the node's context); ``EnterBootNode`` → the
  silent boot node; ``EnterAdminNode`` / ``ReturnToNode`` → the admin node and back;
  ``InjectContext`` → a context message; ``PromptLlm`` → an instruction and an LLM run;
  ``AdjustSpeech`` → the transport's speech controls; ``EndSession`` → the pipeline ends once
  the closing has been spoken.
* **Errors (chapter 07 §11).** A failing handler is logged, ``system_error`` is stored and the
  LLM gets a neutral fallback (bounded retries). A provider error (LLM/STT/TTS) becomes a
  ``Fault``: the controller pauses under a ``network_issue`` recovery; the fault is cleared after
  ``VIVA_BOT_FAULT_RETRY_SECONDS`` and escalates to the technical-failure end if it keeps
  happening. Failing persistence crashes the run, and the runner resumes from the stored log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from django.db import DatabaseError
from pipecat.flows import NodeConfig
from pipecat.frames.frames import (
    EndFrame,
    ErrorFrame,
    Frame,
    LLMMessagesAppendFrame,
    LLMRunFrame,
)
from pipecat.pipeline.worker import PipelineWorker

from bot.conf import BotSettings
from bot.flow_nodes import BOOT_NODE, FlowHydrator, ObservationDecision
from bot.journal import DbThreads, Journal, resume_messages
from bot.lease import Lease, holds
from bot.pipeline import BotIO, ExaminerPipeline, ExaminerSpeakFrame, error_component
from bot.text_transport import typed_answer_frame
from bot.usage import Component, Counter, UsageLedger
from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import (
    AdjustSpeech,
    BotReady,
    CandidateInterrupted,
    Command,
    Decision,
    Effect,
    EndSession,
    EnterAdminNode,
    EnterBootNode,
    EnterNode,
    Fault,
    FaultCleared,
    InjectContext,
    Observation,
    PromptLlm,
    ReturnToNode,
    RuntimeInput,
    Speak,
    Tick,
    TranscriptSegment,
    UtteranceFinished,
    UtteranceStarted,
)

logger = logging.getLogger(__name__)

MAX_BATCH: Final = 32
"""Inputs decided together and stored in one write when they queue up (group commit)."""
ENTRY_EFFECTS: Final = (EnterNode, EnterBootNode, EnterAdminNode, ReturnToNode)
PERSIST_RETRIES: Final = (0.2, 0.5, 1.0, 2.0)
"""Back-off (seconds) before retrying a failed write of a decision's events."""
END_GRACE_SECONDS: Final = 30.0
"""After ``EndSession``, end the pipeline at the latest this long after (closing not reported)."""
TEXT_WITHOUT_TOOL: Final = {
    "signals": [],
    "answerQuality": "partial",
    "needsFollowUp": False,
    "evidenceSufficient": False,
    "anxietyDetected": False,
}
"""The observation a text-only LLM response becomes (its text is still validated)."""


def message(role: str, content: str) -> Any:
    """An LLM context message (Pipecat types these as the OpenAI SDK's message params)."""
    return {"role": role, "content": content}


class LeaseLost(Exception):
    """Another bot took the session over: this one must stop writing at once."""


class BotFailure(Exception):
    """The bot cannot go on (its decisions cannot be stored); the runner restarts it."""


class DecisionRefused(Exception):
    """The event store refused a decision's events (an EVT rule); it was not stored."""


@dataclass
class _Job:
    input: RuntimeInput | None = None
    payloads: Sequence[p.Payload] = ()
    call: Callable[[], Awaitable[Any]] | None = None
    apply: bool = True
    future: asyncio.Future[Any] | None = None
    on_decided: Callable[[Decision], None] | None = None


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("bot input failed: %s", task.exception())


def _resolve(job: _Job, outcome: Any) -> None:
    future = job.future
    if future is None or future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


@dataclass
class CoreStats:
    """Counters for tests and benchmarks."""

    inputs: int = 0
    observations: int = 0
    persist_retries: int = 0
    resyncs: int = 0
    handler_errors: int = 0
    faults: int = 0
    text_without_tool: int = 0
    observation_ms: list[float] = field(default_factory=list)


class ExaminerCore:
    """See the module docstring."""

    def __init__(
        self,
        *,
        journal: Journal,
        db: DbThreads,
        config: BotSettings,
        usage: UsageLedger,
        lease: Lease | None = None,
    ) -> None:
        self.journal = journal
        self.db = db
        self.config = config
        self.usage_ledger = usage
        self.lease = lease
        self.hydrator = FlowHydrator(
            journal.artifacts.flow,
            self,
            on_error=self._handler_failed,
            retry_after_error=self._may_rerun,
        )
        self.stats = CoreStats()
        self.pipeline: ExaminerPipeline | None = None
        self.io: BotIO | None = None
        self.failed: asyncio.Event = asyncio.Event()
        self.failure: BaseException | None = None
        self._jobs: deque[_Job] = deque()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._inbox: asyncio.Task[None] | None = None
        self._tick: asyncio.TimerHandle | None = None
        self._fault_timers: dict[str, asyncio.TimerHandle] = {}
        self._end_timer: asyncio.TimerHandle | None = None
        self._reruns = 0
        self._llm_node: str | None = None
        self._flow_ready = False
        self._node_has_tool = False
        self._usage_node: str | None = journal.controller.state.current_node_id
        self._end_requested = False
        self._end_queued = False
        self._usage_due = False
        self._closed = False

    # --- setup ---------------------------------------------------------------------------------

    @property
    def controller(self) -> Any:
        return self.journal.controller

    @property
    def session_id(self) -> Any:
        return self.journal.session_id

    def attach(self, pipeline: ExaminerPipeline, io: BotIO) -> None:
        """Connect the built pipeline (error frames become faults)."""
        self.pipeline = pipeline
        self.io = io

        @pipeline.worker.event_handler("on_pipeline_error")
        async def _error(worker: PipelineWorker, frame: ErrorFrame) -> None:
            await self._pipeline_error(frame)

    def start(self) -> None:
        """Start the inbox (call on the bot's event loop)."""
        if self._inbox is None:
            self._inbox = asyncio.create_task(
                self._run_inbox(), name=f"bot-inbox-{self.session_id}"
            )

    async def open(self) -> None:
        """Bring the flow to where the session is: a new session gets ``BotReady`` (the boot
        node); a restored one is resumed at its node and goes through a bot fault and its
        clearing (``recovery_started`` … the question is asked again)."""
        state = self.controller.state
        if self.journal.restored_events == 0:
            await self.submit(BotReady())
            return
        if state.current_node_id is None or state.exam_state in (
            ExamState.SCHEDULED,
            ExamState.SCAFFOLDING,
            ExamState.READY,
        ):
            await self._set_node(self.hydrator.boot_node(), has_tool=False)
        else:
            node_id = state.current_node_id
            history = resume_messages(self.controller.log, node_id)
            config = self.hydrator.driven_node(
                node_id, context_strategy="reset", extra_messages=history
            )
            await self._set_node(config, has_tool=bool(config.get("functions")))
        await self.submit(
            Fault(
                component="bot",
                severity="transient",
                detail="the examiner bot restarted; resuming from the session log",
            )
        )
        await self.submit(FaultCleared(component="bot"))

    async def close(self) -> None:
        """Stop timers, drain the inbox, report the remaining usage."""
        if self._closed:
            return
        self._closed = True
        for timer in (self._tick, self._end_timer, *self._fault_timers.values()):
            if timer is not None:
                timer.cancel()
        if self._inbox is not None and not self._inbox.done() and not self.failed.is_set():
            try:
                await asyncio.wait_for(self._drained(), timeout=10)
                await asyncio.wait_for(self._report_usage(), timeout=10)
            except (TimeoutError, Exception):
                logger.warning("bot %s: could not drain its inbox", self.session_id)
        if self._inbox is not None:
            self._inbox.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._inbox

    # --- the inbox -----------------------------------------------------------------------------

    async def submit(
        self,
        item: RuntimeInput,
        *,
        apply: bool = True,
        on_decided: Callable[[Decision], None] | None = None,
    ) -> Decision:
        """Hand ``item`` to the controller (after earlier inputs) and wait until its decision is
        stored (and applied, unless ``apply`` is false). ``on_decided`` is called as soon as
        the controller has decided, before the decision is stored."""
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._inbox_put(_Job(input=item, apply=apply, future=future, on_decided=on_decided))
        return await asyncio.shield(future)

    def post(self, item: RuntimeInput) -> None:
        """Hand ``item`` to the controller without waiting."""
        if not self._closed:
            self._inbox_put(_Job(input=item))

    async def submit_foreign(self, payloads: Sequence[p.Payload]) -> None:
        """Store events the bot emits itself (after earlier inputs)."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inbox_put(_Job(payloads=payloads, future=future))
        await asyncio.shield(future)

    def _inbox_put(self, job: _Job) -> None:
        self._jobs.append(job)
        self._idle.clear()
        self._wake.set()

    async def _drained(self) -> None:
        """Wait until every job handed to the inbox so far was processed."""
        await self._idle.wait()

    def _next_jobs(self) -> list[_Job]:
        """The next job, or the run of consecutive input jobs at the head (group commit)."""
        jobs = [self._jobs.popleft()]
        if jobs[0].input is not None:
            while self._jobs and self._jobs[0].input is not None and len(jobs) < MAX_BATCH:
                jobs.append(self._jobs.popleft())
        return jobs

    async def _run_inbox(self) -> None:
        while True:
            if not self._jobs:
                if self._usage_due:
                    # Usage events are stored when nothing else waits (never ahead of an input).
                    self._usage_due = False
                    self._inbox_put(_Job(call=self._report_usage))
                    continue
                self._idle.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            jobs = self._next_jobs()
            try:
                if jobs[0].input is not None:
                    await self._process_inputs(jobs)
                else:
                    job = jobs[0]
                    result: Any = None
                    if job.call is not None:
                        result = await job.call()
                    else:
                        await self._store_foreign(job.payloads)
                    _resolve(job, result)
            except (LeaseLost, BotFailure) as exc:
                self._fail(exc)
                for job in jobs:
                    _resolve(job, exc)
                self._idle.set()
                return
            except Exception as exc:
                logger.exception("bot %s: input failed", self.session_id)
                for job in jobs:
                    _resolve(job, exc)

    def _fail(self, exc: BaseException) -> None:
        if self.failure is None:
            self.failure = exc
        self.failed.set()

    async def _process_inputs(self, jobs: list[_Job]) -> None:
        """Decide on a run of inputs, store all their events in one write, then resolve and
        apply each in order."""
        outcomes = await self._decide(jobs)
        for job, decided in zip(jobs, outcomes, strict=True):
            outcome: Decision | Exception = decided
            if isinstance(outcome, Decision):
                try:
                    if job.apply:
                        await self.apply(outcome.effects)
                    assert job.input is not None
                    self._after(job.input, outcome)
                except Exception as exc:
                    logger.exception("bot %s: applying effects failed", self.session_id)
                    outcome = exc
            _resolve(job, outcome)

    async def _decide(self, jobs: list[_Job]) -> list[Decision | Exception]:
        """The controller's decisions on ``jobs``' inputs, stored (module docstring)."""
        from sessions.event_store import EventsRefused, VersionConflict

        self.stats.inputs += len(jobs)
        for attempt in range(3):
            outcomes: list[Decision | Exception] = []
            for job in jobs:
                assert job.input is not None
                try:
                    decision = self.journal.controller.handle(job.input)
                except Exception as exc:  # a malformed input: the controller rolled back
                    outcomes.append(exc)
                    continue
                outcomes.append(decision)
                if job.on_decided is not None and attempt == 0:
                    job.on_decided(decision)
            decisions = [o for o in outcomes if isinstance(o, Decision)]
            try:
                await self._record(decisions)
                return outcomes
            except VersionConflict:
                # Someone else wrote to the log. If it was another bot, stop; otherwise fold
                # its events in and decide again.
                if self.lease is not None and not await self.db.run(
                    self.session_id, holds, self.lease
                ):
                    raise LeaseLost(f"session {self.session_id}: another bot took over") from None
                self.stats.resyncs += 1
                await self.db.run(self.session_id, self.journal.rebuild)
            except EventsRefused as exc:
                await self.db.run(self.session_id, self.journal.rebuild)
                if len(jobs) == 1:
                    return [DecisionRefused(str(exc))]
                # One input's events broke a rule: decide on each alone.
                singles: list[Decision | Exception] = []
                for job in jobs:
                    singles += await self._decide([job])
                return singles
        raise BotFailure(f"session {self.session_id}: the log keeps changing under the bot")

    async def _record(self, decisions: Sequence[Decision]) -> None:
        from sessions.event_store import EventsRefused, VersionConflict

        if not any(d.events for d in decisions):
            return
        for delay in (*PERSIST_RETRIES, None):
            try:
                await self.db.run(self.session_id, self.journal.record_many, decisions)
                return
            except (VersionConflict, EventsRefused):
                raise
            except DatabaseError as exc:
                if delay is None:
                    raise BotFailure(f"cannot store the session's events: {exc}") from exc
                self.stats.persist_retries += 1
                logger.warning("bot %s: storing events failed (%s); retrying", self.session_id, exc)
                await asyncio.sleep(delay)

    async def _store_foreign(self, payloads: Sequence[p.Payload]) -> None:
        from sessions.event_store import VersionConflict

        for _ in range(3):
            try:
                await self.db.run(self.session_id, self.journal.append_foreign, payloads)
                return
            except VersionConflict:
                if self.lease is not None and not await self.db.run(
                    self.session_id, holds, self.lease
                ):
                    raise LeaseLost(f"session {self.session_id}: another bot took over") from None
                await self.db.run(self.session_id, self.journal.rebuild)
            except DatabaseError as exc:
                logger.warning("bot %s: storing bot events failed (%s)", self.session_id, exc)
                await asyncio.sleep(0.5)
        logger.error("bot %s: bot events could not be stored: %s", self.session_id, payloads)

    def _after(self, item: RuntimeInput, decision: Decision) -> None:
        self._schedule_tick()
        node = self.controller.state.current_node_id
        if node != self._usage_node:
            self._usage_node = node
            self._usage_due = True
        if isinstance(item, UtteranceFinished):
            self._maybe_end()

    def _schedule_tick(self) -> None:
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None
        if self._closed or self.controller.completed:
            return
        deadline = self.controller.next_deadline_ms()
        if deadline is None:
            return
        delay = max(0.0, (deadline - self.journal.clock.now_ms()) / 1000) + 0.005
        self._tick = asyncio.get_running_loop().call_later(delay, self.post, Tick())

    async def _report_usage(self) -> None:
        payloads = self.usage_ledger.take_events()
        if payloads:
            await self._store_foreign(payloads)

    # --- the report_observation handler (ObservationSink) ---------------------------------------

    async def on_observation(self, args: Mapping[str, Any], *, node_id: str) -> ObservationDecision:
        """Ask the controller about one ``report_observation`` call and do what it decided."""
        started = time.monotonic()
        self.stats.observations += 1
        decision = await self.submit(Observation(dict(args)), apply=False)
        outcome = await self._observation_outcome(decision)
        self.stats.observation_ms.append((time.monotonic() - started) * 1000)
        return outcome

    async def _observation_outcome(self, decision: Decision) -> ObservationDecision:
        effects = list(decision.effects)
        result: dict[str, Any] = dict(decision.result)
        entry = next((i for i, e in enumerate(effects) if isinstance(e, ENTRY_EFFECTS)), None)
        before = effects if entry is None else effects[:entry]
        instruction: str | None = None
        for effect in before:
            if isinstance(effect, PromptLlm):
                instruction = effect.instruction
            elif isinstance(effect, Speak) and entry is not None:
                # Said before leaving the node (the bridge): the next node's context starts
                # clean, so it is not written to the context.
                await self._speak(effect, append_to_context=False)
            else:
                await self._apply_one(effect)
        if entry is None:
            if instruction is not None:
                result["instruction"] = instruction
                return ObservationDecision.stay(result, respond=self._may_rerun())
            if result.get("status") == "error":
                return ObservationDecision.stay(result, respond=self._may_rerun())
            return ObservationDecision.stay(result, respond=False)
        config, rest, has_tool = await self._entry_config(effects[entry], effects[entry + 1 :])
        for effect in rest:
            await self._apply_one(effect)
        self._node_has_tool = has_tool
        return ObservationDecision.move(result, str(config["name"]), node_config=config)

    def _may_rerun(self) -> bool:
        """Whether the LLM may run again without a new candidate turn (bounded)."""
        if self._reruns >= self.config.max_llm_reruns:
            return False
        self._reruns += 1
        return True

    async def _handler_failed(self, error: BaseException, node_id: str) -> None:
        """The handler failed: log (done by the hydrator) and store ``system_error``."""
        self.stats.handler_errors += 1
        try:
            await self.submit_foreign(
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
            logger.exception("bot %s: could not record the handler failure", self.session_id)

    # --- effects ---------------------------------------------------------------------------------

    async def apply(self, effects: Sequence[Effect]) -> None:
        """Apply a decision's effects in order (outside a tool call)."""
        remaining = list(effects)
        while remaining:
            effect = remaining.pop(0)
            if isinstance(effect, ENTRY_EFFECTS):
                config, remaining, has_tool = await self._entry_config(effect, remaining)
                await self._set_node(config, has_tool=has_tool)
            elif isinstance(effect, PromptLlm):
                await self._prompt(effect.instruction)
            else:
                await self._apply_one(effect)

    async def _entry_config(
        self, effect: Effect, following: Sequence[Effect]
    ) -> tuple[NodeConfig, list[Effect], bool]:
        """The node config of an entry effect, folding in the ``Speak``/``PromptLlm`` effects
        that belong to the entry (the opening is spoken and also written to the new context).
        Returns the config, the effects left to apply, and whether the node offers the tool."""
        rest = list(following)
        speaks: list[Speak] = []
        prompt: str | None = None
        additions: list[str] = []
        while rest and isinstance(rest[0], Speak | PromptLlm):
            item = rest.pop(0)
            if isinstance(item, Speak):
                speaks.append(item)
            elif isinstance(item, PromptLlm):
                prompt = item.instruction
        if isinstance(effect, EnterBootNode):
            config = self.hydrator.boot_node()
        elif isinstance(effect, EnterAdminNode):
            config = self.hydrator.admin_node(effect.instruction_id, prompt or effect.text)
            prompt = None
        elif isinstance(effect, ReturnToNode):
            config = self.hydrator.return_node(effect.node_id)
        else:
            assert isinstance(effect, EnterNode)
            additions = list(effect.task_additions)
            messages = [{"role": "developer", "content": text} for text in additions]
            messages += [{"role": "assistant", "content": s.text} for s in speaks]
            if prompt is not None:
                messages.append({"role": "developer", "content": prompt})
            config = self.hydrator.driven_node(
                effect.node_id,
                context_strategy=effect.context_strategy,
                summary_prompt=effect.summary_prompt,
                extra_messages=messages,
                respond_immediately=prompt is not None,
            )
        for speak in speaks:
            await self._speak(speak, append_to_context=False)
        if prompt is not None and isinstance(effect, EnterBootNode | ReturnToNode):
            rest.insert(0, PromptLlm(prompt))
        return config, rest, bool(config.get("functions"))

    async def _apply_one(self, effect: Effect) -> None:
        if isinstance(effect, Speak):
            await self._speak(effect, append_to_context=True)
        elif isinstance(effect, InjectContext):
            await self._push(
                LLMMessagesAppendFrame(messages=[message(effect.role, effect.text)], run_llm=False)
            )
        elif isinstance(effect, PromptLlm):
            await self._prompt(effect.instruction)
        elif isinstance(effect, AdjustSpeech):
            controls = self.io.adjust_speech if self.io is not None else None
            if controls is None:
                logger.info(
                    "bot %s: speech %s=%s (no speech controls in this mode)",
                    self.session_id,
                    effect.setting,
                    effect.value,
                )
            else:
                for frame in controls(effect.setting, effect.value):
                    await self._push(frame)
        elif isinstance(effect, EndSession):
            self._end_requested = True
            self._end_timer = asyncio.get_running_loop().call_later(
                END_GRACE_SECONDS, self._end_now
            )
            self._maybe_end()
        elif isinstance(effect, ENTRY_EFFECTS):  # a second entry inside a tool call
            config, _, has_tool = await self._entry_config(effect, [])
            await self._set_node(config, has_tool=has_tool)

    async def _speak(self, effect: Speak, *, append_to_context: bool) -> None:
        assert self.pipeline is not None
        frame = ExaminerSpeakFrame(
            text=effect.text, append_to_context=append_to_context, utterance_id=effect.utterance_id
        )
        interruptible = effect.purpose != "closing"
        frame.interruptible = interruptible
        self.pipeline.reporter.expect(effect.utterance_id, interruptible=interruptible)
        await self._push(frame)

    async def _prompt(self, instruction: str) -> None:
        self._reruns += 1
        await self._push(
            LLMMessagesAppendFrame(messages=[message("developer", instruction)], run_llm=True)
        )

    async def _set_node(self, config: NodeConfig, *, has_tool: bool) -> None:
        assert self.pipeline is not None
        flow = self.pipeline.flow_manager
        self._node_has_tool = has_tool
        if not self._flow_ready:
            self._flow_ready = True
            await flow.initialize(config)
        else:
            await flow.set_node_from_config(config)

    async def _push(self, frame: Frame) -> None:
        assert self.pipeline is not None
        await self.pipeline.worker.queue_frame(frame)

    def _maybe_end(self) -> None:
        if (
            self._end_requested
            and not self._end_queued
            and self.pipeline is not None
            and self.pipeline.reporter.idle
        ):
            self._end_now()

    def _end_now(self) -> None:
        if self._end_queued or self.pipeline is None:
            return
        self._end_queued = True
        asyncio.get_running_loop().create_task(self.pipeline.worker.queue_frame(EndFrame()))

    # --- PipelineCore: what the processors report -------------------------------------------------

    def llm_allowed(self) -> bool:
        """The LLM runs only while the exam is in progress, at a node that offers the tool."""
        state = self.controller.state
        return (
            state.exam_state is ExamState.IN_PROGRESS
            and not state.completed
            and self._node_has_tool
        )

    async def candidate_turn(self, text: str, confidence: float) -> None:
        """A complete candidate turn (text mode): record it, add it to the context, and run the
        LLM if the exam is in progress and the runtime did not answer the turn itself. When the
        transcript's decision has no effects, the LLM starts as soon as it is decided, while
        its events are being stored (the observation is only handled after they are)."""
        self._reruns = 0
        await self._push(LLMMessagesAppendFrame(messages=[message("user", text)], run_llm=False))
        decided: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

        def early(decision: Decision) -> None:
            if not decided.done():
                decided.set_result(decision)

        stored = asyncio.ensure_future(
            self.submit(TranscriptSegment("candidate", text, confidence), on_decided=early)
        )
        stored.add_done_callback(_log_failure)
        await asyncio.wait({decided, stored}, return_when=asyncio.FIRST_COMPLETED)
        if not decided.done():
            return  # it failed before the controller decided (logged)
        decision = decided.result()
        if decision.effects:
            await asyncio.wait({stored})  # its effects (a context warning...) come first
            if stored.exception() is not None:
                return
        spoke = any(isinstance(e, Speak) for e in decision.effects)
        if decision.status == "recorded" and not spoke and self.llm_allowed():
            await self._push(LLMRunFrame())

    def candidate_transcript(self, text: str, confidence: float) -> None:
        """A final transcript in voice mode (the turn strategies decide when the LLM runs)."""
        self._reruns = 0
        self.post(TranscriptSegment("candidate", text, confidence))

    def utterance_started(self, utterance_id: str) -> None:
        self.post(UtteranceStarted(utterance_id))

    def utterance_finished(self, utterance_id: str, duration_ms: int) -> None:
        self.post(UtteranceFinished(utterance_id, max(0, duration_ms)))

    def candidate_interrupted(self, utterance_id: str) -> None:
        """The candidate barged in while ``utterance_id`` was being spoken."""
        self.post(CandidateInterrupted(utterance_id))

    def text_without_tool(self, text: str) -> None:
        """The LLM answered in text without calling the tool: the controller decides on it
        like on any observation (it is validated before anything is spoken)."""
        if not self.llm_allowed():
            return
        self.stats.text_without_tool += 1
        logger.warning("bot %s: LLM text without report_observation", self.session_id)
        self.post(Observation({**TEXT_WITHOUT_TOOL, "spokenText": text[:2000]}))

    def llm_started(self) -> None:
        """An LLM request is on its way: its usage belongs to the node it was made at."""
        self._llm_node = self.controller.state.current_node_id

    def usage(self, component: Component, counter: Counter, model: str | None) -> None:
        node = self._llm_node if component == "llm" else self.controller.state.current_node_id
        self.usage_ledger.add(component, node, counter, model)

    # --- channel inputs (bot.channels) -----------------------------------------------------------

    async def on_channel_input(self, kind: str, fields: Mapping[str, Any]) -> None:
        """One message from the session's bot group: typed answers and command envelopes here;
        the candidate being ready and proctor inputs in ``bot.proctoring`` (which answers the
        proctor's request)."""
        from bot import proctoring

        if kind == "candidate_ready":
            await proctoring.candidate_ready(self)
        elif kind in proctoring.HANDLED:
            await proctoring.handle(self, kind, fields)
        elif kind == "candidate_text":
            text = str(fields.get("text", "")).strip()
            if text:
                confidence = float(fields.get("confidence", 1.0))
                await self._push(typed_answer_frame(text, min(1.0, max(0.0, confidence))))
        elif kind == "command":
            command = fields.get("command") or {}
            self.post(
                Command(
                    command_id=str(command.get("commandId", "")),
                    type=str(command.get("type", "")),
                    source=str(command.get("source", "candidate")),
                    payload=dict(command.get("payload") or {}),
                )
            )

    # --- provider faults -------------------------------------------------------------------------

    async def _pipeline_error(self, frame: ErrorFrame) -> None:
        assert self.pipeline is not None and self.io is not None
        component = error_component(frame, self.pipeline, self.io)
        if component is None:
            logger.warning("bot %s: pipeline error: %s", self.session_id, frame.error)
            return
        usable = bool(getattr(frame.processor, "is_usable", True))
        severity: Literal["transient", "fatal"] = "transient" if usable else "fatal"
        self.stats.faults += 1
        logger.warning("bot %s: %s %s fault: %s", self.session_id, component, severity, frame.error)
        self.post(Fault(component=component, severity=severity, detail=str(frame.error)[:1000]))
        if severity == "transient" and component not in self._fault_timers:
            loop = asyncio.get_running_loop()

            def clear() -> None:
                self._fault_timers.pop(component, None)
                self.post(FaultCleared(component=component))

            self._fault_timers[component] = loop.call_later(self.config.fault_retry_seconds, clear)

    @property
    def at_boot(self) -> bool:
        return bool(
            self.pipeline is not None and self.pipeline.flow_manager.current_node == BOOT_NODE
        )
