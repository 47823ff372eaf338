"""Timers and pacing beats (spec-notes §2, beats chapter; our 03 chapter §7).

While the exam is in progress the controller keeps these deadlines (epoch ms, computed from
the state, so nothing is scheduled that replay could miss):

=================  ========================================================================
node budget        the node's ``timeBudget`` (+ extensions) of active node time: a
                   ``time_budget_exceeded`` guardrail and the forced exit (``time_exhausted``)
exam limit         ``metadata.totalTimeBudgetSec`` (+ extensions) of active exam time: the
                   ``timeout`` end node, exam ``expired``
wrap-up beat       the limit minus the wrap-up reserve: a ``time_warning`` (``wrapUp``) and a
                   move to the wrap-up node (context RESET_WITH_SUMMARY)
halfway beat       half the total budget: a ``time_warning``
time_elapsed       the node's smallest ``time_elapsed`` threshold: the every-turn transitions
silence            the package's window (``afterSec``; text mode ``textAfterSec``) after the
                   candidate's last activity (:mod:`ioa.runtime.activity`; node ``silence``
                   handler only; not while they compose, speak, think aloud or are away,
                   not while a proctor instruction runs)
absence            a lost connection: the grace period, then the pause; the absence limit,
                   then the end, ``aborted`` (:mod:`ioa.runtime.absence`; also while paused)
outage limit       paused for a provider outage that long: the technical-failure end
                   (:mod:`ioa.runtime.outage`; only while paused for it)
held completion    a natural completion held while the spoken answer may go on, should the
                   host's ``TurnSettled`` not come: taken (:mod:`ioa.runtime.held_edge`)
=================  ========================================================================

No part is skipped while the candidate is composing or speaking: the node budget, the
``time_elapsed`` edges and the wrap-up beat wait until they stop (the exam limit does not).
A silence escalation that would leave a node whose policy forbids ``skip`` is held instead
(a ``guardrail_triggered`` for the proctor, no more prompts until the candidate acts).

Active time stops while the exam is paused (and a node's while a ``pause_timer`` recovery is
open). On equal deadlines the node budget fires before the exam limit (so a wrap-up that uses
its whole budget still ends normally), then the beats, then the rest. Each firing changes the
state so that it is not due again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import absence, held_edge, outage, recovery
from ioa.runtime.activity import hold_silence, silence_anchor, silence_window_ms
from ioa.runtime.effects import PromptLlm
from ioa.runtime.moves import move_to, stop_exam, take_edge
from ioa.runtime.recognition import reprompt, unclear_turns
from ioa.runtime.step import Step, guardrail_payload
from ioa.runtime.transitions import TurnFacts, first_match, forced_exit, next_time_elapsed_ms
from ioa.schema import CandidateCommandType, EndType, NodeKind, RecoveryEscalation, RecoveryScenario

MAX_FIRINGS: Final = 32


class TimerKind(IntEnum):
    """Timer kinds, in tie-break order."""

    NODE_BUDGET = 0
    EXAM_LIMIT = 1
    WRAP_UP = 2
    HALFWAY = 3
    TIME_ELAPSED = 4
    SILENCE = 5
    CONNECTION_GRACE = 6
    ABSENCE_LIMIT = 7
    OUTAGE_LIMIT = 8
    HELD_EDGE = 9


@dataclass(frozen=True, slots=True, order=True)
class Deadline:
    at_ms: int
    kind: TimerKind


def deadlines(step: Step) -> list[Deadline]:
    """Every pending deadline at this instant."""
    state = step.state
    if state.completed:
        return []
    found: list[Deadline] = [
        Deadline(at, TimerKind.CONNECTION_GRACE if kind == "grace" else TimerKind.ABSENCE_LIMIT)
        for kind, at in absence.deadlines(step)
    ]
    outage_at = outage.deadline(step)
    if outage_at is not None:
        found.append(Deadline(outage_at, TimerKind.OUTAGE_LIMIT))
    if state.exam_state is not ExamState.IN_PROGRESS:
        return found
    now = step.now
    active = state.candidate_active
    away = bool(state.offline)  # lost connection, in its grace period: nothing is spoken or left
    clock = state.exam_clock
    total = step.plan.total_budget_ms
    if clock is not None and total is not None and clock.running:
        budget = total + clock.extension_ms
        elapsed = clock.elapsed(now)
        found.append(Deadline(now + budget - elapsed, TimerKind.EXAM_LIMIT))
        reserve = step.plan.wrap_up_reserve_ms
        if not state.wrap_up_warned and reserve is not None and not active and not away:
            found.append(Deadline(now + budget - reserve - elapsed, TimerKind.WRAP_UP))
        if not state.halfway_warned and not state.wrap_up_warned and not away:
            found.append(Deadline(now + budget // 2 - elapsed, TimerKind.HALFWAY))
    node = state.node
    if node is None or not node.clock.running:
        return found
    plan_node = step.plan.node(node.node_id)
    if plan_node.is_end:
        return found
    node_elapsed = node.clock.elapsed(now)
    if active or away:
        return found  # no part is left while the candidate composes, speaks or is away
    held_at = held_edge.deadline(step)
    if held_at is not None:
        found.append(Deadline(held_at, TimerKind.HELD_EDGE))
    earliest = _after_activity(step)
    if plan_node.budget_ms is not None:
        budget = plan_node.budget_ms + node.clock.extension_ms
        at = max(now + budget - node_elapsed, earliest)
        found.append(Deadline(at, TimerKind.NODE_BUDGET))
    threshold = next_time_elapsed_ms(plan_node)
    if threshold is not None:
        at = max(now + threshold - node_elapsed, earliest)
        found.append(Deadline(at, TimerKind.TIME_ELAPSED))
    handler = plan_node.handler(RecoveryScenario.SILENCE)
    anchor = silence_anchor(step, step.timing) if handler is not None else None
    if handler is not None and anchor is not None:
        window = silence_window_ms(state.input_mode, handler)
        found.append(Deadline(anchor + window, TimerKind.SILENCE))
    return found


def _after_activity(step: Step) -> int:
    """The earliest instant a part may be left after the candidate's last activity at it: the
    answer being typed or spoken gets to arrive first (text: the draft grace; voice: the
    recogniser's latency). 0 when they were not active at this visit."""
    state = step.state
    node = state.node
    last = state.last_activity_ms
    if node is None or last is None or last < node.entered_ms:
        return 0
    if node.last_candidate_ms is not None and node.last_candidate_ms >= last:
        return 0  # the answer arrived
    timing = step.timing
    grace = timing.draft_grace_ms if state.input_mode == "text" else timing.recogniser_latency_ms
    return last + grace


def next_deadline(step: Step) -> int | None:
    """The earliest pending deadline (for the host's scheduler), or None."""
    pending = deadlines(step)
    return min(pending).at_ms if pending else None


def _remaining_exam(step: Step) -> int:
    clock = step.state.exam_clock
    total = step.plan.total_budget_ms
    if clock is None or total is None:
        return 0
    return max(0, total + clock.extension_ms - clock.elapsed(step.now))


def _fire(step: Step, kind: TimerKind) -> None:
    """Carry out what the deadline of ``kind`` does (:data:`_ON_DEADLINE`)."""
    _ON_DEADLINE[kind](step)


def _exam_limit(step: Step) -> None:
    """The total exam time is used up: the exam ends (``timeout``, ``expired``)."""
    stop_exam(
        step,
        end_type=EndType.TIMEOUT,
        reason="time_total_exhausted",
        to_state=ExamState.EXPIRED,
        description="the total exam time budget is used up",
        exit_reason="time_exhausted",
        decision="time_exhausted",
        resolution="skipped_to_next",
    )


def _wrap_up_beat(step: Step) -> None:
    """A wrap-up ``time_warning``, then the move to the wrap-up node (unless already there or
    at the end)."""
    remaining = _remaining_exam(step)
    step.emit(
        p.TimeWarning(
            scope="exam",
            remainingSec=round(remaining / 1000, 3),
            remainingMs=remaining,
            nodeId=step.state.current_node_id,
            wrapUp=True,
        )
    )
    node = step.state.node
    wrap_up = step.plan.wrap_up_node_id
    if node is None or wrap_up is None:
        return
    if step.plan.node(node.node_id).kind in (NodeKind.WRAPUP, NodeKind.END):
        return
    move_to(
        step,
        wrap_up,
        edge_id="beat-wrap-up",
        decision="time_exhausted",
        exit_reason="forced_transition",
        condition="wrap-up beat: the exam time budget is nearly used up",
        bridge=step.plan.texts.bridge,
    )


def _halfway_beat(step: Step) -> None:
    """Half the exam time is used: a ``time_warning``."""
    remaining = _remaining_exam(step)
    step.emit(
        p.TimeWarning(
            scope="exam",
            remainingSec=round(remaining / 1000, 3),
            remainingMs=remaining,
            nodeId=step.state.current_node_id,
        )
    )


def _node_budget(step: Step) -> None:
    """The node's time budget is used up: a ``time_budget_exceeded`` guardrail and the forced
    exit."""
    node = step.state.node
    if node is None:
        return
    plan_node = step.plan.node(node.node_id)
    budget_sec = ((plan_node.budget_ms or 0) + node.clock.extension_ms) / 1000
    step.emit(
        guardrail_payload(
            guardrail_id=f"time-budget:{node.node_id}:{node.visit}",
            guardrail_type="time_budget_exceeded",
            severity="block",
            description=f"time budget of node {node.node_id} ({budget_sec:g}s) used up: "
            "forced exit",
            action="forced_transition",
            node_id=node.node_id,
        )
    )
    edge = forced_exit(plan_node)
    if edge is not None:
        take_edge(
            step,
            edge,
            decision="time_exhausted",
            exit_reason="time_exhausted",
            bridge=step.plan.texts.bridge,
            condition="node time budget used up (forced exit)",
        )


def _time_elapsed(step: Step) -> None:
    """A ``time_elapsed`` threshold passed: the every-turn transitions are evaluated."""
    node = step.state.node
    if node is None:
        return
    facts = TurnFacts(candidate_turns=node.candidate_turns, elapsed_ms=node.clock.elapsed(step.now))
    edge = first_match(step.plan.node(node.node_id), facts)
    if edge is not None:
        take_edge(
            step,
            edge,
            decision="condition_met",
            exit_reason="completed",
            bridge=step.plan.texts.bridge,
        )


def _silence(step: Step) -> None:
    """The candidate was silent for the window: a silence recovery attempt, held where the
    escalation would skip a node that forbids it."""
    node = step.state.node
    if node is None:
        return
    if _silence_would_skip_forbidden(step):
        hold_silence(step, f"node {node.node_id} forbids skipping")
        return
    outcome = recovery.attempt(step, RecoveryScenario.SILENCE, "no candidate activity")
    if isinstance(outcome, recovery.Attempt):
        speak_recovery(step, outcome)


def _connection_grace(step: Step) -> None:
    absence.fire(step, "grace")


def _absence_limit(step: Step) -> None:
    absence.fire(step, "limit")


def _outage_limit(step: Step) -> None:
    outage.fire(step)


_ON_DEADLINE: Final[Mapping[TimerKind, Callable[[Step], None]]] = {
    TimerKind.NODE_BUDGET: _node_budget,
    TimerKind.EXAM_LIMIT: _exam_limit,
    TimerKind.WRAP_UP: _wrap_up_beat,
    TimerKind.HALFWAY: _halfway_beat,
    TimerKind.TIME_ELAPSED: _time_elapsed,
    TimerKind.SILENCE: _silence,
    TimerKind.CONNECTION_GRACE: _connection_grace,
    TimerKind.ABSENCE_LIMIT: _absence_limit,
    TimerKind.OUTAGE_LIMIT: _outage_limit,
    TimerKind.HELD_EDGE: held_edge.settle,
}
"""What each deadline does when it fires (the module docstring's table)."""


def _silence_would_skip_forbidden(step: Step) -> bool:
    """The next silence trigger would escalate out of a node whose policy forbids ``skip``."""
    node = step.state.node
    handler = recovery.handler_for(step, RecoveryScenario.SILENCE)
    episode = step.state.episode(RecoveryScenario.SILENCE.value)
    if node is None or handler is None or episode is None:
        return False
    if episode.attempts < handler.maxAttempts:
        return False
    plan_node = step.plan.node(node.node_id)
    leaves = handler.escalation is RecoveryEscalation.SKIP_NODE or (
        first_match(
            plan_node,
            TurnFacts(
                candidate_turns=node.candidate_turns,
                elapsed_ms=node.clock.elapsed(step.now),
                escalation=handler.escalation,
            ),
        )
        is not None
    )
    forbids = any(f.command == CandidateCommandType.SKIP for f in plan_node.commands.forbidden)
    return leaves and forbids


def speak_recovery(step: Step, outcome: recovery.Attempt) -> None:
    """Carry out a recovery attempt the runtime itself initiated (no LLM text to use)."""
    if outcome.action.value == "rephrase":
        step.effect(PromptLlm(recovery.rephrase_instruction(outcome.scenario)))
        return
    if outcome.scenario is RecoveryScenario.STT_LOW_CONFIDENCE:
        reprompt(step, unclear_turns(step.state.answer_turns()))
        return
    step.say(recovery.action_text(step.plan.texts, outcome.action), "recovery")


def fire_due_timers(step: Step, *, until: int | None = None) -> int:
    """Fire every timer due at ``step.now`` (or, when ``until`` is earlier, due by ``until``:
    the instant the input was handed over), earliest first; returns how many fired."""
    limit = step.now if until is None else min(until, step.now)
    fired = 0
    for _ in range(MAX_FIRINGS):
        due = [d for d in deadlines(step) if d.at_ms <= limit]
        if not due:
            break
        _fire(step, min(due).kind)
        fired += 1
    return fired
