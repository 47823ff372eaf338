"""Applying one event to the controller state: the only way the state changes.

``apply_event(state, event, plan)`` is used by the live controller on every event it emits and
by :mod:`ioa.runtime.replay` on every stored event, which is why a rebuilt controller equals the
live one. It trusts the event (it was validated when built or stored) and never decides
anything: it only records what the event says happened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from ioa.events import EventEnvelope, ExamState, parse_timestamp
from ioa.events import payloads as p
from ioa.materials import Cue, Passage
from ioa.materials.draw import AttachedMaterial
from ioa.runtime.clock import to_ms
from ioa.runtime.commands import CONFIRMED_COMMANDS
from ioa.runtime.plan import ExamPlan
from ioa.runtime.state import (
    Draw,
    Episode,
    Instruction,
    NodeVisit,
    RuntimeState,
    StopWatch,
    Turn,
)
from ioa.schema import CandidateCommandType, RecoveryAction, RecoveryScenario

PAUSE_REASON = "paused"
AWAY_REASON = "candidate_away"
"""The part's clock does not run while the candidate has no connection (the exam's does)."""


def event_ms(event: EventEnvelope) -> int:
    """The event's timestamp in epoch milliseconds."""
    return to_ms(parse_timestamp(event.timestamp))


@dataclass(frozen=True, slots=True)
class _Applying:
    """What every recorder may need besides the payload: when, the plan, the correlation id."""

    at: int
    plan: ExamPlan
    correlation_id: str | None


def _state_changed(state: RuntimeState, payload: p.ExamStateChanged, ctx: _Applying) -> None:
    at = ctx.at
    to_state = ExamState(payload.toState)
    state.exam_state = to_state
    if to_state is ExamState.IN_PROGRESS:
        if state.started_ms is None:
            state.started_ms = at
            state.exam_clock = StopWatch(origin_ms=at)
        if state.exam_clock is not None:
            state.exam_clock.start(PAUSE_REASON, at)
        if state.node is not None:
            state.node.clock.start(PAUSE_REASON, at)
        state.pause_reason = None
    elif to_state is ExamState.PAUSED:
        state.pause_reason = payload.reason
        if state.exam_clock is not None:
            state.exam_clock.stop(PAUSE_REASON, at)
        if state.node is not None:
            state.node.clock.stop(PAUSE_REASON, at)


def _node_entered(state: RuntimeState, payload: p.NodeEntered, ctx: _Applying) -> None:
    at = ctx.at
    clock = StopWatch(origin_ms=at)
    if state.exam_state is ExamState.PAUSED:
        clock.stop(PAUSE_REASON, at)
    if state.offline:
        clock.stop(AWAY_REASON, at)
    state.node = NodeVisit(
        node_id=payload.nodeId, entered_ms=at, visit=len(state.nodes_visited) + 1, clock=clock
    )
    state.nodes_visited.append(payload.nodeId)
    state.last_node_id = payload.nodeId


def _node_exited(state: RuntimeState, payload: p.NodeExited, ctx: _Applying) -> None:
    node = ctx.plan.nodes.get(payload.nodeId)
    if node is not None and node.max_follow_ups > 0:
        state.probe_counts.append(payload.followUpsUsed)
    state.node = None
    state.transitions += 1


def _transcript(state: RuntimeState, payload: p.TranscriptFinal, ctx: _Applying) -> None:
    at = ctx.at
    node = state.node
    counted = (
        payload.speaker == "candidate"
        and node is not None
        and node.node_id == payload.nodeId
        and state.exam_state is ExamState.IN_PROGRESS
    )
    turn = Turn(
        turn_id=payload.turnId,
        node_id=payload.nodeId,
        speaker=payload.speaker,
        text=payload.text,
        confidence=float(payload.confidence),
        start_ms=payload.startTimeMs,
        end_ms=payload.endTimeMs,
        at_ms=at,
        counted=counted,
        index=len(state.turn_order),
    )
    state.turns[turn.turn_id] = turn
    state.turn_order.append(turn.turn_id)
    if payload.speaker != "candidate":
        return
    if state.activity.pop("composing", None) is not None:
        state.last_activity_ms = at  # a typed answer sent ends the typing
    opened = state.opened_ms or 0
    start_abs = opened + payload.startTimeMs
    if state.examiner_ended_ms is not None and state.examiner_ended_ms >= _last_candidate_end(
        state, turn.turn_id
    ):
        state.latency_total_ms += max(0, start_abs - state.examiner_ended_ms)
        state.latency_count += 1
        state.monologue_ms = 0
    state.monologue_ms += payload.endTimeMs - payload.startTimeMs
    state.longest_monologue_ms = max(state.longest_monologue_ms, state.monologue_ms)
    if node is not None and node.node_id == payload.nodeId:
        node.turn_ids.append(turn.turn_id)
        node.turn_texts.append(turn.text)
        node.last_candidate_ms = at
        node.thinking = False
        if counted:
            node.candidate_turns += 1
            state.candidate_turns += 1


def _corrected(state: RuntimeState, payload: p.TranscriptCorrected, ctx: _Applying) -> None:
    """The misheard turn is superseded by the correction turn: it no longer counts as a turn
    of the node (the correction does)."""
    turn = state.turns.get(payload.turnId) if payload.turnId is not None else None
    if turn is None or turn.corrected_by is not None:
        return
    turn.corrected_by = payload.correctionTurnId
    node = state.node
    if turn.counted and node is not None and turn.turn_id in node.turn_ids:
        turn.counted = False
        node.candidate_turns -= 1
        state.candidate_turns -= 1


def _last_candidate_end(state: RuntimeState, exclude: str) -> int:
    """Epoch ms at which the previous candidate turn (before ``exclude``) ended."""
    opened = state.opened_ms or 0
    for turn_id in reversed(state.turn_order):
        if turn_id == exclude:
            continue
        turn = state.turns[turn_id]
        if turn.speaker == "candidate":
            return opened + turn.end_ms
    return -1


def _command(state: RuntimeState, payload: p.CandidateCommandReceived, ctx: _Applying) -> None:
    correlation = ctx.correlation_id
    state.commands_seen.add(payload.commandId)
    if (
        payload.origin in ("llm", "classifier")
        and correlation in state.turns
        and payload.command not in ANSWER_STATEMENTS
    ):
        state.command_turns.add(correlation)
    node = state.node
    if node is None:
        return
    if payload.commandType == f"{payload.command}_confirmation":
        node.pending_command = node.pending_command_id = None
    elif (
        payload.command in CONFIRMED_COMMANDS
        and payload.accepted
        and payload.commandType == payload.command
        and payload.origin != "envelope"
    ):
        node.pending_command, node.pending_command_id = payload.command, payload.commandId
    elif payload.command == "thinking_aloud" and payload.accepted:
        node.thinking = True
    if payload.accepted and payload.command in _ASKED_AGAIN:
        node.examiner_texts.clear()  # hearing the question again is what they asked for


ANSWER_STATEMENTS: Final = frozenset({CandidateCommandType.SIGNAL_CONFIDENCE.value})
"""Commands that say something about the answer and leave the turn an answer (how sure the
candidate is): recorded, and the turn still counts as one (follow-up budget, owed reply)."""

_ASKED_AGAIN = frozenset(
    {
        CandidateCommandType.REPEAT,
        CandidateCommandType.REQUEST_REPHRASE,
        CandidateCommandType.CLARIFICATION,
    }
)
"""Accepted commands after which the examiner may say its question again (the
repetition-loop window restarts)."""


def _recovery_started(state: RuntimeState, payload: p.RecoveryStarted, ctx: _Applying) -> None:
    at, plan = ctx.at, ctx.plan
    episode = state.episodes.get(payload.recoveryId)
    if episode is None:
        episode = Episode(payload.recoveryId, payload.recoveryType, payload.nodeId, 0, at, at)
        state.episodes[payload.recoveryId] = episode
        state.recoveries_started += 1
    episode.attempts += 1
    episode.last_attempt_ms = at
    node = state.node
    if node is None or node.node_id != payload.nodeId:
        return
    plan_node = plan.nodes.get(node.node_id)
    if plan_node is None or payload.recoveryType not in RecoveryScenario.__members__.values():
        return
    handler = plan_node.handler(RecoveryScenario(payload.recoveryType))
    if handler is not None and handler.action is RecoveryAction.PAUSE_TIMER:
        node.clock.stop(payload.recoveryId, at)


def _recovery_resolved(state: RuntimeState, payload: p.RecoveryResolved, ctx: _Applying) -> None:
    state.episodes.pop(payload.recoveryId, None)
    if state.node is not None:
        state.node.clock.start(payload.recoveryId, ctx.at)


def _reanchor(
    state: RuntimeState,
    scope: str,
    remaining_ms: int,
    node_id: str | None,
    at: int,
    plan: ExamPlan,
) -> int | None:
    """Set the scope's clock extension so that exactly ``remaining_ms`` is left at ``at``;
    returns the exam's total budget with the extension (``None`` for the node scope or when
    the scope has no running budget)."""
    if scope == "exam":
        clock = state.exam_clock
        budget = plan.total_budget_ms
        if clock is None or budget is None:
            return None
        clock.extension_ms = remaining_ms - budget + clock.elapsed(at)
        return budget + clock.extension_ms
    node = state.node
    if node is None or node.node_id != node_id:
        return None
    node_budget = plan.nodes[node.node_id].budget_ms
    if node_budget is not None:
        node.clock.extension_ms = remaining_ms - node_budget + node.clock.elapsed(at)
    return None


def _time_warning(state: RuntimeState, payload: p.TimeWarning, ctx: _Applying) -> None:
    """Re-anchor the clock: after the warning, ``remainingMs`` is what is left. (A proctor's
    extension is a ``proctor_action`` followed by such a warning with more time left than
    before; logs written before ``proctor_action`` existed have the warning only.)"""
    total = _reanchor(state, payload.scope, payload.remainingMs, payload.nodeId, ctx.at, ctx.plan)
    if payload.scope != "exam" or total is None:
        return
    if payload.wrapUp:
        state.wrap_up_warned = True
    else:
        state.halfway_warned = payload.remainingMs * 2 <= total


def _proctor_action(state: RuntimeState, payload: p.ProctorActionTaken, ctx: _Applying) -> None:
    """An extension re-anchors its scope's clock to the remaining time it records; every other
    action changes the state through the events that follow it (pause, moves, the end)."""
    if ctx.correlation_id:
        state.proctor_commands.add(ctx.correlation_id)
    if payload.action == "extend_time" and payload.scope and payload.remainingMs is not None:
        _reanchor(state, payload.scope, payload.remainingMs, payload.nodeId, ctx.at, ctx.plan)


def _instruction(state: RuntimeState, payload: p.ProctorInstruction, ctx: _Applying) -> None:
    existing = state.instructions.get(payload.instructionId)
    if existing is None:
        state.instructions[payload.instructionId] = Instruction(
            payload.instructionId,
            payload.proctorId,
            payload.mode,
            payload.text,
            payload.status,
            ctx.at,
        )
    else:
        existing.status = payload.status


def _activity(state: RuntimeState, payload: p.CandidateActivity, ctx: _Applying) -> None:
    """What the candidate is doing. Activity that starts while a connection of theirs is down
    (a late or stray report) is kept in the log but does not make them active: they count as
    away until every channel is back, so it holds no timer and cannot stall the absence limit."""
    at = ctx.at
    if payload.state == "started":
        if not state.offline:
            state.activity.setdefault(payload.activity, at)
    else:
        state.activity.pop(payload.activity, None)
        state.last_activity_ms = at
    state.silence_held_node = None


def _connection(state: RuntimeState, payload: p.CandidateConnectionChanged, ctx: _Applying) -> None:
    at = ctx.at
    channel = payload.channel or "exam_room"
    if payload.status == "disconnected":
        state.offline.setdefault(channel, at)
        if state.node is not None:
            state.node.clock.stop(AWAY_REASON, at)
        # Whatever they were doing in the room stopped with the connection.
        if state.activity:
            state.activity.clear()
            state.last_activity_ms = at
    else:
        state.offline.pop(channel, None)
        if not state.offline and state.node is not None:
            state.node.clock.start(AWAY_REASON, at)


def _utterance_started(
    state: RuntimeState, payload: p.ExaminerUtteranceStarted, ctx: _Applying
) -> None:
    state.examiner_started_ms = ctx.at
    if payload.purpose != "bridge":  # linking words ("Thank you.", "Welcome back.") answer nothing
        state.answered_upto = len(state.turn_order)


def _utterance_final(
    state: RuntimeState, payload: p.ExaminerUtteranceFinal, ctx: _Applying
) -> None:
    state.examiner_ended_ms = ctx.at
    state.examiner_turns += 1
    state.monologue_ms = 0
    node = state.node
    if node is not None and node.node_id == payload.nodeId:
        if payload.purpose in ("question", "follow_up"):
            node.last_question = payload.text
        if payload.purpose in ("question", "follow_up", "prompt"):
            node.examiner_texts.append(payload.text)


def _evidence(state: RuntimeState, payload: p.EvidenceSignal, ctx: _Applying) -> None:
    state.ledger.apply_payload(payload.model_dump(mode="json"))


def _follow_up(state: RuntimeState, payload: p.FollowUpUsed, ctx: _Applying) -> None:
    if state.node is not None:
        state.node.follow_ups = payload.followUpIndex
        if payload.followUpIndex == 1:
            state.node.follow_up_started_ms = ctx.at
    state.total_follow_ups += 1


def _guardrail(state: RuntimeState, payload: p.GuardrailTriggered, ctx: _Applying) -> None:
    """Counted; a silence hold and a distrusted turn are read from the guardrail's id."""
    state.guardrails += 1
    if payload.guardrailId.startswith("silence-hold:"):
        state.silence_held_node = payload.guardrailId.removeprefix("silence-hold:")
    if payload.guardrailId.startswith("prompt-injection:"):
        state.distrusted_turns.add(payload.guardrailId.removeprefix("prompt-injection:"))


def _misconception(state: RuntimeState, payload: p.MisconceptionDetected, ctx: _Applying) -> None:
    state.misconceptions += 1
    if state.node is not None and state.node.node_id == payload.nodeId:
        state.node.misconceptions.append(payload.description)


def _hesitation(state: RuntimeState, payload: p.HesitationDetected, ctx: _Applying) -> None:
    state.hesitations += 1


def _self_correction(
    state: RuntimeState, payload: p.SelfCorrectionDetected, ctx: _Applying
) -> None:
    state.self_corrections += 1


def _system_error(state: RuntimeState, payload: p.SystemErrorPayload, ctx: _Applying) -> None:
    state.system_errors += 1


def _bot_ready(state: RuntimeState, payload: p.BotReady, ctx: _Applying) -> None:
    state.opened_ms = ctx.at
    state.input_mode = payload.inputMode or "voice"


def _held(state: RuntimeState, payload: p.TransitionHeld, ctx: _Applying) -> None:
    node = state.node
    if node is None or node.node_id != payload.nodeId:
        return
    held = payload.phase == "held"
    node.held_edge = payload.edgeId if held else None
    node.held_ms = ctx.at if held else None


def _material(state: RuntimeState, payload: p.MaterialAttached, ctx: _Applying) -> None:
    texts = payload.passageTexts
    passages = tuple(
        Passage(x.passageId, x.index, x.start, x.end, Cue(x.cue), str(texts.get(x.passageId, "")))
        for x in payload.passages
    )
    state.materials.append(AttachedMaterial(payload.materialId, payload.materialKind, passages))


def _passage_drawn(state: RuntimeState, payload: p.PassageDrawn, ctx: _Applying) -> None:
    state.draws.setdefault(
        payload.nodeId,
        Draw(payload.outcome, payload.materialKind, payload.passageId, payload.text, payload.cue),
    )


def _completed(state: RuntimeState, payload: p.ExamCompleted, ctx: _Applying) -> None:
    state.completed = True
    state.completion_reason = payload.reason


_Recorder = Callable[[RuntimeState, p.Payload, _Applying], None]


def _on[P: p.Payload](
    kind: type[P], record: Callable[[RuntimeState, P, _Applying], None]
) -> tuple[type[p.Payload], _Recorder]:
    """A table row: the payload type and its recorder."""

    def run(state: RuntimeState, payload: p.Payload, ctx: _Applying) -> None:
        if isinstance(payload, kind):
            record(state, payload, ctx)

    return kind, run


_RECORDERS: Final[Mapping[type[p.Payload], _Recorder]] = dict(
    (
        _on(p.TranscriptFinal, _transcript),
        _on(p.TranscriptCorrected, _corrected),
        _on(p.ExaminerUtteranceStarted, _utterance_started),
        _on(p.ExaminerUtteranceFinal, _utterance_final),
        _on(p.EvidenceSignal, _evidence),
        _on(p.FollowUpUsed, _follow_up),
        _on(p.CandidateCommandReceived, _command),
        _on(p.ExamStateChanged, _state_changed),
        _on(p.NodeEntered, _node_entered),
        _on(p.NodeExited, _node_exited),
        _on(p.CandidateActivity, _activity),
        _on(p.CandidateConnectionChanged, _connection),
        _on(p.GuardrailTriggered, _guardrail),
        _on(p.RecoveryStarted, _recovery_started),
        _on(p.RecoveryResolved, _recovery_resolved),
        _on(p.TimeWarning, _time_warning),
        _on(p.ProctorActionTaken, _proctor_action),
        _on(p.ProctorInstruction, _instruction),
        _on(p.MisconceptionDetected, _misconception),
        _on(p.HesitationDetected, _hesitation),
        _on(p.SelfCorrectionDetected, _self_correction),
        _on(p.SystemErrorPayload, _system_error),
        _on(p.BotReady, _bot_ready),
        _on(p.ExamCompleted, _completed),
        _on(p.TransitionHeld, _held),
        _on(p.MaterialAttached, _material),
        _on(p.PassageDrawn, _passage_drawn),
    )
)
"""What each payload type records; a type without a row changes nothing but the counters."""


def apply_event(state: RuntimeState, event: EventEnvelope, plan: ExamPlan) -> None:
    """Record what ``event`` says happened (mutates ``state``): the counters every event
    moves, then the recorder of its payload type (:data:`_RECORDERS`)."""
    at = event_ms(event)
    state.events_applied += 1
    if event.seq is not None:
        state.last_seq = event.seq
    state.last_event_ms = at
    record = _RECORDERS.get(type(event.payload))
    if record is not None:
        record(state, event.payload, _Applying(at, plan, event.correlationId))
