"""A node's completion held while the candidate's spoken answer may go on (issue #30, runtime
semantics §18).

A reply that comes a second after the candidate stops must be decided on a short pause, and a
short pause also falls between two sentences of one answer. So the host may end a spoken turn on
the short *reply pause* and tell the controller the turn is ``reopenable``
(:class:`~ioa.runtime.inputs.Observation`) until the longer *finished pause* has passed with no
more speech (:class:`~ioa.runtime.inputs.TurnSettled`). On such a turn:

* whatever keeps the candidate at the node (a follow-up, a prompt) is said at once, as on any
  turn: if they go on, the examiner stops and their next words are more of the same answer;
* a **natural completion** (the LLM's ``evidenceSufficient``, approved by the completion policy,
  along an ``always`` or ``evidence_satisfied`` edge) is **held**: ``transition_held`` (``held``),
  and the examiner's words for it (the bridge) are said at once, but the node is not left;
* the held edge is **taken** (``node_exited``, ``transition_decision`` ``natural_completion``,
  the next node's question) when the turn settles, when a bot takes the session over
  (:class:`~ioa.runtime.inputs.BotResumed`: the bot that would settle it is gone), before any
  input that is not part of the turn-taking (a fault, a proctor's action, a command:
  ``ioa.runtime.controller.TURN_TAKING``; a fault that pauses the exam then finds the node
  left, as when the edge was taken at once), or at the latest :data:`HELD_LIMIT_MS` after it
  was held while the candidate is silent;
* it is **dropped** (``transition_held``, ``dropped``) when the candidate starts speaking or a
  transcript of theirs arrives first: the answer goes on at the same node, and the next
  observation decides again on all of it. Talking over the bridge is no interruption
  (:mod:`ioa.runtime.interruption`).

Edges taken on conditions (turn count, time, commands, escalations) and forced exits are never
held: they do not depend on whether the answer is over.
"""

from __future__ import annotations

from typing import Final

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime.moves import take_edge
from ioa.runtime.step import Step
from ioa.schema import Transition

HELD_LIMIT_MS: Final = 5_000
"""The longest a completion stays held while the candidate is silent, should the host's
:class:`~ioa.runtime.inputs.TurnSettled` not come (the finished pause is 1.5 s by default)."""

HOLD_REASON: Final = "the spoken answer ended on the reply pause and may go on"
DROP_REASON: Final = "the candidate went on with their answer"


def hold(step: Step, edge: Transition, *, bridge: str | None) -> None:
    """Hold ``edge`` at the current node and say ``bridge`` (module docstring)."""
    node = step.state.node
    if node is None:
        return
    step.emit(
        p.TransitionHeld(phase="held", nodeId=node.node_id, edgeId=edge.id, reason=HOLD_REASON)
    )
    if bridge and bridge.strip():
        step.say(bridge, "bridge")
    step.result.update({"status": "held", "edgeId": edge.id})


def _held_edge(step: Step) -> Transition | None:
    node = step.state.node
    if node is None or node.held_edge is None:
        return None
    plan_node = step.plan.node(node.node_id)
    return next((t for t in plan_node.transitions if t.id == node.held_edge), None)


def settle(step: Step) -> None:
    """The answer stayed over: take the held edge, if any, unless the candidate is speaking
    (their words drop it) or the exam is not in progress (it waits for the resume)."""
    edge = _held_edge(step)
    state = step.state
    if edge is None:
        drop(step)  # an edge the plan does not have (never held by this runtime): let it go
        step.result.setdefault("status", "ignored")
        step.result.setdefault("reason", "no completion is held")
        return
    if state.exam_state is not ExamState.IN_PROGRESS or "speaking" in state.activity:
        step.result.setdefault("status", "ignored")
        step.result.setdefault("reason", "the candidate is speaking or the exam is not running")
        return
    take_edge(step, edge, decision="natural_completion", exit_reason="completed", bridge=None)


def settle_first(step: Step) -> None:
    """Before an input that is not part of the turn-taking (a fault, a proctor's action, a
    command...): a held edge is taken as :func:`settle` would, and the input's own result is
    left as it was (nothing is held: nothing happens)."""
    node = step.state.node
    if node is None or node.held_edge is None:
        return
    result = dict(step.result)
    settle(step)
    step.result.clear()
    step.result.update(result)


def drop(step: Step) -> None:
    """The candidate went on: the held edge, if any, is dropped and the node stays."""
    node = step.state.node
    if node is None or node.held_edge is None:
        return
    step.emit(
        p.TransitionHeld(
            phase="dropped", nodeId=node.node_id, edgeId=node.held_edge, reason=DROP_REASON
        )
    )


def deadline(step: Step) -> int | None:
    """When a held edge is taken without the host's word (epoch ms), None when none is held."""
    node = step.state.node
    if node is None or node.held_edge is None or node.held_ms is None:
        return None
    return node.held_ms + HELD_LIMIT_MS
