"""The examiner's input actor: one input at a time, decided, stored, then applied (no Pipecat).

Every controller input (transcripts, observations, speech reports, ticks, commands, proctor
inputs, faults) goes through the one task of :class:`DecisionInbox`: the controller decides,
the decision's events are stored (:class:`~bot.journal_writer.JournalWriter`, fenced by the
controller's version), then its effects are applied and the core is told (:class:`Follower`).
Nothing is applied that was not stored first.

* **Group commit.** Inputs that queue up are decided together and stored in one write (at most
  :data:`MAX_BATCH`). If one input's events break an EVT rule, each is decided again alone.
* **Conflicts.** When someone else wrote to the log, the controller is rebuilt from the store
  and the inputs are decided again; if another bot holds the lease, this one stops
  (:class:`~bot.journal_writer.LeaseLost`).
* **Usage.** When the exam moves to another node, the usage measured so far is stored as events
  once nothing else waits (never ahead of an input).

:class:`Decisions` is what the examiner's other roles need of the inbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from bot.examiner_stats import CoreStats
from bot.journal import DbThreads
from bot.journal_writer import BotFailure, DecisionRefused, JournalWriter, LeaseLost, LogChanged
from bot.usage import UsageLedger
from ioa.errors import InvalidInputError
from ioa.events import payloads as p
from ioa.runtime import Decision, Effect, RuntimeInput

logger = logging.getLogger(__name__)

MAX_BATCH: Final = 32
"""Inputs decided together and stored in one write when they queue up (group commit)."""
CONFLICT_ATTEMPTS: Final = 3
"""Times a run of inputs is decided again after someone else wrote, before the bot gives up."""


class Decisions(Protocol):
    """What the examiner's roles need of the inbox (:class:`DecisionInbox`)."""

    @property
    def session_id(self) -> uuid.UUID: ...

    @property
    def db(self) -> DbThreads: ...

    @property
    def closed(self) -> bool: ...

    async def submit(
        self,
        item: RuntimeInput,
        *,
        apply: bool = True,
        on_decided: Callable[[Decision], None] | None = None,
        input_ids: tuple[str, ...] = (),
    ) -> Decision: ...

    def post(
        self,
        item: RuntimeInput,
        *,
        input_ids: tuple[str, ...] = (),
        on_refused: Callable[[InvalidInputError], None] | None = None,
    ) -> None: ...

    async def submit_foreign(self, payloads: Sequence[p.Payload]) -> None: ...

    def after_earlier(self, call: Callable[[], Awaitable[object]]) -> None: ...


class Follower(Protocol):
    """Who carries out each stored decision and is told when it is done
    (``bot.examiner.ExaminerCore``, applying through ``bot.effects.EffectApplier``)."""

    async def apply(self, effects: Sequence[Effect]) -> None: ...

    def decided(self, item: RuntimeInput, decision: Decision) -> None: ...


@dataclass
class _Job:
    input: RuntimeInput | None = None
    payloads: Sequence[p.Payload] = ()
    call: Callable[[], Awaitable[object]] | None = None
    apply: bool = True
    future: asyncio.Future[Decision | None] | None = None
    """Resolved with the input's decision (``None`` for events the bot emits itself)."""
    on_decided: Callable[[Decision], None] | None = None
    input_ids: tuple[str, ...] = ()
    """Candidate inputs (``sessions.inbox``) this job consumes: marked processed with its events."""
    on_refused: Callable[[InvalidInputError], None] | None = None
    """Called (on the inbox's task) when the controller refuses the input by name."""


def log_failure[T](task: asyncio.Future[T]) -> None:
    """A done-callback for fire-and-forget inputs: log the failure (nobody awaits them)."""
    if not task.cancelled() and task.exception() is not None:
        logger.error("bot input failed: %s", task.exception())


def _resolve(job: _Job, outcome: Decision | BaseException | None) -> None:
    future = job.future
    if future is None or future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


class DecisionInbox:
    """See the module docstring. ``failed`` is set (and ``failure`` holds why) when the bot
    cannot go on: its lease was lost or its decisions cannot be stored."""

    def __init__(
        self,
        *,
        writer: JournalWriter,
        stats: CoreStats,
        usage: UsageLedger,
        follower: Follower,
    ) -> None:
        self._writer = writer
        self._journal = writer.journal
        self.session_id = writer.session_id
        self.db = writer.db
        self._stats = stats
        self._usage = usage
        self._follower = follower
        self.closed = False
        self.failed: asyncio.Event = asyncio.Event()
        self.failure: BaseException | None = None
        self._jobs: deque[_Job] = deque()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._usage_node: str | None = writer.journal.controller.state.current_node_id
        self._usage_due = False

    def start(self) -> None:
        """Start the inbox's task (call on the bot's event loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"bot-inbox-{self.session_id}")

    async def submit(
        self,
        item: RuntimeInput,
        *,
        apply: bool = True,
        on_decided: Callable[[Decision], None] | None = None,
        input_ids: tuple[str, ...] = (),
    ) -> Decision:
        """Hand ``item`` to the controller (after earlier inputs) and wait until its decision is
        stored (and applied, unless ``apply`` is false). ``on_decided`` is called as soon as
        the controller has decided, before the decision is stored."""
        future: asyncio.Future[Decision | None] = asyncio.get_running_loop().create_future()
        self._put(
            _Job(
                input=item,
                apply=apply,
                future=future,
                on_decided=on_decided,
                input_ids=input_ids,
            )
        )
        decision = await asyncio.shield(future)
        assert decision is not None  # an input's job is resolved with its decision
        return decision

    def post(
        self,
        item: RuntimeInput,
        *,
        input_ids: tuple[str, ...] = (),
        on_refused: Callable[[InvalidInputError], None] | None = None,
    ) -> None:
        """Hand ``item`` to the controller without waiting (dropped once closed).
        ``on_refused`` hears of it if the controller refuses it (``InvalidInputError``); the
        refused input is consumed all the same."""
        if not self.closed:
            self._put(_Job(input=item, input_ids=input_ids, on_refused=on_refused))

    async def submit_foreign(self, payloads: Sequence[p.Payload]) -> None:
        """Store events the bot emits itself (after earlier inputs)."""
        future: asyncio.Future[Decision | None] = asyncio.get_running_loop().create_future()
        self._put(_Job(payloads=payloads, future=future))
        await asyncio.shield(future)

    def after_earlier(self, call: Callable[[], Awaitable[object]]) -> None:
        """Run ``call`` on the inbox's task once every earlier input is done."""
        self._put(_Job(call=call))

    async def close(self) -> None:
        """Take no more inputs; unless the bot failed, finish those handed in and store the
        remaining usage; then stop the task."""
        self.closed = True
        task = self._task
        if task is not None and not task.done() and not self.failed.is_set():
            try:
                await asyncio.wait_for(self._idle.wait(), timeout=10)
                await asyncio.wait_for(self._report_usage(), timeout=10)
            except (TimeoutError, Exception):
                logger.warning("bot %s: could not drain its inbox", self.session_id)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _put(self, job: _Job) -> None:
        self._jobs.append(job)
        self._idle.clear()
        self._wake.set()

    def _next_jobs(self) -> list[_Job]:
        """The next job, or the run of consecutive input jobs at the head (group commit)."""
        jobs = [self._jobs.popleft()]
        if jobs[0].input is not None:
            while self._jobs and self._jobs[0].input is not None and len(jobs) < MAX_BATCH:
                jobs.append(self._jobs.popleft())
        return jobs

    async def _run(self) -> None:
        while True:
            if not self._jobs:
                if self._usage_due:
                    # Usage events are stored when nothing else waits (never ahead of an input).
                    self._usage_due = False
                    self._put(_Job(call=self._report_usage))
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
                    if job.call is not None:
                        await job.call()
                    else:
                        await self._writer.append(job.payloads)
                    _resolve(job, None)
            except (LeaseLost, BotFailure) as exc:
                if self.failure is None:
                    self.failure = exc
                self.failed.set()
                for job in jobs:
                    _resolve(job, exc)
                self._idle.set()
                return
            except Exception as exc:
                logger.exception("bot %s: input failed", self.session_id)
                for job in jobs:
                    _resolve(job, exc)

    async def _process_inputs(self, jobs: list[_Job]) -> None:
        """Decide on a run of inputs, store all their events in one write, then resolve and
        apply each in order."""
        outcomes = await self._decide(jobs)
        for job, decided in zip(jobs, outcomes, strict=True):
            outcome: Decision | Exception = decided
            if isinstance(outcome, Decision):
                try:
                    if job.apply:
                        await self._follower.apply(outcome.effects)
                    assert job.input is not None
                    node = self._journal.controller.state.current_node_id
                    if node != self._usage_node:
                        self._usage_node = node
                        self._usage_due = True
                    self._follower.decided(job.input, outcome)
                except Exception as exc:
                    logger.exception("bot %s: applying effects failed", self.session_id)
                    outcome = exc
            elif isinstance(outcome, InvalidInputError) and job.on_refused is not None:
                job.on_refused(outcome)
            _resolve(job, outcome)

    async def _decide(self, jobs: list[_Job]) -> list[Decision | Exception]:
        """The controller's decisions on ``jobs``' inputs, stored (module docstring)."""
        self._stats.inputs += len(jobs)
        for attempt in range(CONFLICT_ATTEMPTS):
            outcomes: list[Decision | Exception] = []
            for job in jobs:
                assert job.input is not None
                try:
                    decision = self._journal.controller.handle(job.input)
                except Exception as exc:  # a malformed input: the controller rolled back
                    outcomes.append(exc)
                    continue
                outcomes.append(decision)
                if job.on_decided is not None and attempt == 0:
                    job.on_decided(decision)
            decisions = [o for o in outcomes if isinstance(o, Decision)]
            consumed = tuple(i for job in jobs for i in job.input_ids)
            try:
                await self._writer.record(decisions, consumed)
                return outcomes
            except LogChanged:
                # Someone else wrote to the log. If it was another bot, stop; otherwise fold
                # its events in and decide again.
                await self._writer.fold_in_other_writer()
                self._stats.resyncs += 1
            except DecisionRefused as refused:
                await self._writer.rebuild()
                if len(jobs) == 1:
                    if jobs[0].input_ids:  # consumed all the same: never fed again
                        await self._writer.record([], jobs[0].input_ids)
                    return [refused]
                # One input's events broke a rule: decide on each alone.
                singles: list[Decision | Exception] = []
                for job in jobs:
                    singles += await self._decide([job])
                return singles
        raise BotFailure(f"session {self.session_id}: the log keeps changing under the bot")

    async def _report_usage(self) -> None:
        payloads = self._usage.take_events()
        if payloads:
            await self._writer.append(payloads)
