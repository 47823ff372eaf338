"""The examiner core: the runtime controller as the bot's brain, wired into Pipecat.

:class:`ExaminerCore` builds the examiner's roles, connects them to the pipeline and to each
other, and is the one object the session runner holds. Each role is a small class in its own
module; the seams between them are Protocols, so each depends only on what it uses:

* **The input actor** (:class:`~bot.examiner_inbox.DecisionInbox`): every controller input goes
  through one task, one at a time: decided, stored (:class:`~bot.journal_writer.JournalWriter`),
  then applied. Nothing is applied that was not stored first.
* **The effect applier** (:class:`~bot.effects.EffectApplier`): a decision's effects as frames
  (speech, context, LLM runs) and flow nodes; the pipeline's end after ``EndSession``.
* **The observation sink** (:class:`~bot.observation_sink.ObservationHandler`): the
  ``report_observation`` handler. The core is the hydrator's
  :class:`~bot.flow_nodes.ObservationSink` and hands each call to it.
* **The pipeline adapter** (:class:`~bot.pipeline_adapter.PipelineAdapter`): the
  :class:`~bot.pipeline.PipelineCore` the processors report to (candidate turns, transcripts,
  speech, activity, LLM requests and responses, usage).
* **Channel inputs** (:class:`~bot.channel_inputs.ChannelInputs`): the session's bot group
  (typed answers, commands, proctor inputs) and the voice transport's presence.
* **Faults** (:class:`~bot.examiner_faults.FaultWatch`): failed turns, provider errors and a
  failing handler, as controller inputs (chapter 07 §11). Failing persistence crashes the run,
  and the runner resumes from the stored log.

After each stored and applied decision the core schedules the controller's next timer (through
the durable inbox, :class:`~bot.candidate_inbox.CandidateInbox`, so no timer overtakes an
answer already sent), closes a turn the runtime answered itself, and ends the pipeline once the
closing has been spoken.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Literal

from bot import transport_presence
from bot.activity import ComposingWatch
from bot.candidate_inbox import CandidateInbox, unanswered_turn
from bot.channel_inputs import ChannelInputs
from bot.conf import BotSettings
from bot.effects import ENTRY_EFFECTS, EffectApplier
from bot.examiner_faults import FaultWatch
from bot.examiner_inbox import DecisionInbox
from bot.examiner_stats import CoreStats
from bot.flow_nodes import FlowHydrator, ObservationDecision
from bot.journal import DbThreads, Journal, resume_messages
from bot.journal_writer import JournalWriter
from bot.lease import Lease
from bot.observation_sink import ObservationHandler
from bot.pipeline import BotIO, ExaminerPipeline
from bot.pipeline_adapter import PipelineAdapter
from bot.rerun_budget import RerunBudget
from bot.turn_settlement import TurnSettlement
from bot.usage import UsageLedger
from ioa.events import EventEnvelope, ExamState
from ioa.events import payloads as p
from ioa.runtime import (
    AttachMaterial,
    BotReady,
    BotResumed,
    Decision,
    Effect,
    Fault,
    FaultCleared,
    RuntimeController,
    RuntimeInput,
    TurnSettled,
    UtteranceFinished,
)
from ioa.runtime.grounding import has_grounded_nodes, passage_additions
from sessions.selectors import materials_for_bot

logger = logging.getLogger(__name__)

NOT_STARTED = (ExamState.SCHEDULED, ExamState.SCAFFOLDING, ExamState.READY)
"""Exam states in which a resumed bot waits in the silent boot node."""


def handed_over(events: Sequence[EventEnvelope]) -> bool:
    """Whether the session's previous bot handed it over in order (a drain: its last
    ``bot_handover`` is ``released`` and no bot has ``resumed`` since), so the next bot's start
    is no fault (issue #33)."""
    for event in reversed(events):
        if isinstance(event.payload, p.BotHandover):
            return event.payload.phase == "released"
    return False


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
        self.usage_ledger = usage
        self.session_id: uuid.UUID = journal.session_id
        self.stats = CoreStats()
        writer = JournalWriter(journal=journal, db=db, lease=lease, stats=self.stats)
        self.writer = writer
        self.decisions = DecisionInbox(writer=writer, stats=self.stats, usage=usage, follower=self)
        self.failed: asyncio.Event = self.decisions.failed
        self.faults = FaultWatch(
            decisions=self.decisions,
            stats=self.stats,
            config=config,
            language=journal.artifacts.package.metadata.language,
        )
        self.turns = self.faults.turns
        reruns = RerunBudget(config.max_llm_reruns, self.turns)
        self.hydrator = self._hydrator(journal, reruns)
        self.effects = EffectApplier(
            hydrator=self.hydrator, reruns=reruns, session_id=self.session_id
        )
        self.observations = ObservationHandler(
            decisions=self.decisions,
            effects=self.effects,
            turns=self.turns,
            reruns=reruns,
            stats=self.stats,
        )
        self.inbox = CandidateInbox(self)
        self.adapter = PipelineAdapter(
            decisions=self.decisions,
            frames=self.effects,
            writer=writer,
            turns=self.turns,
            reruns=reruns,
            stats=self.stats,
            usage=usage,
            inbox=self.inbox,
            known_tools=frozenset(self.hydrator.flow.get("functions", {})),
            provider_worked=self.faults.provider_worked,
            provider_failed=self.faults.provider_failed,
        )
        self.composing = ComposingWatch(self.adapter.candidate_activity)
        self.channel = ChannelInputs(
            decisions=self.decisions,
            frames=self.effects,
            writer=writer,
            inbox=self.inbox,
            composing=self.composing,
        )
        self._tick: asyncio.TimerHandle | None = None

    def _hydrator(self, journal: Journal, reruns: RerunBudget) -> FlowHydrator:
        """The flow's node builder, bound to this core. A session whose package has a
        grounded node gets one without summaries (docs/spec/candidate-materials.md §6.1)."""
        return FlowHydrator(
            journal.artifacts.flow,
            self,
            on_error=self.faults.handler_failed,
            retry_after_error=reruns.may_rerun,
            summaries=not has_grounded_nodes(journal.artifacts.package),
        )

    @property
    def controller(self) -> RuntimeController:
        return self.journal.controller

    @property
    def closed(self) -> bool:
        return self.decisions.closed

    @property
    def failure(self) -> BaseException | None:
        """Why the bot cannot go on (once ``failed`` is set)."""
        return self.decisions.failure

    def attach(self, pipeline: ExaminerPipeline, io: BotIO) -> None:
        """Connect the built pipeline (error frames become faults)."""
        self.effects.attach(pipeline, io)
        self.faults.attach(pipeline, io)
        transport_presence.watch(io.transport, self.channel.media_connection)

    def settle_turns(self, settlement: TurnSettlement) -> None:
        """Voice: observations say whether the spoken turn may still go on, and the bot sends
        ``TurnSettled`` when one that ended on the reply pause has stayed over (runtime
        semantics §18, ``bot.turn_settlement``)."""
        self.observations.settlement = settlement
        settlement.bind(lambda: self.decisions.post(TurnSettled()))

    def start(self) -> None:
        """Start the inbox (call on the bot's event loop)."""
        self.decisions.start()

    async def open(self, *, handover: bool = False) -> None:
        """Bring the flow to where the session is: a new session gets ``BotReady`` (the boot
        node); a restored one is resumed at its node and goes through a bot fault and its
        clearing (``recovery_started`` … the question is asked again), unless this bot took
        the session over from one that stopped in order (``handover``: the candidate's new
        audio connection, or a drain), which is no fault: the exam goes on where it is (a
        candidate coming back to a paused exam is welcomed back by the controller), and a
        question the old bot had queued but not begun to say is asked (``BotResumed``)."""
        state = self.controller.state
        io = self.effects.io
        moved = handed_over(self.controller.log)
        if self.journal.restored_events == 0:
            text = io is None or io.tts is None
            await self.decisions.submit(BotReady("text" if text else "voice"))
            await self.attach_materials()
            await self.inbox.poll()  # "ready" or answers sent before this bot listened
            return
        unanswered = unanswered_turn(self.controller.log, state.current_node_id)
        if state.current_node_id is None or state.exam_state in NOT_STARTED:
            await self.effects.set_node(self.hydrator.boot_node(), has_tool=False)
        else:
            node_id = state.current_node_id
            additions = passage_additions(self.controller.state, self.controller.plan.node(node_id))
            history = [{"role": "developer", "content": text} for text in additions]
            history += resume_messages(self.controller.log, node_id)
            config = self.hydrator.driven_node(
                node_id, context_strategy="reset", extra_messages=history
            )
            await self.effects.set_node(config, has_tool=bool(config.get("functions")))
        if moved:
            # A drain moved the session here (issue #33): recorded, no fault; what the old bot
            # had queued and not begun died with it, so a question not yet heard is asked.
            await self.decisions.submit_foreign([p.BotHandover(phase="resumed")])
        if moved or handover:
            await self.decisions.submit(BotResumed())
        else:
            await self.decisions.submit(
                Fault(
                    component="bot",
                    severity="transient",
                    detail="the examiner bot restarted; resuming from the session log",
                )
            )
            await self.decisions.submit(FaultCleared(component="bot"))
        if unanswered and io is not None and io.text_turns and self.adapter.llm_allowed():
            # The answer was stored, the bot died before answering it: answer it now.
            await self.effects.append_message("user", unanswered, run_llm=True)
        await self.attach_materials()
        # What the candidate sent while no bot ran is read now, before any timer of this bot
        # can fire (no silence prompt for a candidate who has answered), not at the first
        # heartbeat.
        await self.inbox.poll()

    async def attach_materials(self) -> None:
        """Hand the runtime every stored material of the session (``AttachMaterial``, after
        ``BotReady`` and before the candidate is ready; docs/spec/candidate-materials.md §3).
        A resumed bot hands them over again: the runtime ignores an id it was given."""
        stored = await self.db.run(self.session_id, materials_for_bot, session_id=self.session_id)
        for material in stored:
            kind: Literal["submission", "report"] = (
                "report" if material.kind == "report" else "submission"
            )
            await self.decisions.submit(AttachMaterial(material.material_id, kind, material.text))

    async def hand_over(self) -> None:
        """The host drains (SIGTERM): after :meth:`close`, store ``bot_handover`` ``released``
        as this run's last event, so the bot that takes the session over resumes it without a
        fault (:func:`handed_over`). Not stored if the exam is over or the log is not ours."""
        log = self.controller.log
        if self.controller.completed or not any(isinstance(e.payload, p.BotReady) for e in log):
            return  # over, or never started: nothing to hand over (the next bot starts it)
        try:
            await self.writer.append([p.BotHandover(phase="released")])
        except Exception as exc:  # another bot holds the session: its successor decides
            logger.warning("bot %s: the handover was not recorded: %s", self.session_id, exc)

    async def close(self) -> None:
        """Stop timers, drain the inbox, report the remaining usage."""
        if self.decisions.closed:
            return
        self.faults.close()
        self.composing.close()
        self.effects.ending.close()
        if self._tick is not None:
            self._tick.cancel()
        await self.decisions.close()

    # --- the seams: ObservationSink, InboxOwner, the inbox's Follower ---------------------------

    async def on_observation(
        self, args: Mapping[str, object], *, node_id: str
    ) -> ObservationDecision:
        """The ``report_observation`` handler (``bot.observation_sink``)."""
        return await self.observations.on_observation(args, node_id=node_id)

    async def on_channel_input(self, kind: str, fields: Mapping[str, object]) -> None:
        """One message from the session's bot group (``bot.channel_inputs``)."""
        await self.channel.on_channel_input(kind, fields)

    def post(self, item: RuntimeInput, *, input_ids: tuple[str, ...] = ()) -> None:
        """Hand ``item`` to the controller without waiting."""
        self.decisions.post(item, input_ids=input_ids)

    async def apply(self, effects: Sequence[Effect]) -> None:
        """Apply a stored decision's effects (``bot.effects``)."""
        await self.effects.apply(effects)

    def decided(self, item: RuntimeInput, decision: Decision) -> None:
        """A decision was stored and applied: schedule the next timer, close a turn the
        runtime answered itself, end the pipeline after the closing (module docstring)."""
        self._schedule_tick()
        state = self.controller.state
        turns = self.turns
        if turns.owed and (state.completed or state.exam_state is not ExamState.IN_PROGRESS):
            turns.answered()  # paused or over: no reply is owed any more
        elif turns.owed and any(isinstance(e, ENTRY_EFFECTS) for e in decision.effects):
            turns.answered()  # the runtime moved on (a timer): the new part's opening
        if isinstance(item, UtteranceFinished):
            self.effects.ending.maybe_end()

    def _schedule_tick(self) -> None:
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None
        if self.decisions.closed or self.controller.completed:
            return
        deadline = self.controller.next_deadline_ms()
        if deadline is None:
            return
        delay = max(0.0, (deadline - self.journal.clock.now_ms()) / 1000) + 0.005
        self._tick = asyncio.get_running_loop().call_later(delay, self.inbox.tick_due)
