"""Session lifecycle inputs: the bot getting ready, the candidate getting ready, the bot's
speech reports and proctor control actions (each recorded as ``proctor_action``) (our 03 chapter
§2, §9). Faults are :mod:`ioa.runtime.outage`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ioa.errors import InvalidInputError
from ioa.events import EventSource, ExamState
from ioa.events import payloads as p
from ioa.runtime.command_handlers import pause, resume
from ioa.runtime.effects import EnterBootNode
from ioa.runtime.inputs import (
    ProctorAction,
    TimeScope,
    UtteranceFinished,
    UtterancesDropped,
)
from ioa.runtime.moves import ask_question, enter_node, question_unheard, stop_exam, take_edge
from ioa.runtime.step import MAX_TEXT, PendingUtterance, Step
from ioa.runtime.transitions import forced_exit
from ioa.schema import EndType


def bot_ready(step: Step, input_mode: str = "voice") -> None:
    """``bot_ready`` (with the input mode); the session enters scaffolding and the bot its
    silent boot node."""
    state = step.state
    if state.exam_state is not ExamState.SCHEDULED:
        step.result.update({"status": "ignored", "reason": "the bot is already ready"})
        return
    plan = step.plan
    step.emit(
        p.BotReady(
            examId=plan.exam_id,
            examVersion=plan.exam_version,
            nodeCount=len(plan.nodes),
            estimatedDurationSec=plan.estimated_duration_sec,
            inputMode="text" if input_mode == "text" else "voice",
        ),
        source=EventSource.BOT,
    )
    step.emit(
        p.ExamStateChanged(
            fromState=ExamState.SCHEDULED, toState=ExamState.SCAFFOLDING, reason="bot_ready"
        )
    )
    step.effect(EnterBootNode())
    step.result.update({"status": "scaffolding"})


def candidate_ready(step: Step, *, await_authorisation: bool = False) -> None:
    """The exam starts: ``scaffolding → ready → in_progress`` and the initial node. With
    ``await_authorisation`` the session stops at ``ready``: the proctor's ``authorise_start``
    starts it (:func:`_authorise_start`)."""
    state = step.state
    if state.exam_state is not ExamState.SCAFFOLDING:
        step.result.update({"status": "ignored", "reason": f"the exam is {state.exam_state}"})
        return
    step.emit(
        p.ExamStateChanged(
            fromState=ExamState.SCAFFOLDING, toState=ExamState.READY, reason="candidate_ready"
        )
    )
    if await_authorisation:
        step.result.update({"status": "awaiting_authorisation"})
        return
    _start(step, "exam_started")


def _start(step: Step, reason: str) -> None:
    """``ready → in_progress`` and the initial node."""
    step.emit(
        p.ExamStateChanged(fromState=ExamState.READY, toState=ExamState.IN_PROGRESS, reason=reason)
    )
    enter_node(step, step.plan.initial_node_id, "trans-000", starts_exam=True)
    step.result.update({"status": "started", "nodeId": step.plan.initial_node_id})


def utterance_started(
    step: Step, utterance_id: str, at_ms: int | None = None
) -> PendingUtterance | None:
    """The bot started speaking: ``examiner_utterance_started`` (source ``bot``), with when
    its audio began (``atMs``) when the bot said."""
    if at_ms is not None and at_ms < 0:
        raise InvalidInputError("an utterance cannot start before the session opened")
    pending = step.outbox.pending.get(utterance_id)
    if pending is None or pending.started or not _may_report(step, pending):
        step.result.update({"status": "ignored"})
        return None
    step.emit(
        p.ExaminerUtteranceStarted(
            utteranceId=utterance_id, nodeId=pending.node_id, purpose=pending.purpose, atMs=at_ms
        ),
        source=EventSource.BOT,
    )
    started = PendingUtterance(pending.node_id, pending.text, pending.purpose, started=True)
    step.outbox.pending[utterance_id] = started
    step.result.update({"status": "speaking"})
    return started


def utterance_finished(step: Step, report: UtteranceFinished) -> None:
    """The bot finished speaking: ``examiner_utterance_final`` with the validated text."""
    if report.duration_ms < 0:
        raise InvalidInputError("an utterance cannot last a negative time")
    pending = step.outbox.pending.get(report.utterance_id)
    if pending is None or not _may_report(step, pending):
        step.result.update({"status": "ignored"})
        return
    if not pending.started:
        started = utterance_started(step, report.utterance_id)
        if started is None:
            return
        pending = started
    del step.outbox.pending[report.utterance_id]
    spoken = _spoken_prefix(report, pending.text)
    step.emit(
        p.ExaminerUtteranceFinal(
            utteranceId=report.utterance_id,
            nodeId=pending.node_id,
            text=pending.text,
            purpose=pending.purpose,
            durationMs=report.duration_ms,
            interrupted=True if report.interrupted else None,
            interruptedAtMs=(
                max(0, report.interrupted_at_ms)
                if report.interrupted and report.interrupted_at_ms is not None
                else None
            ),
            spokenText=spoken,
        ),
        source=EventSource.BOT,
    )
    step.result.update({"status": "interrupted" if report.interrupted else "spoken"})


def bot_resumed(step: Step) -> None:
    """A bot took the session over without a fault (:class:`~ioa.runtime.inputs.BotResumed`):
    when the exam is in progress at a node whose question nothing the examiner said at this
    visit was heard of (what the previous bot had queued died with it), the question is asked
    now; otherwise nothing is said (the exam goes on where it is; an answer still owed is the
    bot's to re-run)."""
    node = step.state.node
    if step.state.exam_state is not ExamState.IN_PROGRESS or node is None:
        step.result.update({"status": "ignored", "reason": "no exam in progress"})
        return
    if not question_unheard(step, node):
        step.result.update({"status": "continue"})
        return
    ask_question(step, step.plan.node(node.node_id))
    step.result.update({"status": "question_asked", "reason": "the question was not heard"})


def utterances_dropped(step: Step, report: UtterancesDropped) -> None:
    """The bot dropped queued utterances before any of their audio played: they leave the
    outbox and nothing is recorded (they were never heard). One that had started is not
    dropped: its end is reported as an interruption."""
    dropped = [
        uid
        for uid in report.utterance_ids
        if (pending := step.outbox.pending.get(uid)) is not None and not pending.started
    ]
    for uid in dropped:
        del step.outbox.pending[uid]
    step.result.update({"status": "dropped" if dropped else "ignored"})


def _spoken_prefix(report: UtteranceFinished, text: str) -> str | None:
    """What a barge-in left of ``text`` (``None`` for a whole utterance): the bot's spoken
    text when it is a prefix of the validated text, never anything else (else empty)."""
    if not report.interrupted:
        return None
    spoken = (report.spoken_text or "").strip()
    return spoken if text.startswith(spoken) else ""


def _may_report(step: Step, pending: PendingUtterance) -> bool:
    """After ``exam_completed`` only the end node's closing is still reported."""
    state = step.state
    return not state.completed or pending.node_id == state.current_node_id


def proctor_action(step: Step, action: ProctorAction) -> None:
    """Pause, resume, extend time, terminate, skip the node, flag an irregularity, authorise
    the start. Each action carried out is recorded as ``proctor_action`` (before its
    consequences); one that does not apply (a pause while paused...) is ignored and records
    nothing, and so is one whose ``command_id`` was already carried out (a re-delivery)."""
    state = step.state
    if action.category is not None and action.action != "flag_irregularity":
        raise InvalidInputError("only an irregularity report has a category")
    if action.command_id and action.command_id[:200] in state.proctor_commands:
        step.result.update({"status": "duplicate", "commandId": action.command_id})
        return
    if state.completed:
        step.result.update({"status": "ignored", "reason": "the exam is over"})
        return
    reason = _reason(action)
    if action.action == "terminate":
        _record(step, action, reason)
        stop_exam(
            step,
            end_type=EndType.TERMINATED,
            reason="proctor_ended",
            to_state=ExamState.ABORTED,
            description="terminated by the proctor",
        )
    elif action.action == "pause":
        if state.exam_state is ExamState.IN_PROGRESS:
            _record(step, action, reason)
            pause(step, "proctor_pause", step.plan.texts.paused_by_proctor)
            step.result.update({"status": "paused"})
        else:
            step.result.update({"status": "ignored", "reason": f"the exam is {state.exam_state}"})
    elif action.action == "resume":
        if state.exam_state is ExamState.PAUSED:
            _record(step, action, reason)
            resume(step, "proctor_resume")
            step.result.update({"status": "resumed"})
        else:
            step.result.update({"status": "ignored", "reason": f"the exam is {state.exam_state}"})
    elif action.action == "skip_node":
        _skip(step, action, reason)
    elif action.action == "flag_irregularity":
        _record(step, action, reason)
        step.result.update({"status": "recorded"})
    elif action.action == "authorise_start":
        _authorise_start(step, action, reason)
    else:
        _extend(step, action, reason)


def _authorise_start(step: Step, action: ProctorAction, reason: str | None) -> None:
    """The proctor starts an exam waiting for authorisation at ``ready`` (the candidate is
    ready: :func:`candidate_ready` with ``await_authorisation``)."""
    state = step.state
    if state.exam_state is not ExamState.READY:
        step.result.update(
            {"status": "ignored", "reason": f"the exam is {state.exam_state}, not ready"}
        )
        return
    _record(step, action, reason)
    _start(step, "proctor_authorised")


def _reason(action: ProctorAction) -> str | None:
    """The proctor's reason as the event carries it (``None`` when blank)."""
    reason = action.reason
    if reason is None:
        return None
    if not isinstance(reason, str) or "\x00" in reason:
        raise InvalidInputError("a proctor's reason must be text without NUL characters")
    return reason.strip()[:MAX_TEXT] or None


@dataclass(frozen=True, slots=True)
class _Extension:
    """What an ``extend_time`` did: ms added, to which scope, ms left after it, the node."""

    added_ms: int
    scope: TimeScope
    remaining_ms: int
    node_id: str | None


def _record(
    step: Step, action: ProctorAction, reason: str | None, extension: _Extension | None = None
) -> str:
    """Emit ``proctor_action``; returns its correlation id (the command's id, else one made
    from the event's number)."""
    correlation = action.command_id or f"proctor-action-{step.state.events_applied + 1:04d}"
    step.emit(
        p.ProctorActionTaken(
            actor=(action.proctor_id or "proctor")[:200],
            action=action.action,
            reason=reason,
            seconds=_seconds(extension.added_ms) if extension else None,
            scope=extension.scope if extension else None,
            remainingSec=_seconds(extension.remaining_ms) if extension else None,
            remainingMs=extension.remaining_ms if extension else None,
            nodeId=extension.node_id if extension else step.state.current_node_id,
            category=action.category if action.action == "flag_irregularity" else None,
        ),
        correlation_id=correlation[:200],
    )
    return correlation[:200]


def _seconds(ms: int) -> int | float:
    """Milliseconds as seconds; whole seconds stay integers on the wire."""
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def _skip(step: Step, action: ProctorAction, reason: str | None) -> None:
    """The proctor moves the session on: the node's forced exit (its ``always`` edge, else its
    first edge)."""
    state = step.state
    node = state.node
    if node is None or state.exam_state is not ExamState.IN_PROGRESS:
        step.result.update({"status": "ignored", "reason": f"the exam is {state.exam_state}"})
        return
    plan_node = step.plan.node(node.node_id)
    edge = forced_exit(plan_node)
    if plan_node.is_end or edge is None:
        step.result.update({"status": "ignored", "reason": "the node has no way out"})
        return
    _record(step, action, reason)
    members = step.plan.pools.get(edge.targetNodeId)
    target = members[0] if members else edge.targetNodeId
    take_edge(
        step,
        edge,
        decision="guardrail_override",
        exit_reason="forced_transition",
        bridge=None if step.plan.node(target).is_end else step.plan.texts.bridge,
        condition="skipped by the proctor",
    )


def _extend(step: Step, action: ProctorAction, reason: str | None) -> None:
    """Add time to the exam or the node: ``proctor_action`` with the new remaining time, then
    the candidate-visible clock update (``time_warning``); both re-anchor the clock."""
    seconds = action.seconds
    if (
        seconds is None
        or isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise InvalidInputError("extend_time needs a positive number of seconds")
    extra = round(seconds * 1000)
    if extra <= 0:
        raise InvalidInputError("extend_time needs at least a millisecond")
    state = step.state
    if action.scope == "exam":
        clock, total = state.exam_clock, step.plan.total_budget_ms
        if clock is None or total is None:
            step.result.update({"status": "ignored", "reason": "no running exam time budget"})
            return
        remaining = max(0, total + clock.extension_ms - clock.elapsed(step.now)) + extra
        node_id = state.current_node_id
    else:
        node = state.node
        budget = step.plan.node(node.node_id).budget_ms if node is not None else None
        if node is None or budget is None:
            step.result.update({"status": "ignored", "reason": "no node time budget"})
            return
        remaining = max(0, budget + node.clock.extension_ms - node.clock.elapsed(step.now)) + extra
        node_id = node.node_id
    correlation = _record(step, action, reason, _Extension(extra, action.scope, remaining, node_id))
    step.emit(
        p.TimeWarning(
            scope=action.scope,
            remainingSec=round(remaining / 1000, 3),
            remainingMs=remaining,
            nodeId=node_id,
        ),
        correlation_id=correlation,
    )
    step.result.update({"status": "extended", "remainingMs": remaining})
