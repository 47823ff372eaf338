"""The examiner's effect applier: the controller's effects as Pipecat frames and flow nodes.

:class:`EffectApplier` carries out a stored decision's effects, in order:

* ``Speak`` → an :class:`~bot.pipeline.ExaminerSpeakFrame` (validated text, to TTS verbatim;
  a closing is not interruptible); the speech reporter is told to expect the utterance.
* ``EnterNode`` → the compiled node, driven (no LLM run on entry: the controller's opening
  follows as ``Speak`` and is also put in the node's context); ``EnterBootNode`` → the silent
  boot node; ``EnterAdminNode`` / ``ReturnToNode`` → the admin node and back
  (:meth:`~EffectApplier.entry_config` folds the entry's ``Speak``/``PromptLlm`` into the node).
* ``InjectContext`` → a context message; ``PromptLlm`` → an instruction and an LLM run (one
  re-run spent, ``bot.rerun_budget``); ``AdjustSpeech`` → the transport's speech controls.
* ``EndSession`` → :class:`PipelineEnd`: the pipeline ends once the closing has been spoken, at
  the latest :data:`END_GRACE_SECONDS` later.

Inside a ``report_observation`` call the observation sink (``bot.observation_sink``) applies the
effects itself, through the same methods.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Literal

from pipecat.flows import NodeConfig
from pipecat.frames.frames import EndFrame, Frame, LLMMessagesAppendFrame

from bot.flow_nodes import FlowHydrator
from bot.pipeline import BotIO, ExaminerPipeline, ExaminerSpeakFrame
from bot.rerun_budget import RerunBudget
from ioa.runtime import (
    AdjustSpeech,
    Effect,
    EndSession,
    EnterAdminNode,
    EnterBootNode,
    EnterNode,
    InjectContext,
    PromptLlm,
    ReturnToNode,
    Speak,
)

if TYPE_CHECKING:
    from pipecat.processors.aggregators.llm_context import LLMStandardMessage

logger = logging.getLogger(__name__)

ENTRY_EFFECTS: Final = (EnterNode, EnterBootNode, EnterAdminNode, ReturnToNode)
END_GRACE_SECONDS: Final = 30.0
"""After ``EndSession``, end the pipeline at the latest this long after (closing not reported)."""


MessageRole = Literal["system", "developer", "user"]
"""Who a message the bot adds to the LLM context speaks as."""


def message(role: MessageRole, content: str) -> LLMStandardMessage:
    """An LLM context message (Pipecat types these as the OpenAI SDK's message params)."""
    if role == "user":
        return {"role": "user", "content": content}
    if role == "developer":
        return {"role": "developer", "content": content}
    return {"role": "system", "content": content}


class PipelineEnd:
    """Ends the pipeline after ``EndSession`` once nothing is being spoken (module docstring)."""

    def __init__(self) -> None:
        self._pipeline: ExaminerPipeline | None = None
        self._requested = False
        self._queued = False
        self._timer: asyncio.TimerHandle | None = None

    def attach(self, pipeline: ExaminerPipeline) -> None:
        self._pipeline = pipeline

    def request(self) -> None:
        """The controller ended the session: end now if nothing is being spoken, else after
        the closing (:meth:`maybe_end`) or the grace period."""
        self._requested = True
        self._timer = asyncio.get_running_loop().call_later(END_GRACE_SECONDS, self._end_now)
        self.maybe_end()

    def maybe_end(self) -> None:
        """End the pipeline if the end was requested and the speech reporter is idle."""
        if (
            self._requested
            and not self._queued
            and self._pipeline is not None
            and self._pipeline.reporter.idle
        ):
            self._end_now()

    def _end_now(self) -> None:
        if self._queued or self._pipeline is None:
            return
        self._queued = True
        asyncio.get_running_loop().create_task(self._pipeline.worker.queue_frame(EndFrame()))

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


class EffectApplier:
    """See the module docstring. ``node_has_tool``: the current node offers
    ``report_observation`` (the LLM may only run at such a node)."""

    def __init__(
        self, *, hydrator: FlowHydrator, reruns: RerunBudget, session_id: uuid.UUID
    ) -> None:
        self.hydrator = hydrator
        self._reruns = reruns
        self._session_id = session_id
        self.pipeline: ExaminerPipeline | None = None
        self.io: BotIO | None = None
        self.node_has_tool = False
        self._flow_ready = False
        self.ending = PipelineEnd()

    def attach(self, pipeline: ExaminerPipeline, io: BotIO) -> None:
        """Connect the built pipeline."""
        self.pipeline = pipeline
        self.io = io
        self.ending.attach(pipeline)

    async def apply(self, effects: Sequence[Effect]) -> None:
        """Apply a decision's effects in order (outside a tool call)."""
        remaining = list(effects)
        while remaining:
            effect = remaining.pop(0)
            if isinstance(effect, ENTRY_EFFECTS):
                config, remaining, has_tool = await self.entry_config(effect, remaining)
                await self.set_node(config, has_tool=has_tool)
            elif isinstance(effect, PromptLlm):
                await self.prompt(effect.instruction)
            else:
                await self.apply_one(effect)

    async def entry_config(
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
            if effect.starts_exam:
                await self._start_answers()
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
            await self.speak(speak, append_to_context=False)
        if prompt is not None and isinstance(effect, EnterBootNode | ReturnToNode):
            rest.insert(0, PromptLlm(prompt))
        return config, rest, bool(config.get("functions"))

    async def _start_answers(self) -> None:
        """The exam starts: what the candidate said before is not an answer. The transcript
        hook drops late transcripts of earlier speech, and the user aggregator forgets the
        words it was gathering (the node's context starts empty: ``EnterNode.starts_exam``)."""
        assert self.pipeline is not None
        self.pipeline.hook.answers_from(time.time())
        await self.pipeline.aggregators.user().reset()  # type: ignore[no-untyped-call]

    async def apply_one(self, effect: Effect) -> None:
        """Apply one effect that is not an entry's (a stray entry sets its node alone)."""
        if isinstance(effect, Speak):
            await self.speak(effect, append_to_context=True)
        elif isinstance(effect, InjectContext):
            await self.append_message(effect.role, effect.text, run_llm=False)
        elif isinstance(effect, PromptLlm):
            await self.prompt(effect.instruction)
        elif isinstance(effect, AdjustSpeech):
            controls = self.io.adjust_speech if self.io is not None else None
            if controls is None:
                logger.info(
                    "bot %s: speech %s=%s (no speech controls in this mode)",
                    self._session_id,
                    effect.setting,
                    effect.value,
                )
            else:
                for frame in controls(effect.setting, effect.value):
                    await self.push(frame)
        elif isinstance(effect, EndSession):
            self.ending.request()
        elif isinstance(effect, ENTRY_EFFECTS):  # a second entry inside a tool call
            config, _, has_tool = await self.entry_config(effect, [])
            await self.set_node(config, has_tool=has_tool)

    async def speak(self, effect: Speak, *, append_to_context: bool) -> None:
        """Queue the validated text for TTS (and the speech reporter to expect it)."""
        assert self.pipeline is not None
        frame = ExaminerSpeakFrame(
            text=effect.text, append_to_context=append_to_context, utterance_id=effect.utterance_id
        )
        interruptible = effect.purpose != "closing"
        frame.interruptible = interruptible
        self.pipeline.reporter.expect(effect.utterance_id, interruptible=interruptible)
        await self.push(frame)

    async def prompt(self, instruction: str) -> None:
        """Run the LLM on a developer instruction (spends a re-run)."""
        self._reruns.spend()
        await self.append_message("developer", instruction, run_llm=True)

    async def append_message(self, role: MessageRole, text: str, *, run_llm: bool) -> None:
        """Add a message to the LLM context (and run the LLM on it if ``run_llm``)."""
        await self.push(LLMMessagesAppendFrame(messages=[message(role, text)], run_llm=run_llm))

    async def set_node(self, config: NodeConfig, *, has_tool: bool) -> None:
        """Make ``config`` the flow's node (the first one initialises the flow)."""
        assert self.pipeline is not None
        flow = self.pipeline.flow_manager
        self.node_has_tool = has_tool
        if not self._flow_ready:
            self._flow_ready = True
            await flow.initialize(config)
        else:
            await flow.set_node_from_config(config)

    async def push(self, frame: Frame) -> None:
        """Queue ``frame`` at the head of the pipeline."""
        assert self.pipeline is not None
        await self.pipeline.worker.queue_frame(frame)
