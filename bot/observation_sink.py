"""The ``report_observation`` handler: the LLM's report goes to the controller (no Pipecat).

:class:`ObservationHandler` hands the LLM's arguments to the controller (through the inbox,
after every earlier input) and returns what it decided (an
:class:`~bot.flow_nodes.ObservationDecision`): stay (the validated text is spoken; the LLM does
not run again unless the controller asks it to, ``PromptLlm``, within the re-run budget), or
move (Pipecat Flows performs the transition once the tool result is in the context). The LLM
never chooses the node and never speaks on its own.

Exactly one report answers a turn (``bot.turn_deadline``): a second report in the same
response, or one that arrives after the turn was answered, is ignored and stored as a model
fault (``model_extra_report`` / ``model_late_report``, ``bot.examiner_faults``). A response
with text but no tool call is not an observation: its text is never spoken (the turn watch
treats it as an unusable reply, ``bot.pipeline_adapter``).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Protocol

from pipecat.flows import NodeConfig

from bot.effects import ENTRY_EFFECTS
from bot.examiner_faults import record_model_fault
from bot.examiner_inbox import Decisions
from bot.examiner_stats import CoreStats
from bot.flow_nodes import ObservationDecision
from bot.rerun_budget import RerunBudget
from bot.turn_deadline import TurnWatch
from bot.turn_settlement import TurnSettlement
from ioa.runtime import Decision, Effect, Observation, PromptLlm, Speak

logger = logging.getLogger(__name__)


class ToolEffects(Protocol):
    """What the handler needs to apply a decision inside the tool call
    (``bot.effects.EffectApplier``)."""

    node_has_tool: bool

    async def speak(self, effect: Speak, *, append_to_context: bool) -> None: ...

    async def apply_one(self, effect: Effect) -> None: ...

    async def entry_config(
        self, effect: Effect, following: Sequence[Effect]
    ) -> tuple[NodeConfig, list[Effect], bool]: ...


class ObservationHandler:
    """See the module docstring (an :class:`~bot.flow_nodes.ObservationSink`)."""

    def __init__(
        self,
        *,
        decisions: Decisions,
        effects: ToolEffects,
        turns: TurnWatch,
        reruns: RerunBudget,
        stats: CoreStats,
    ) -> None:
        self._decisions = decisions
        self._effects = effects
        self._turns = turns
        self._reruns = reruns
        self._stats = stats
        self._session_id: uuid.UUID = decisions.session_id
        self._reported: tuple[int, int] | None = None
        """The request (``TurnWatch.request_id``) of the latest report handled: one report per
        LLM response."""
        self.settlement: TurnSettlement | None = None
        """Voice: whether the spoken turn answered may still go on (``bot.turn_settlement``):
        then the observation is ``reopenable`` and a completion is held (runtime semantics
        §18)."""

    async def on_observation(
        self, args: Mapping[str, object], *, node_id: str
    ) -> ObservationDecision:
        """Ask the controller about one ``report_observation`` call and do what it decided."""
        started = time.monotonic()
        self._stats.observations += 1
        request = self._turns.request_id
        if not self._turns.owed or request == self._reported:
            # Exactly one answer per turn: a second report in the same response, or one that
            # arrives after the turn was answered (by the fallback, a move, a pause).
            self._stats.late_observations += 1
            record_model_fault(
                self._decisions,
                "model_extra_report" if request == self._reported else "model_late_report",
                nodeId=node_id or None,
                request=self._turns.requests,
            )
            return ObservationDecision.stay(
                {"status": "ignored", "reason": "this turn was already answered"}, respond=False
            )
        self._reported = request
        reopenable = self.settlement is not None and self.settlement.unsettled
        decision = await self._decisions.submit(
            Observation(dict(args), reopenable=reopenable), apply=False
        )
        outcome = await self._outcome(decision)
        self._stats.observation_ms.append((time.monotonic() - started) * 1000)
        return outcome

    async def _outcome(self, decision: Decision) -> ObservationDecision:
        effects = list(decision.effects)
        result: dict[str, object] = dict(decision.result)
        entry = next((i for i, e in enumerate(effects) if isinstance(e, ENTRY_EFFECTS)), None)
        before = effects if entry is None else effects[:entry]
        instruction: str | None = None
        for effect in before:
            if isinstance(effect, PromptLlm):
                instruction = effect.instruction
            elif isinstance(effect, Speak) and entry is not None:
                # Said before leaving the node (the bridge): the next node's context starts
                # clean, so it is not written to the context.
                await self._effects.speak(effect, append_to_context=False)
            else:
                await self._effects.apply_one(effect)
        if entry is None:
            rerun = False
            if instruction is not None:
                result["instruction"] = instruction
                rerun = self._reruns.may_rerun()
            elif result.get("status") == "error":
                rerun = self._reruns.may_rerun()
            self._answered(decision, rerun=rerun, asked=instruction is not None)
            return ObservationDecision.stay(result, respond=rerun)
        self._turns.answered()
        config, rest, has_tool = await self._effects.entry_config(
            effects[entry], effects[entry + 1 :]
        )
        for effect in rest:
            await self._effects.apply_one(effect)
        self._effects.node_has_tool = has_tool
        return ObservationDecision.move(result, str(config["name"]), node_config=config)

    def _answered(self, decision: Decision, *, rerun: bool, asked: bool) -> None:
        """Whether the observation answered the owed turn (``bot.turn_deadline``): it did when
        something was said, or when the controller chose silence (thinking time, a pause);
        it did not when the arguments were rejected or an instruction was not run, and then,
        without a re-run, the turn fails now (the fallback answers it)."""
        if rerun:
            return
        spoke = any(isinstance(e, Speak) for e in decision.effects)
        if spoke or (decision.status != "error" and not asked):
            self._turns.answered()
        else:
            self._turns.fail(
                "llm_budget_exhausted",
                "the LLM's report was rejected and no re-run is left"
                if decision.status == "error"
                else "the runtime's instruction could not be run: no re-run is left",
            )
