"""Dispatching candidate commands (chapter 07 §10, spec-notes §3; our 03 chapter §6).

Every command yields ``candidate_command_received`` (accepted or not); a refusal also yields
``guardrail_triggered`` (``command_refused``) and a polite refusal to the candidate. Commands
are deduplicated by ``commandId`` for the whole session (a re-delivered command is a no-op
with no event).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import recovery, texts
from ioa.runtime.commands import CONFIRMED_COMMANDS, PAUSED_COMMANDS, gate
from ioa.runtime.effects import AdjustSpeech, PromptLlm
from ioa.runtime.moves import activate_admin, resolve_recovery, stop_exam, take_edge
from ioa.runtime.state import RuntimeState
from ioa.runtime.step import Flow, Step, guardrail_payload
from ioa.runtime.transitions import TurnFacts, first_match, forced_exit
from ioa.schema import CandidateCommandType, EndType, OnViolation, RecoveryScenario

C = CandidateCommandType
Origin = Literal["envelope", "llm", "classifier"]

LIVE_STATES: Final = frozenset({ExamState.IN_PROGRESS, ExamState.PAUSED})
PROCTOR_HELD_PAUSES: Final = frozenset({"proctor_pause"})
"""Pauses only a proctor lifts (spec-notes §3): the candidate's ``resume`` is refused and they
are told why they wait. A lost connection's pause is lifted by the candidate's return, a
technical one when the fault clears (:mod:`ioa.runtime.absence`, :mod:`ioa.runtime.lifecycle`)."""
SYSTEM_HELD_PAUSES: Final = frozenset({"candidate_disconnected", "technical_fault"})


MAX_DETAIL_TEXT: Final = 2000


def command_details(payload: Mapping[str, Any], **derived: object) -> dict[str, Any] | None:
    """The acknowledgement's ``details``: the command payload's plain values (text, numbers,
    booleans; not ``type``) plus what the runtime ``derived`` from them (the resolved
    ``revise_earlier_answer`` target). ``None`` when there is nothing to say."""
    details: dict[str, Any] = {}
    for key, value in [*payload.items(), *derived.items()]:
        if key == "type" or not isinstance(key, str) or not key or "\x00" in key:
            continue
        if isinstance(value, str):
            if "\x00" not in value:
                details[key] = value[:MAX_DETAIL_TEXT]
        elif isinstance(value, bool | int) or (
            isinstance(value, float) and math.isfinite(value) and abs(value) <= 1e15
        ):
            details[key] = value
    return details or None


def _acknowledge(
    step: Step,
    command_id: str,
    command: CandidateCommandType,
    spelled: str,
    origin: Origin,
    *,
    accepted: bool,
    reason: str | None = None,
    correlation_id: str | None = None,
    details: Mapping[str, Any] | None = None,
) -> None:
    step.emit(
        p.CandidateCommandReceived(
            commandId=command_id,
            command=command,
            commandType=spelled,
            accepted=accepted,
            rejectionReason=None if accepted else (reason or "refused"),
            origin=origin,
            details=dict(details) if details else None,
        ),
        correlation_id=(correlation_id or command_id)[:200],
    )
    step.result.update(
        {"status": "command_dispatched", "command": command.value, "accepted": accepted}
    )


def refuse(
    step: Step,
    command_id: str,
    command: CandidateCommandType,
    spelled: str,
    origin: Origin,
    reason: str,
    on_violation: OnViolation = OnViolation.REFUSE_POLITELY,
    *,
    speak: bool = True,
    correlation_id: str | None = None,
    details: Mapping[str, Any] | None = None,
) -> None:
    """Refuse: the acknowledgement, the guardrail, the polite answer."""
    _acknowledge(
        step,
        command_id,
        command,
        spelled,
        origin,
        accepted=False,
        reason=reason,
        correlation_id=correlation_id,
        details=details,
    )
    node_id = step.state.current_node_id
    step.emit(
        guardrail_payload(
            guardrail_id=f"command-refused:{command.value}:{command_id}",
            guardrail_type="command_refused",
            severity="warning",
            description=f"command '{command}' refused: {reason}",
            action="command_refused",
            node_id=node_id,
        ),
        correlation_id=(correlation_id or command_id)[:200],
    )
    if not speak or node_id is None:
        return
    if on_violation is OnViolation.REDIRECT_TO_QUESTION:
        question = step.state.node.last_question if step.state.node else None
        step.say(f"{step.plan.texts.redirect} {question or ''}".strip(), "prompt")
    else:
        step.say(step.plan.texts.refuse_politely if reason else step.plan.texts.not_now, "prompt")


def _repeat_question(step: Step) -> None:
    node = step.state.node
    if node is None:
        return
    question = node.last_question or step.plan.node(node.node_id).opening
    if question:
        step.say(question, "question")


def owed_answer(state: RuntimeState) -> bool:
    """The candidate answered at this visit and the examiner has not spoken since (the exam
    paused in between without a word, e.g. the connection dropped): a reply is still owed.
    Commands are not answers."""
    return any(
        turn.counted and turn.corrected_by is None and turn.turn_id not in state.command_turns
        for turn in state.answer_turns()
    )


def pause(step: Step, reason: str, text: str) -> None:
    """Pause the exam (used by commands and the proctor)."""
    step.emit(
        p.ExamStateChanged(fromState=ExamState.IN_PROGRESS, toState=ExamState.PAUSED, reason=reason)
    )
    step.say(text, "prompt")


def resume(step: Step, reason: str) -> None:
    """Resume a paused exam: close the open recoveries (the candidate is back) except a
    ``network_issue`` one, which a clearly heard candidate turn closes (so repeated faults
    still escalate), welcome them back and repeat the question, or, when the examiner still owed
    a reply to the candidate's answer (:func:`owed_answer`), have the examiner give it now.
    When a reply is owed, "Welcome back" is a bridge: it closes no answer, so the reply (or, if
    the exam pauses for the candidate's absence before it comes, the one asked on their return)
    reads its evidence from that answer."""
    owed = owed_answer(step.state)
    step.emit(
        p.ExamStateChanged(fromState=ExamState.PAUSED, toState=ExamState.IN_PROGRESS, reason=reason)
    )
    for episode in list(step.state.episodes.values()):
        if episode.kind != "network_issue":
            resolve_recovery(step, episode.recovery_id, "candidate_resumed")
    if owed:
        # "Welcome back" only links to the reply still owed: said as a bridge, it does not
        # close the answer (``answered_upto``), so the reply's evidence is read from that answer.
        step.say(step.plan.texts.resumed, "bridge")
        step.effect(PromptLlm(texts.OWED_ANSWER_INSTRUCTION))
    else:
        step.say(step.plan.texts.resumed, "prompt")
        _repeat_question(step)
    # An immediate instruction the proctor sent during the pause is spoken now.
    activate_admin(step)


def finish_now(
    step: Step, *, requested_by_proctor: bool, reason: object = None, command_id: str | None = None
) -> None:
    """End the exam at the candidate's (normal end) or the proctor's (terminated) request; the
    proctor's is also a ``proctor_action`` (``terminate``, with the request's reason)."""
    if requested_by_proctor:
        text = reason.strip()[:20_000] if isinstance(reason, str) and "\x00" not in reason else ""
        correlation = command_id or f"proctor-action-{step.state.events_applied + 1:04d}"
        step.emit(
            p.ProctorActionTaken(
                actor="proctor",
                action="terminate",
                reason=text or None,
                nodeId=step.state.current_node_id,
            ),
            correlation_id=correlation[:200],
        )
        stop_exam(
            step,
            end_type=EndType.TERMINATED,
            reason="proctor_ended",
            to_state=ExamState.ABORTED,
            description="the proctor ended the examination",
        )
    else:
        stop_exam(
            step,
            end_type=EndType.NORMAL,
            reason="candidate_ended",
            to_state=ExamState.COMPLETED,
            description="the candidate ended the examination",
        )


def emergency_stop(step: Step, command_id: str) -> None:
    """Halt at once: ``recovery_started`` (candidate_distress), then the terminated end."""
    recovery_id = f"rec-{step.state.recoveries_started + 1:03d}"
    step.emit(
        p.RecoveryStarted(
            recoveryId=recovery_id,
            recoveryType="candidate_distress",
            nodeId=step.state.current_node_id or "none",
            triggerDescription="emergency stop requested by the candidate",
        ),
        correlation_id=recovery_id,
    )
    stop_exam(
        step,
        end_type=EndType.TERMINATED,
        reason="emergency_stop",
        to_state=ExamState.ABORTED,
        description="emergency stop",
        resolution="exam_terminated",
    )


def skip(step: Step, command_id: str, spelled: str, origin: Origin) -> None:
    """Skip the node: its ``candidate_command: skip`` edge, else the forced exit."""
    node = step.state.node
    if node is None:
        return
    plan_node = step.plan.node(node.node_id)
    edge = first_match(
        plan_node,
        TurnFacts(
            candidate_turns=node.candidate_turns,
            elapsed_ms=node.clock.elapsed(step.now),
            command=C.SKIP,
        ),
    ) or forced_exit(plan_node)
    if edge is None:
        return
    take_edge(
        step,
        edge,
        decision="candidate_skip",
        exit_reason="candidate_skip",
        bridge=step.plan.texts.bridge,
    )


@dataclass(frozen=True, slots=True)
class _Reply:
    """How one command is answered: every acknowledgement and refusal of it carries its id,
    spelling, origin, correlation id and details."""

    step: Step
    command_id: str
    command: CandidateCommandType
    spelled: str
    origin: Origin
    correlation_id: str | None
    details: Mapping[str, Any] | None

    def accept(self, *, command_id: str | None = None, spelled: str | None = None) -> None:
        """Acknowledge the command as accepted (``command_id``/``spelled`` override, for the
        confirmation of a pending finish)."""
        _acknowledge(
            self.step,
            command_id or self.command_id,
            self.command,
            spelled or self.spelled,
            self.origin,
            accepted=True,
            correlation_id=self.correlation_id,
            details=self.details,
        )

    def refuse(
        self,
        reason: str,
        on_violation: OnViolation = OnViolation.REFUSE_POLITELY,
        *,
        speak: bool = True,
    ) -> None:
        """Refuse the command (:func:`refuse`)."""
        refuse(
            self.step,
            self.command_id,
            self.command,
            self.spelled,
            self.origin,
            reason,
            on_violation,
            speak=speak,
            correlation_id=self.correlation_id,
            details=self.details,
        )


def dispatch(
    step: Step,
    *,
    command_id: str,
    command: CandidateCommandType,
    spelled: str,
    origin: Origin,
    payload: Mapping[str, Any] | None = None,
    turn_id: str | None = None,
) -> None:
    """Decide on one candidate command and carry it out. ``turn_id`` is the candidate turn a
    detected (LLM or classifier) command came from: it becomes the events' correlation id, and
    a turn's command is never dispatched twice.

    The gates of :data:`COMMAND_GATES` run in order; the first that stops answers the command,
    else it is accepted and carried out."""
    payload = payload or {}
    reply = _Reply(step, command_id, command, spelled, origin, turn_id, command_details(payload))
    for gate_of in COMMAND_GATES:
        if gate_of(reply, payload) is Flow.STOP:
            return
    reply.accept()
    _carry_out(step, command, payload, origin, command_id, spelled)


def _once(reply: _Reply, payload: Mapping[str, Any]) -> Flow:
    """A command id already seen is a duplicate; nothing is done after the end."""
    step = reply.step
    if reply.command_id in step.state.commands_seen:
        step.result.update({"status": "duplicate", "commandId": reply.command_id})
        return Flow.STOP
    if step.state.completed:
        step.result.update({"status": "ignored", "reason": "the exam is over"})
        return Flow.STOP
    return Flow.CONTINUE


def _emergency_first(reply: _Reply, payload: Mapping[str, Any]) -> Flow:
    """An emergency stop is always accepted and carried out."""
    if reply.command is not C.EMERGENCY_STOP:
        return Flow.CONTINUE
    reply.accept()
    emergency_stop(reply.step, reply.command_id)
    return Flow.STOP


def _exam_running(reply: _Reply, payload: Mapping[str, Any]) -> Flow:
    """Before the start (or with no node) only a proctor's finish is carried out."""
    state = reply.step.state
    if state.exam_state in LIVE_STATES and state.node is not None:
        return Flow.CONTINUE
    if reply.command is C.FINISH and payload.get("requestedBy") == "proctor":
        reply.accept()
        finish_now(
            reply.step,
            requested_by_proctor=True,
            reason=payload.get("reason"),
            command_id=reply.command_id,
        )
        return Flow.STOP
    reply.refuse("the examination has not started", speak=False)
    return Flow.STOP


def _paused_commands(reply: _Reply, payload: Mapping[str, Any]) -> Flow:
    """While paused only the paused commands count, and a pause held by the proctor or the
    system is not resumed by the candidate (they are told to wait)."""
    step = reply.step
    if step.state.exam_state is not ExamState.PAUSED:
        return Flow.CONTINUE
    if reply.command not in PAUSED_COMMANDS:
        reply.refuse("the examination is paused", speak=False)
        return Flow.STOP
    held = step.state.pause_reason
    if reply.command is not C.RESUME or (
        held not in PROCTOR_HELD_PAUSES and held not in SYSTEM_HELD_PAUSES
    ):
        return Flow.CONTINUE
    proctor = held in PROCTOR_HELD_PAUSES
    reply.refuse(
        "only the proctor can resume this pause"
        if proctor
        else "the examination resumes by itself once the problem is solved",
        speak=False,
    )
    lines = step.plan.texts
    step.say(lines.wait_for_proctor if proctor else lines.wait_for_system, "prompt")
    return Flow.STOP


def _node_policy(reply: _Reply, payload: Mapping[str, Any]) -> Flow:
    """The node's command policy allows it; pause and resume fit the exam's state."""
    state = reply.step.state
    node = state.node
    assert node is not None  # _exam_running
    verdict = gate(reply.command, reply.step.plan.node(node.node_id).commands)
    if not verdict.allowed:
        reply.refuse(verdict.reason or "not allowed", verdict.on_violation)
        return Flow.STOP
    if reply.command is C.RESUME and state.exam_state is not ExamState.PAUSED:
        reply.refuse("the examination is not paused", speak=False)
        return Flow.STOP
    if reply.command is C.PAUSE and state.exam_state is ExamState.PAUSED:
        reply.refuse("the examination is already paused", speak=False)
        return Flow.STOP
    return Flow.CONTINUE


def _revise_earlier_answer(reply: _Reply, payload: Mapping[str, Any]) -> Flow:
    """Revising an answer: the part (default: the previous one) must have been visited."""
    step, node = reply.step, reply.step.state.node
    if reply.command is not C.REVISE_EARLIER_ANSWER or node is None:
        return Flow.CONTINUE
    target = payload.get("targetNodeId")
    visited = [n for n in step.state.nodes_visited if n != node.node_id]
    if target is None and visited:
        target = visited[-1]
    reply = replace(reply, details=command_details(payload, targetNodeId=target))
    if target != node.node_id and target not in visited:
        reply.refuse("that part has not been visited yet")
        return Flow.STOP
    outcome = _confirmation(reply)
    if outcome == "asked":
        return Flow.STOP
    if outcome == "not_needed":
        reply.accept()
    step.say(
        step.plan.texts.revise_now if target == node.node_id else step.plan.texts.revise_later,
        "prompt",
    )
    return Flow.STOP


_CONFIRM_LINES: Final = {
    C.FINISH: "finish_confirm",
    C.SKIP: "skip_confirm",
    C.REVISE_EARLIER_ANSWER: "revise_confirm",
    C.LANGUAGE_SWITCH: "language_confirm",
}
"""The :class:`~ioa.runtime.texts.RuntimeTexts` line that asks to confirm each command."""

Confirmation = Literal["not_needed", "asked", "confirmed"]


def _confirmation(reply: _Reply) -> Confirmation:
    """A consequential command the candidate's words asked for waits for their yes
    (:data:`~ioa.runtime.commands.CONFIRMED_COMMANDS`): the first time the question is asked
    (``asked``: the command is acknowledged as asked, nothing more happens); the candidate's yes
    to it is acknowledged as the confirmation (``confirmed``: the caller carries it out without
    acknowledging it again). A button's command (an envelope) needs none (``not_needed``)."""
    step, node, command = reply.step, reply.step.state.node, reply.command
    if command.value not in CONFIRMED_COMMANDS or reply.origin == "envelope" or node is None:
        return "not_needed"
    if node.pending_command == command.value and node.pending_command_id is not None:
        reply.accept(
            command_id=f"{node.pending_command_id}-confirm", spelled=f"{command.value}_confirmation"
        )
        return "confirmed"
    reply.accept(spelled=command.value)
    step.say(str(getattr(step.plan.texts, _CONFIRM_LINES[command])), "prompt")
    step.result.update({"status": "confirmation_asked", "command": command.value})
    return "asked"


def _confirmed(reply: _Reply, payload: Mapping[str, Any]) -> Flow:
    """A finish, skip or language switch in the candidate's words is asked about first and
    carried out once confirmed (:func:`_confirmation`)."""
    outcome = _confirmation(reply)
    if outcome == "not_needed":
        return Flow.CONTINUE
    if outcome == "confirmed":
        _carry_out(reply.step, reply.command, {}, reply.origin, reply.command_id, reply.spelled)
    return Flow.STOP


COMMAND_GATES: Final[tuple[Callable[[_Reply, Mapping[str, Any]], Flow], ...]] = (
    _once,
    _emergency_first,
    _exam_running,
    _paused_commands,
    _node_policy,
    _revise_earlier_answer,
    _confirmed,
)
"""What a command passes before it is carried out, in order; each gate may answer it."""


def _carry_out(
    step: Step,
    command: CandidateCommandType,
    payload: Mapping[str, Any],
    origin: Origin,
    command_id: str,
    spelled: str,
) -> None:
    if command is C.REPEAT:
        _repeat_question(step)
    elif command is C.CLARIFICATION:
        text = payload.get("text")
        detail = f': "{text}"' if isinstance(text, str) and text.strip() else ""
        step.effect(PromptLlm(texts.CLARIFY_INSTRUCTION.format(detail=detail)))
    elif command is C.REQUEST_REPHRASE:
        step.effect(PromptLlm(texts.REPHRASE_INSTRUCTION))
    elif command is C.SLOW_DOWN:
        step.effect(AdjustSpeech("rate", "slower"))
        step.say(step.plan.texts.slower, "prompt")
    elif command in (C.VOLUME_UP, C.VOLUME_DOWN):
        step.effect(AdjustSpeech("volume", "up" if command is C.VOLUME_UP else "down"))
    elif command is C.LANGUAGE_SWITCH:
        step.effect(PromptLlm(texts.LANGUAGE_INSTRUCTION))  # the examiner answers at once
    elif command is C.PAUSE:
        pause(step, "candidate_pause", step.plan.texts.paused)
    elif command is C.RESUME:
        resume(step, "candidate_resume")
    elif command is C.HELP:
        step.say(step.plan.texts.help, "prompt")
    elif command is C.SKIP:
        skip(step, command_id, spelled, origin)
    elif command is C.FINISH:
        finish_now(
            step,
            requested_by_proctor=payload.get("requestedBy") == "proctor",
            reason=payload.get("reason"),
            command_id=command_id,
        )
    elif command is C.RAISE_HAND:
        step.say(step.plan.texts.hand_raised, "prompt")
    elif command is C.CHALLENGE_PREMISE:
        text = str(payload.get("text") or "")
        step.effect(PromptLlm(texts.CHALLENGE_INSTRUCTION.format(text=text)))
    elif command is C.REPORT_AUDIO_ISSUE:
        outcome = recovery.attempt(
            step,
            RecoveryScenario.NETWORK_ISSUE,
            f"the candidate reported an audio issue ({payload.get('issueType', 'unspecified')})",
        )
        if isinstance(outcome, recovery.Attempt):
            step.say(step.plan.texts.audio_check, "recovery")
    elif command is C.THINKING_ALOUD and origin != "envelope":
        # thinking aloud in a turn gets time, in the runtime's words (no new question while
        # the candidate thinks); the room's button is acknowledged on the page, not aloud
        step.say(step.plan.texts.thinking_time, "prompt")
    # signal_confidence: the acknowledgement records it; the turn is answered as an answer
