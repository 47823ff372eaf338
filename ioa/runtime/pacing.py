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
silence            ``afterSec`` after the examiner finished speaking with no candidate speech
                   (node ``silence`` handler only; not while thinking aloud, not while a
                   proctor instruction runs)
=================  ========================================================================

Active time stops while the exam is paused (and a node's while a ``pause_timer`` recovery is
open). On equal deadlines the node budget fires before the exam limit (so a wrap-up that uses
its whole budget still ends normally), then the beats, then the rest. Each firing changes the
state so that it is not due again.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import recovery, texts
from ioa.runtime.effects import PromptLlm
from ioa.runtime.moves import move_to, stop_exam, take_edge
from ioa.runtime.step import Step, guardrail_payload
from ioa.runtime.transitions import TurnFacts, first_match, forced_exit, next_time_elapsed_ms
from ioa.schema import EndType, NodeKind, RecoveryScenario

DEFAULT_SILENCE_SEC: Final = 20.0
MAX_FIRINGS: Final = 32


class TimerKind(IntEnum):
    """Timer kinds, in tie-break order."""

    NODE_BUDGET = 0
    EXAM_LIMIT = 1
    WRAP_UP = 2
    HALFWAY = 3
    TIME_ELAPSED = 4
    SILENCE = 5


@dataclass(frozen=True, slots=True, order=True)
class Deadline:
    at_ms: int
    kind: TimerKind


def _silence_anchor(step: Step) -> int | None:
    """When the silence clock started, or None if the candidate is not expected to speak."""
    state = step.state
    node = state.node
    if node is None or node.thinking or state.admin_instruction() is not None:
        return None
    ended = state.examiner_ended_ms
    if ended is None or ended < node.entered_ms:
        return None
    if node.last_candidate_ms is not None and node.last_candidate_ms >= ended:
        return None
    episode = state.episode(RecoveryScenario.SILENCE.value)
    return max(ended, episode.last_attempt_ms) if episode is not None else ended


def deadlines(step: Step) -> list[Deadline]:
    """Every pending deadline at this instant."""
    state = step.state
    if state.exam_state is not ExamState.IN_PROGRESS or state.completed:
        return []
    now = step.now
    found: list[Deadline] = []
    clock = state.exam_clock
    total = step.plan.total_budget_ms
    if clock is not None and total is not None and clock.running:
        budget = total + clock.extension_ms
        elapsed = clock.elapsed(now)
        found.append(Deadline(now + budget - elapsed, TimerKind.EXAM_LIMIT))
        reserve = step.plan.wrap_up_reserve_ms
        if not state.wrap_up_warned and reserve is not None:
            found.append(Deadline(now + budget - reserve - elapsed, TimerKind.WRAP_UP))
        if not state.halfway_warned and not state.wrap_up_warned:
            found.append(Deadline(now + budget // 2 - elapsed, TimerKind.HALFWAY))
    node = state.node
    if node is None or not node.clock.running:
        return found
    plan_node = step.plan.node(node.node_id)
    if plan_node.is_end:
        return found
    node_elapsed = node.clock.elapsed(now)
    if plan_node.budget_ms is not None:
        budget = plan_node.budget_ms + node.clock.extension_ms
        found.append(Deadline(now + budget - node_elapsed, TimerKind.NODE_BUDGET))
    threshold = next_time_elapsed_ms(plan_node)
    if threshold is not None:
        found.append(Deadline(now + threshold - node_elapsed, TimerKind.TIME_ELAPSED))
    handler = plan_node.handler(RecoveryScenario.SILENCE)
    anchor = _silence_anchor(step) if handler is not None else None
    if handler is not None and anchor is not None:
        after = handler.afterSec if handler.afterSec is not None else DEFAULT_SILENCE_SEC
        found.append(Deadline(anchor + round(after * 1000), TimerKind.SILENCE))
    return found


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
    state = step.state
    node = state.node
    if kind is TimerKind.EXAM_LIMIT:
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
    elif kind is TimerKind.WRAP_UP:
        remaining = _remaining_exam(step)
        step.emit(
            p.TimeWarning(
                scope="exam",
                remainingSec=round(remaining / 1000, 3),
                remainingMs=remaining,
                nodeId=state.current_node_id,
                wrapUp=True,
            )
        )
        wrap_up = step.plan.wrap_up_node_id
        if node is not None and wrap_up is not None:
            kind_now = step.plan.node(node.node_id).kind
            if kind_now not in (NodeKind.WRAPUP, NodeKind.END):
                move_to(
                    step,
                    wrap_up,
                    edge_id="beat-wrap-up",
                    decision="time_exhausted",
                    exit_reason="forced_transition",
                    condition="wrap-up beat: the exam time budget is nearly used up",
                    bridge=texts.BRIDGE,
                )
    elif kind is TimerKind.HALFWAY:
        remaining = _remaining_exam(step)
        step.emit(
            p.TimeWarning(
                scope="exam",
                remainingSec=round(remaining / 1000, 3),
                remainingMs=remaining,
                nodeId=state.current_node_id,
            )
        )
    elif node is not None and kind is TimerKind.NODE_BUDGET:
        plan_node = step.plan.node(node.node_id)
        step.emit(
            guardrail_payload(
                guardrail_id=f"time-budget:{node.node_id}:{node.visit}",
                guardrail_type="time_budget_exceeded",
                severity="block",
                description=(
                    f"time budget of node {node.node_id} "
                    f"({((plan_node.budget_ms or 0) + node.clock.extension_ms) / 1000:g}s) "
                    "used up: forced exit"
                ),
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
                bridge=texts.BRIDGE,
                condition="node time budget used up (forced exit)",
            )
    elif node is not None and kind is TimerKind.TIME_ELAPSED:
        plan_node = step.plan.node(node.node_id)
        edge = first_match(
            plan_node,
            TurnFacts(
                candidate_turns=node.candidate_turns,
                elapsed_ms=node.clock.elapsed(step.now),
            ),
        )
        if edge is not None:
            take_edge(
                step, edge, decision="condition_met", exit_reason="completed", bridge=texts.BRIDGE
            )
    elif node is not None and kind is TimerKind.SILENCE:
        outcome = recovery.attempt(step, RecoveryScenario.SILENCE, "no candidate speech")
        if isinstance(outcome, recovery.Attempt):
            speak_recovery(step, outcome)


def speak_recovery(step: Step, outcome: recovery.Attempt) -> None:
    """Carry out a recovery attempt the runtime itself initiated (no LLM text to use)."""
    if outcome.action.value == "rephrase":
        step.effect(PromptLlm(recovery.rephrase_instruction(outcome.scenario)))
        return
    if outcome.scenario is RecoveryScenario.STT_LOW_CONFIDENCE:
        step.say(texts.STT_REPROMPT, "recovery")
        return
    step.say(recovery.ACTION_TEXTS[outcome.action], "recovery")


def fire_due_timers(step: Step) -> int:
    """Fire every timer due at ``step.now``, earliest first; returns how many fired."""
    fired = 0
    for _ in range(MAX_FIRINGS):
        due = [d for d in deadlines(step) if d.at_ms <= step.now]
        if not due:
            break
        _fire(step, min(due).kind)
        fired += 1
    return fired
