"""Moving through the exam graph: entering and leaving nodes, taking edges, ending the exam
(our 03 chapter §4-§5).

A node change is always, in order: ``recovery_resolved`` for the node's open recoveries,
``node_exited`` (with its reason), ``transition_decision`` (edge, reason, condition, pool),
``node_entered``; all three share a ``trans-N`` correlation id. Entering an end node completes
the exam: ``exam_state_changed`` then ``exam_completed``; after that the controller emits
nothing but the end node's closing utterance.
"""

from __future__ import annotations

from typing import Final, Literal

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import texts
from ioa.runtime.effects import EndSession, EnterAdminNode, EnterNode, PromptLlm
from ioa.runtime.grounding import enter_grounded, fallback_question
from ioa.runtime.metrics import interaction_metrics
from ioa.runtime.plan import NodePlan
from ioa.runtime.state import NodeVisit
from ioa.runtime.step import Step
from ioa.runtime.transitions import condition_text, resolve_target
from ioa.schema import EndType, Transition

ExitReason = Literal[
    "completed",
    "time_exhausted",
    "follow_ups_exhausted",
    "candidate_skip",
    "candidate_skip_with_return",
    "forced_transition",
]
DecisionReason = Literal[
    "natural_completion",
    "follow_ups_exhausted",
    "time_exhausted",
    "condition_met",
    "candidate_skip",
    "guardrail_override",
]
Resolution = Literal["candidate_resumed", "re_prompted", "skipped_to_next", "exam_terminated"]
CompletionReason = Literal[
    "all_nodes_visited",
    "time_total_exhausted",
    "candidate_ended",
    "proctor_ended",
    "system_error",
    "emergency_stop",
    "candidate_absent",
]

END_STATES: Final[dict[EndType, ExamState]] = {
    EndType.NORMAL: ExamState.COMPLETED,
    EndType.TIMEOUT: ExamState.EXPIRED,
    EndType.TERMINATED: ExamState.ABORTED,
    EndType.TECHNICAL_FAILURE: ExamState.ABORTED,
}
END_REASONS: Final[dict[EndType, CompletionReason]] = {
    EndType.NORMAL: "all_nodes_visited",
    EndType.TIMEOUT: "time_total_exhausted",
    EndType.TERMINATED: "proctor_ended",
    EndType.TECHNICAL_FAILURE: "system_error",
}


def resolve_recovery(step: Step, recovery_id: str, resolution: Resolution) -> None:
    """Close one open recovery episode."""
    episode = step.state.episodes.get(recovery_id)
    if episode is None:
        return
    step.emit(
        p.RecoveryResolved(
            recoveryId=recovery_id,
            resolution=resolution,
            durationSec=round(max(0, step.now - episode.started_ms) / 1000, 3),
        ),
        correlation_id=recovery_id,
    )


def resolve_node_recoveries(step: Step, resolution: Resolution) -> None:
    """Close every open recovery episode of the current node."""
    node = step.state.node
    for episode in list(step.state.episodes.values()):
        if node is None or episode.node_id == node.node_id:
            resolve_recovery(step, episode.recovery_id, resolution)


def _correlation(step: Step) -> str:
    return f"trans-{step.state.transitions + 1:03d}"


def leave_node(step: Step, reason: ExitReason, resolution: Resolution = "skipped_to_next") -> None:
    """Close the node's recoveries and emit ``node_exited``."""
    node = step.state.node
    if node is None:
        return
    resolve_node_recoveries(step, resolution)
    step.emit(
        p.NodeExited(
            nodeId=node.node_id,
            reason=reason,
            durationSec=round(max(0, step.now - node.entered_ms) / 1000, 3),
            followUpsUsed=node.follow_ups,
        ),
        correlation_id=_correlation(step),
    )


def _node_entered_payload(plan_node: NodePlan) -> p.NodeEntered:
    budget_ms = plan_node.budget_ms or 0
    return p.NodeEntered(
        nodeId=plan_node.node_id,
        nodeKind=plan_node.kind,
        rubricItemIds=list(plan_node.targets),
        maxFollowUps=plan_node.max_follow_ups,
        timeBudgetSec=budget_ms / 1000 if budget_ms % 1000 else budget_ms // 1000,
        timeBudgetMs=budget_ms,
    )


def activate_admin(step: Step) -> None:
    """Run the oldest pending immediate proctor instruction through the admin node."""
    instruction = step.state.admin_instruction()
    if instruction is None or step.state.node is None or step.state.terminal:
        return
    step.effect(EnterAdminNode(instruction.instruction_id, instruction.text))
    step.effect(PromptLlm(texts.ADMIN_INSTRUCTION.format(text=instruction.text)))


def enter_node(
    step: Step, node_id: str, correlation_id: str | None = None, *, starts_exam: bool = False
) -> None:
    """Emit ``node_entered`` and tell the bot to switch node and open it (``starts_exam``: the
    first node, with an empty context whatever the node's strategy)."""
    plan_node = step.plan.node(node_id)
    step.emit(_node_entered_payload(plan_node), correlation_id=correlation_id)
    grounded = enter_grounded(step, plan_node, correlation_id)  # passage_drawn, GRD-004
    additions = grounded + tuple(
        texts.QUEUED_INSTRUCTION.format(text=i.text)
        for i in step.state.pending_instructions("queued")
    )
    step.effect(
        EnterNode(
            node_id=node_id,
            context_strategy="reset" if starts_exam else plan_node.context_strategy,
            summary_prompt=plan_node.summary_prompt,
            task_additions=additions,
            is_end=plan_node.is_end,
            starts_exam=starts_exam,
        )
    )
    if plan_node.is_end:
        complete_exam(step, plan_node)
        return
    ask_question(step, plan_node)
    activate_admin(step)


def question_unheard(step: Step, node: NodeVisit) -> bool:
    """The examiner has said nothing the candidate heard at this visit of ``node``, and
    nothing of the node is queued to be said."""
    queued = any(u.node_id == node.node_id for u in step.outbox.pending.values())
    return not node.examiner_texts and not queued


def ask_question(step: Step, plan_node: NodePlan) -> None:
    """Ask the node's question: its opening verbatim, the fallback question of a grounded node
    whose draw found no passage verbatim, else the LLM opens the part."""
    fallback = fallback_question(step.state, plan_node)
    if plan_node.opening:
        step.say(plan_node.opening, "question", node_id=plan_node.node_id)
    elif fallback is not None:
        step.say(fallback, "question", node_id=plan_node.node_id)
    else:
        step.effect(PromptLlm(texts.OPEN_NODE_INSTRUCTION))


def take_edge(
    step: Step,
    transition: Transition,
    *,
    decision: DecisionReason,
    exit_reason: ExitReason,
    bridge: str | None = None,
    condition: str | None = None,
) -> None:
    """Leave the current node along ``transition`` (resolving a pool) and enter its target."""
    node = step.state.node
    if node is None:
        return
    correlation = _correlation(step)
    if bridge:
        step.say(bridge, "bridge")
    target = resolve_target(step.plan, transition.targetNodeId, step.rng)
    leave_node(step, exit_reason)
    step.emit(
        p.TransitionDecision(
            fromNodeId=node.node_id,
            toNodeId=target.node_id,
            edgeId=transition.id,
            reason=decision,
            conditionEvaluated=condition or condition_text(transition),
            poolId=target.pool_id,
        ),
        correlation_id=correlation,
    )
    step.result.update({"status": "transitioned", "nextNode": target.node_id})
    enter_node(step, target.node_id, correlation)


def move_to(
    step: Step,
    node_id: str,
    *,
    edge_id: str,
    decision: DecisionReason,
    exit_reason: ExitReason,
    condition: str,
    bridge: str | None = None,
) -> None:
    """A runtime-decided move that follows no package edge (the wrap-up beat)."""
    node = step.state.node
    if node is None:
        return
    correlation = _correlation(step)
    if bridge:
        step.say(bridge, "bridge")
    leave_node(step, exit_reason)
    step.emit(
        p.TransitionDecision(
            fromNodeId=node.node_id,
            toNodeId=node_id,
            edgeId=edge_id,
            reason=decision,
            conditionEvaluated=condition,
        ),
        correlation_id=correlation,
    )
    step.result.update({"status": "transitioned", "nextNode": node_id})
    enter_node(step, node_id, correlation)


def complete_exam(
    step: Step,
    end_node: NodePlan | None,
    *,
    reason: CompletionReason | None = None,
    to_state: ExamState | None = None,
    speak_closing: bool = True,
) -> None:
    """Speak the closing (unless nobody is there to hear it), cancel pending instructions,
    move to the final exam state and emit ``exam_completed`` (once)."""
    state = step.state
    if state.completed:
        return
    end_type = end_node.end_type if end_node is not None else EndType.NORMAL
    end_type = end_type or EndType.NORMAL
    closing = end_node.closing if end_node is not None else None
    if speak_closing:
        step.say(closing or step.plan.texts.closing_fallback, "closing")
    for instruction in state.pending_instructions():
        step.emit(
            p.ProctorInstruction(
                instructionId=instruction.instruction_id,
                proctorId=instruction.proctor_id,
                mode="immediate" if instruction.mode == "immediate" else "queued",
                text=instruction.text,
                status="cancelled",
                nodeId=state.current_node_id,
            ),
            correlation_id=instruction.instruction_id,
        )
    final_state = to_state or END_STATES[end_type]
    if state.exam_state is not final_state:
        step.emit(
            p.ExamStateChanged(
                fromState=state.exam_state,
                toState=final_state,
                reason=reason or END_REASONS[end_type],
            )
        )
    origin = state.started_ms if state.started_ms is not None else (state.opened_ms or step.now)
    elapsed = max(0, step.now - origin)
    step.emit(
        p.ExamCompleted(
            reason=reason or END_REASONS[end_type],
            totalTurns=state.candidate_turns + state.examiner_turns,
            totalElapsedMs=elapsed,
            totalDurationSec=round(elapsed / 1000, 3),
            nodesVisited=list(state.nodes_visited),
            totalEvidenceSignals=len(state.ledger),
            totalFollowUps=state.total_follow_ups,
            guardrailTriggerCount=state.guardrails,
            interactionMetrics=interaction_metrics(state),
        )
    )
    step.effect(EndSession(reason or END_REASONS[end_type]))
    step.result.update({"status": "exam_completed"})


def stop_exam(
    step: Step,
    *,
    end_type: EndType,
    reason: CompletionReason,
    to_state: ExamState,
    description: str,
    exit_reason: ExitReason = "forced_transition",
    resolution: Resolution = "exam_terminated",
    decision: DecisionReason = "guardrail_override",
    speak_closing: bool = True,
) -> None:
    """End the exam from wherever it is (runtime-entered end nodes: spec-notes §1)."""
    state = step.state
    if state.completed:
        return
    end_id = step.plan.end_node(end_type)
    node = state.node
    for episode in list(state.episodes.values()):
        if node is None or episode.node_id != node.node_id:
            resolve_recovery(step, episode.recovery_id, resolution)
    correlation = _correlation(step)
    if node is not None and not step.plan.node(node.node_id).is_end:
        leave_node(step, exit_reason, resolution)
        if end_id is not None:
            step.emit(
                p.TransitionDecision(
                    fromNodeId=node.node_id,
                    toNodeId=end_id,
                    edgeId=f"runtime-{reason.replace('_', '-')}",
                    reason=decision,
                    conditionEvaluated=description,
                ),
                correlation_id=correlation,
            )
    if end_id is not None and state.started_ms is not None:
        plan_node = step.plan.node(end_id)
        step.emit(_node_entered_payload(plan_node), correlation_id=correlation)
        step.effect(
            EnterNode(end_id, plan_node.context_strategy, plan_node.summary_prompt, is_end=True)
        )
        complete_exam(
            step, plan_node, reason=reason, to_state=to_state, speak_closing=speak_closing
        )
    else:
        complete_exam(step, None, reason=reason, to_state=to_state, speak_closing=speak_closing)
