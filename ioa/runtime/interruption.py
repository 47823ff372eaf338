"""Voice barge-in (``interruption``, our 03 chapter §8): the candidate started speaking while the
examiner was still speaking (:class:`ioa.runtime.inputs.CandidateInterrupted`).

The input counts only while the exam is in progress and an examiner utterance of the current
node is in flight (started, not yet finished). With an ``interruption`` handler at the node it is
a recovery attempt: the examiner stops and lets the candidate finish, nothing is spoken over
them and the unfinished utterance is not re-spoken verbatim (the LLM is told so; with the
``rephrase`` action it is also told to ask its question in different words if it comes back to
it). Repeated interruptions are further attempts of the open episode and escalate after
``maxAttempts``. The episode resolves (``candidate_resumed``) on the candidate's first final turn
after an examiner utterance at the node that started after the latest interruption and was
heard to the end. Without a handler nothing is recorded: talking over the examiner is ordinary
conversation.
"""

from __future__ import annotations

from ioa.events import ExamState
from ioa.runtime import recovery, texts
from ioa.runtime.effects import InjectContext
from ioa.runtime.inputs import CandidateInterrupted
from ioa.runtime.step import Step
from ioa.schema import RecoveryAction, RecoveryEscalation, RecoveryScenario

SCENARIO = RecoveryScenario.INTERRUPTION


def _in_flight(step: Step, utterance_id: str | None) -> str | None:
    """The interrupted utterance: ``utterance_id`` if it is being spoken at the current node,
    else (no id given) the latest such utterance."""
    node_id = step.state.current_node_id
    speaking = [
        uid
        for uid, pending in step.outbox.pending.items()
        if pending.started and pending.node_id == node_id
    ]
    if utterance_id is not None:
        return utterance_id if utterance_id in speaking else None
    return speaking[-1] if speaking else None


def _carry_out(step: Step, action: RecoveryAction) -> None:
    instruction = texts.INTERRUPTION_INSTRUCTION
    if action is RecoveryAction.REPHRASE:
        instruction += texts.INTERRUPTION_REPHRASE_INSTRUCTION
    step.effect(InjectContext(instruction))


def handle_interruption(step: Step, item: CandidateInterrupted) -> None:
    """Record one barge-in (module docstring)."""
    state = step.state
    if state.completed or state.node is None or state.exam_state is not ExamState.IN_PROGRESS:
        step.result.update({"status": "ignored", "reason": f"the exam is {state.exam_state}"})
        return
    utterance_id = _in_flight(step, item.utterance_id)
    if utterance_id is None:
        step.result.update({"status": "ignored", "reason": "the examiner is not speaking"})
        return
    if step.outbox.pending[utterance_id].purpose == "bridge":
        # A bridge still at the node is a held completion's (runtime semantics §18): the
        # candidate going on over it is continuing their answer, not interrupting.
        step.result.update(
            {"status": "ignored", "reason": "the candidate went on with their answer"}
        )
        return
    outcome = recovery.attempt(
        step,
        SCENARIO,
        f"the candidate started speaking while the examiner was speaking ({utterance_id})",
    )
    if outcome is None:
        step.result.update({"status": "noted"})
        return
    if isinstance(outcome, recovery.Attempt):
        _carry_out(step, outcome.action)
        step.result.update({"status": "recovery", "recovery": SCENARIO.value})
        return
    step.result.setdefault("status", "recovery")
    if outcome.escalation in (RecoveryEscalation.RETRY, RecoveryEscalation.REPHRASE) and (
        not outcome.left_node and state.exam_state is ExamState.IN_PROGRESS
    ):
        handler = recovery.handler_for(step, SCENARIO)
        if handler is not None:
            _carry_out(step, handler.action)  # a fresh episode started: its first attempt


def resolve_if_heard(step: Step) -> None:
    """A candidate final turn: close the open interruption episode if the examiner has since
    finished an utterance that started after the latest interruption."""
    state = step.state
    episode = state.episode(SCENARIO.value)
    started, ended = state.examiner_started_ms, state.examiner_ended_ms
    if episode is None or started is None or ended is None:
        return
    if started > episode.last_attempt_ms and ended >= started:
        recovery.resolve(step, SCENARIO)
