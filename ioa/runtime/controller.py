"""The runtime controller: the deterministic examiner's brain (chapter 07 §2, §5; our 03 chapter).

:class:`RuntimeController` is a pure state machine. :meth:`RuntimeController.handle` takes one
input (:mod:`ioa.runtime.inputs`) and returns a :class:`Decision`: the events it emitted (chapter
05 envelopes, ``seq`` assigned, already applied to the state), the effects for the bot
(:mod:`ioa.runtime.effects`), and the result the LLM's tool call gets. The clock and the
randomness are injected; the same package, session id, inputs and clock readings always give
the same decisions, byte for byte.

Every input first fires the timers that are due. If handling an input fails unexpectedly, the
state is rebuilt from the events of the earlier inputs (the failed step's events are dropped,
never returned), a ``system_error`` is emitted and the LLM gets a canned fallback (chapter 07
§11).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ioa.compiler import CompiledFlow
from ioa.errors import ControllerSetupError, InvalidInputError
from ioa.events import EventEnvelope
from ioa.events import payloads as p
from ioa.runtime import absence, activity, held_edge
from ioa.runtime import inputs as i
from ioa.runtime.clock import Clock
from ioa.runtime.command_handlers import dispatch
from ioa.runtime.commands import canonical
from ioa.runtime.corrections import handle_correction
from ioa.runtime.effects import Effect
from ioa.runtime.evolve import apply_event
from ioa.runtime.grounding import attach_material
from ioa.runtime.ids import Rng, SeededRng
from ioa.runtime.instructions import issue
from ioa.runtime.interruption import handle_interruption
from ioa.runtime.lifecycle import (
    bot_ready,
    bot_resumed,
    candidate_ready,
    proctor_action,
    utterance_finished,
    utterance_started,
    utterances_dropped,
)
from ioa.runtime.observe import FALLBACK_RESULT, handle_observation
from ioa.runtime.outage import fault, fault_cleared
from ioa.runtime.pacing import fire_due_timers, next_deadline
from ioa.runtime.plan import ExamPlan
from ioa.runtime.state import RuntimeState
from ioa.runtime.step import Outbox, PendingUtterance, Step
from ioa.runtime.timing import Timing
from ioa.runtime.transcripts import handle_transcript, handle_unheard
from ioa.runtime.turn_faults import turn_fault
from ioa.schema import AssessmentPackage

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Decision:
    """What one input produced."""

    events: tuple[EventEnvelope, ...] = ()
    effects: tuple[Effect, ...] = ()
    result: Mapping[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """A short word for what happened (``continue``, ``transitioned``, ``ignored``...)."""
        return str(self.result.get("status", "ok"))


class RuntimeController:
    """One session's controller. See the module docstring."""

    def __init__(
        self,
        package: AssessmentPackage | ExamPlan,
        *,
        session_id: str,
        clock: Clock,
        rng: Rng | None = None,
        flow: CompiledFlow | None = None,
        timing: Timing | None = None,
    ) -> None:
        if not session_id or len(session_id) > 200:
            raise ControllerSetupError("session_id must be 1-200 characters")
        self.plan = package if isinstance(package, ExamPlan) else ExamPlan(package, flow)
        self.clock = clock
        self.rng: Rng = rng if rng is not None else SeededRng(session_id)
        self.timing = timing if timing is not None else Timing()
        self.state = RuntimeState(session_id=session_id)
        self.outbox = Outbox()
        self.log: list[EventEnvelope] = []

    # --- queries --------------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.state.session_id

    @property
    def completed(self) -> bool:
        """True once ``exam_completed`` was emitted."""
        return self.state.completed

    def next_deadline_ms(self) -> int | None:
        """When the host should send the next :class:`~ioa.runtime.inputs.Tick` (epoch ms)."""
        step = self._step()
        return next_deadline(step)

    # --- the one entry point --------------------------------------------------------------------

    def handle(self, item: i.RuntimeInput) -> Decision:
        """Process one input (module docstring)."""
        step = self._step()
        applied = self.state.events_applied
        outbox = (dict(self.outbox.pending), self.outbox.serial)
        try:
            if not isinstance(item, i.BotReady):
                absence.reconcile(step)
            if not isinstance(item, i.BotReady) and not _bot_restart(item):
                fire_due_timers(step, until=_handed_over_at(step, item))
            if not isinstance(item, TURN_TAKING):
                held_edge.settle_first(step)
            self._route(step, item)
        except InvalidInputError:
            self._rollback(applied, outbox)
            raise
        except Exception as exc:
            logger.exception("runtime controller failed on %s", type(item).__name__)
            self._rollback(applied, outbox)
            return self._failure(item, exc)
        self.log.extend(step.events)
        return Decision(tuple(step.events), tuple(step.effects), dict(step.result))

    def _step(self) -> Step:
        return Step(self.plan, self.state, self.rng, self.outbox, self._now(), timing=self.timing)

    def _now(self) -> int:
        now = self.clock.now_ms()
        last = self.state.last_event_ms
        return now if last is None or now >= last else last

    def _route(self, step: Step, item: i.RuntimeInput) -> None:
        if isinstance(item, i.Observation):
            handle_observation(step, item.args, reopenable=item.reopenable)
        elif isinstance(item, i.TranscriptSegment):
            if item.speaker == "candidate" and item.text.strip():
                held_edge.drop(step)
            handle_transcript(step, item)
        elif isinstance(item, i.Command):
            self._command(step, item)
        elif isinstance(item, i.Tick):
            step.result.setdefault("status", "tick")
        elif isinstance(item, i.UtteranceStarted):
            utterance_started(step, item.utterance_id, item.at_ms)
        elif isinstance(item, i.UtteranceFinished):
            utterance_finished(step, item)
        elif isinstance(item, i.UtterancesDropped):
            utterances_dropped(step, item)
        elif isinstance(item, i.BotResumed):
            held_edge.settle(step)
            bot_resumed(step)
        elif isinstance(item, i.TurnSettled):
            held_edge.settle(step)
        elif isinstance(item, i.ProctorInstruction):
            issue(step, item)
        elif isinstance(item, i.ProctorAction):
            proctor_action(step, item)
        elif isinstance(item, i.CandidateActivity):
            activity.record(step, item)
            if item.activity == "speaking" and item.active:
                held_edge.drop(step)
        elif isinstance(item, i.BotReady):
            bot_ready(step, item.input_mode)
        elif isinstance(item, i.CandidateReady):
            candidate_ready(step, await_authorisation=item.await_authorisation)
        elif isinstance(item, i.Fault):
            fault(step, item)
        elif isinstance(item, i.FaultCleared):
            fault_cleared(step, item)
        elif isinstance(item, i.CandidateInterrupted):
            handle_interruption(step, item)
        elif isinstance(item, i.SpeechUnheard):
            held_edge.drop(step)  # the candidate went on, though no words were heard
            handle_unheard(step, item)
        elif isinstance(item, i.TranscriptCorrection):
            held_edge.drop(step)  # decided on words the candidate says were misheard
            handle_correction(step, item)
        elif isinstance(item, i.TurnFault):
            turn_fault(step, item)
        elif isinstance(item, i.AttachMaterial):
            attach_material(step, item)
        else:  # pragma: no cover - the union is closed
            raise InvalidInputError(f"unknown input {type(item).__name__}")

    def _command(self, step: Step, item: i.Command) -> None:
        """A command envelope: proctor pause/resume/end are proctor actions, the rest are
        candidate commands."""
        if not item.command_id or len(item.command_id) > 200:
            raise InvalidInputError("commandId must be 1-200 characters")
        command = canonical(item.type)
        if command is None:
            raise InvalidInputError(f"unknown command type {item.type!r}")
        payload = dict(item.payload)
        if item.source == "proctor" and item.command_id not in step.state.commands_seen:
            if item.type in ("pause", "resume"):
                reason = payload.get("reason")
                proctor_action(
                    step,
                    i.ProctorAction(
                        "pause" if item.type == "pause" else "resume",
                        reason=reason if isinstance(reason, str) else None,
                        command_id=item.command_id,
                    ),
                )
                return
            if item.type == "end_exam_requested":
                payload.setdefault("requestedBy", "proctor")
        dispatch(
            step,
            command_id=item.command_id,
            command=command,
            spelled=item.type,
            origin="envelope",
            payload=payload,
        )

    # --- failure handling -----------------------------------------------------------------------

    def _rollback(self, applied: int, outbox: tuple[dict[str, PendingUtterance], int]) -> None:
        """Rebuild the state from the events returned before the failed step."""
        self.state = _rebuild(self.plan, self.state.session_id, self.log[:applied])
        self.outbox.pending, self.outbox.serial = outbox

    def _failure(self, item: i.RuntimeInput, exc: Exception) -> Decision:
        step = self._step()
        step.emit(
            p.SystemErrorPayload(
                code="controller_failure",
                message=f"{type(exc).__name__} while handling {type(item).__name__}"[:2000],
                component="runtime_controller",
                severity="error",
                details={"error": str(exc)[:1000]},
            )
        )
        self.log.extend(step.events)
        result = dict(FALLBACK_RESULT) if isinstance(item, i.Observation) else {"status": "error"}
        return Decision(tuple(step.events), (), result)

    # --- replay ---------------------------------------------------------------------------------

    @classmethod
    def restore(
        cls,
        package: AssessmentPackage | ExamPlan,
        *,
        session_id: str,
        events: Iterable[EventEnvelope],
        clock: Clock,
        rng: Rng | None = None,
        flow: CompiledFlow | None = None,
        timing: Timing | None = None,
    ) -> RuntimeController:
        """A controller whose state is rebuilt from a session's stored events (how a crashed
        bot resumes). Utterances that were in flight are not restored."""
        controller = cls(
            package, session_id=session_id, clock=clock, rng=rng, flow=flow, timing=timing
        )
        controller.log = list(events)
        controller.state = _rebuild(controller.plan, session_id, controller.log)
        controller.outbox.serial = sum(
            1 for e in controller.log if isinstance(e.payload, p.ExaminerUtteranceStarted)
        )
        return controller


def _rebuild(plan: ExamPlan, session_id: str, events: Iterable[EventEnvelope]) -> RuntimeState:
    state = RuntimeState(session_id=session_id)
    for event in events:
        apply_event(state, event, plan)
    return state


TURN_TAKING: Final = (
    i.Observation,
    i.TurnSettled,
    i.TranscriptSegment,
    i.CandidateActivity,
    i.Tick,
    i.UtteranceStarted,
    i.UtteranceFinished,
    i.UtterancesDropped,
    i.CandidateInterrupted,
    i.SpeechUnheard,
    i.TranscriptCorrection,
    i.BotResumed,
    i.AttachMaterial,  # an upload handed over is no event of the conversation
)
"""Inputs of the spoken turn-taking itself. Any other input (a fault, a proctor's action, a
command, a correction...) settles a held completion first (:mod:`ioa.runtime.held_edge`): the
answer is over when something else happens, as if the edge had been taken when it was decided."""


def _handed_over_at(step: Step, item: i.RuntimeInput) -> int | None:
    """When the candidate handed ``item`` over (epoch ms), for a candidate turn that says so
    (``TranscriptSegment.sent_ms``, else its ``end_ms``); ``None`` for anything else. Timers due
    after that instant wait for the next input: the time the turn spent on its way (the inbox
    while no bot ran, the recogniser, a loaded pipeline) is not the candidate's silence."""
    if not isinstance(item, i.TranscriptSegment) or item.speaker != "candidate":
        return None
    handed = item.sent_ms if item.sent_ms is not None else item.end_ms
    opened = step.state.opened_ms
    if handed is None or opened is None:
        return None
    return opened + handed


def _bot_restart(item: i.RuntimeInput) -> bool:
    """A restarted bot reports its own fault: the time it was down is not the candidate's, so
    timers that came due meanwhile (silence above all) do not fire before the fault pauses the
    exam; the pause and the resume that follows set them again. Nor before a bot that took the
    session over says so (``BotResumed``): what the candidate sent meanwhile is read next, and
    a timer due after it waits for it (``_handed_over_at``)."""
    return isinstance(item, i.BotResumed) or (isinstance(item, i.Fault) and item.component == "bot")
