"""Recovery handlers (POL-R*, decision 10; our 03 chapter §8).

A recovery *episode* starts with the first trigger of a scenario at a node
(``recovery_started``, new ``recoveryId``); every further trigger while it is open is another
attempt (another ``recovery_started`` with the same ``recoveryId``). When a trigger arrives
after ``maxAttempts`` attempts, the handler escalates. The episode ends with
``recovery_resolved``: the candidate recovered, the node was left, the exam ended, or a
``retry``/``rephrase`` escalation started a fresh episode.

Escalation: a ``policy_escalation`` transition of the node matching the escalation is taken
first (array order); otherwise ``skip_node`` forces the node's exit, ``pause_session`` pauses
the exam (the episode resolves on resume; a pause for low STT confidence is a *recognition
pause*, :data:`RECOGNITION_PAUSE`, that the candidate's next words end: issue #30),
``terminate`` ends the exam at the terminated (or,
for technical scenarios, technical-failure) end node, ``retry`` and ``rephrase`` start again.

Scenarios without a handler at the node: ``anxiety`` uses :data:`DEFAULT_HANDLERS` (calm
support, POL-008), ``off_topic`` too (the off-topic limit), ``network_issue`` too; silence,
unclear answers and low STT confidence have no recovery without a handler (low STT confidence
is then flagged for human review, EVD-010); a repetition loop is then only a
``guardrail_triggered`` warning (:mod:`ioa.runtime.repetition`) and an interruption is not
recorded (:mod:`ioa.runtime.interruption`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import texts
from ioa.runtime.effects import PromptLlm
from ioa.runtime.moves import (
    leave_node,
    resolve_recovery,
    stop_exam,
    take_edge,
)
from ioa.runtime.plan import NodePlan
from ioa.runtime.state import Episode
from ioa.runtime.step import Step
from ioa.runtime.texts import RuntimeTexts
from ioa.runtime.transitions import TurnFacts, first_match, forced_exit
from ioa.schema import (
    EndType,
    PolicyEscalationCondition,
    RecoveryAction,
    RecoveryEscalation,
    RecoveryHandler,
    RecoveryScenario,
)

S, A, E = RecoveryScenario, RecoveryAction, RecoveryEscalation

DEFAULT_HANDLERS: Final[dict[RecoveryScenario, RecoveryHandler]] = {
    S.ANXIETY: RecoveryHandler(
        scenario=S.ANXIETY, action=A.CALM_SUPPORT, maxAttempts=3, escalation=E.PAUSE_SESSION
    ),
    S.OFF_TOPIC: RecoveryHandler(
        scenario=S.OFF_TOPIC, action=A.GENTLE_REPROMPT, maxAttempts=2, escalation=E.SKIP_NODE
    ),
    S.NETWORK_ISSUE: RecoveryHandler(
        scenario=S.NETWORK_ISSUE,
        action=A.TECHNICAL_RECOVERY,
        maxAttempts=3,
        escalation=E.TERMINATE,
    ),
}
"""Handlers used when a node declares none for these scenarios (our 03 chapter §8)."""

ANXIETY_ACTIONS: Final = frozenset({A.CALM_SUPPORT, A.PAUSE_TIMER})
"""POL-008: the only actions allowed when the candidate is anxious."""

TECHNICAL: Final = frozenset({S.NETWORK_ISSUE, S.STT_LOW_CONFIDENCE})
RECOGNITION_PAUSE: Final = f"recovery_escalation:{S.STT_LOW_CONFIDENCE}"
"""The pause reason of a low-STT-confidence escalation: the candidate's next words end it
(``ioa.runtime.transcripts``), whatever the recogniser makes of them."""

ACTION_FIELDS: Final[dict[RecoveryAction, str]] = {
    A.GENTLE_REPROMPT: "gentle_reprompt",
    A.REPHRASE: "gentle_reprompt",
    A.CALM_SUPPORT: "calm_support",
    A.PAUSE_TIMER: "calm_support",
    A.TECHNICAL_RECOVERY: "technical_recovery",
}
"""Which :class:`~ioa.runtime.texts.RuntimeTexts` line a recovery action speaks."""


def action_text(lines: RuntimeTexts, action: RecoveryAction) -> str:
    """What ``action`` says in the exam's language (the gentle re-prompt for any other)."""
    return str(getattr(lines, ACTION_FIELDS.get(action, "gentle_reprompt")))


@dataclass(frozen=True, slots=True)
class Attempt:
    """One recovery attempt the caller now carries out (speaks ``action``'s text...)."""

    scenario: RecoveryScenario
    action: RecoveryAction
    number: int
    recovery_id: str


@dataclass(frozen=True, slots=True)
class Escalated:
    """The handler escalated; the step already did what the escalation says."""

    scenario: RecoveryScenario
    escalation: RecoveryEscalation
    left_node: bool


Outcome = Attempt | Escalated


def handler_for(step: Step, scenario: RecoveryScenario) -> RecoveryHandler | None:
    """The current node's handler for ``scenario``, else the default (if any)."""
    node = step.state.node
    declared = step.plan.node(node.node_id).handler(scenario) if node is not None else None
    handler = declared or DEFAULT_HANDLERS.get(scenario)
    if handler is not None and scenario is S.ANXIETY and handler.action not in ANXIETY_ACTIONS:
        handler = handler.model_copy(update={"action": A.CALM_SUPPORT})
    return handler


def _new_id(step: Step) -> str:
    return f"rec-{step.state.recoveries_started + 1:03d}"


def _start(
    step: Step,
    scenario: RecoveryScenario,
    handler: RecoveryHandler,
    trigger: str,
    episode: Episode | None,
) -> Attempt:
    node_id = step.state.current_node_id or "none"
    recovery_id = episode.recovery_id if episode else _new_id(step)
    number = (episode.attempts if episode else 0) + 1
    step.emit(
        p.RecoveryStarted(
            recoveryId=recovery_id,
            recoveryType=scenario.value,
            nodeId=node_id,
            triggerDescription=trigger,
            attempt=number,
            maxAttempts=handler.maxAttempts,
            action=handler.action,
        ),
        correlation_id=recovery_id,
    )
    return Attempt(scenario, handler.action, number, recovery_id)


def attempt(step: Step, scenario: RecoveryScenario, trigger: str) -> Outcome | None:
    """Record one trigger of ``scenario``: an attempt, or the escalation once the attempts are
    used up. None when the node has no handler for it."""
    handler = handler_for(step, scenario)
    if handler is None or step.state.node is None:
        return None
    episode = step.state.episode(scenario.value)
    if episode is not None and episode.attempts >= handler.maxAttempts:
        return escalate(step, scenario, handler, episode)
    return _start(step, scenario, handler, trigger, episode)


def resolve(step: Step, scenario: RecoveryScenario, resolution: str = "candidate_resumed") -> None:
    """Close the open episode of ``scenario`` (if any)."""
    episode = step.state.episode(scenario.value)
    if episode is not None:
        resolve_recovery(
            step,
            episode.recovery_id,
            "re_prompted" if resolution == "re_prompted" else "candidate_resumed",
        )


def pause_exam(step: Step, reason: str, text: str) -> None:
    """Pause the exam (both clocks stop) and tell the candidate, unless they are away (nothing
    is said to the empty room: an utterance nobody heard would count as the examiner's reply to
    their last answer)."""
    if step.state.exam_state is not ExamState.IN_PROGRESS:
        return
    step.emit(
        p.ExamStateChanged(fromState=ExamState.IN_PROGRESS, toState=ExamState.PAUSED, reason=reason)
    )
    if not step.state.offline:
        step.say(text, "recovery")
    step.result.update({"status": "paused"})


def escalate(
    step: Step, scenario: RecoveryScenario, handler: RecoveryHandler, episode: Episode
) -> Escalated:
    """Carry out ``handler.escalation`` (module docstring)."""
    escalation = handler.escalation
    node = step.state.node
    if node is None:
        return Escalated(scenario, escalation, False)
    plan_node = step.plan.node(node.node_id)
    matched = first_match(
        plan_node,
        TurnFacts(
            candidate_turns=node.candidate_turns,
            elapsed_ms=node.clock.elapsed(step.now),
            escalation=escalation,
        ),
    )
    description = f"{scenario} recovery escalated ({escalation}) after {episode.attempts} attempts"
    if matched is not None:
        # An escalation edge is the guardrail's override; an ordinary edge whose own condition
        # holds (enough turns, enough time) is taken because that condition is met.
        escalating = isinstance(matched.condition, PolicyEscalationCondition)
        take_edge(
            step,
            matched,
            decision="guardrail_override" if escalating else "condition_met",
            exit_reason="forced_transition",
            bridge=step.plan.texts.bridge,
        )
        return Escalated(scenario, escalation, True)
    if escalation is E.SKIP_NODE:
        _skip_node(step, plan_node, description)
        return Escalated(scenario, escalation, True)
    if escalation is E.PAUSE_SESSION:
        lines = step.plan.texts
        text = (
            lines.paused_recognition
            if scenario is RecoveryScenario.STT_LOW_CONFIDENCE
            else lines.paused_escalation
        )
        pause_exam(step, f"recovery_escalation:{scenario}", text)
        return Escalated(scenario, escalation, False)
    if escalation is E.TERMINATE:
        _terminate(step, scenario, description)
        return Escalated(scenario, escalation, True)
    # retry / rephrase: a fresh episode
    resolve_recovery(step, episode.recovery_id, "re_prompted")
    _start(step, scenario, handler, f"{description}; starting again", None)
    if escalation is E.REPHRASE:
        step.effect(PromptLlm(rephrase_instruction(scenario)))
    return Escalated(scenario, escalation, False)


def _skip_node(step: Step, plan_node: NodePlan, description: str) -> None:
    """Leave the node by its forced-exit edge, else leave it without one."""
    edge = forced_exit(plan_node)
    if edge is None:
        leave_node(step, "forced_transition")
        return
    take_edge(
        step,
        edge,
        decision="guardrail_override",
        exit_reason="forced_transition",
        bridge=step.plan.texts.bridge,
        condition=description,
    )


def _terminate(step: Step, scenario: RecoveryScenario, description: str) -> None:
    """End the exam, aborted (a technical failure for the technical scenarios)."""
    technical = scenario in TECHNICAL
    stop_exam(
        step,
        end_type=EndType.TECHNICAL_FAILURE if technical else EndType.TERMINATED,
        reason="system_error" if technical else "candidate_ended",
        to_state=ExamState.ABORTED,
        description=description,
    )


def rephrase_instruction(scenario: RecoveryScenario) -> str:
    """What the LLM is told when a recovery rephrases: a loop asks for different words on the
    same point; every other scenario for the question in simpler words (never "the candidate
    asked", which only a candidate's own request may say)."""
    if scenario is RecoveryScenario.REPETITION_LOOP:
        return texts.REPETITION_INSTRUCTION
    return texts.RECOVERY_REPHRASE_INSTRUCTION
