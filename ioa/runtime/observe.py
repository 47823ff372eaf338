"""Handling one ``report_observation`` call: the decision order of spec-notes §2 and chapter 07
§3 (our 03 chapter §3).

0. due timers have already fired (the step does that first);
1. an immediate proctor instruction is running: this observation is its admin run;
2. a candidate command (the LLM's ``commandDetected``, else the safety-net classifier on the
   candidate's latest turns) is dispatched, and processing stops there;
3. evidence is validated and written (EVD-008..010: unknown target ids rejected, duplicates
   merged, STT min confidence < 0.5 rejected and routed to ``stt_low_confidence``);
4. misconceptions (and self-corrections) are recorded;
5. guardrails: low STT confidence recovery, distress, anxiety (POL-008), off-topic limit,
   unclear/silent answers, repetition loop (:mod:`ioa.runtime.repetition`), follow-up budget;
6. transitions are evaluated (first match wins; natural-completion edges only when the LLM's
   ``evidenceSufficient`` is approved by the completion policy), else a forced exit when a
   guardrail demands one;
7. otherwise a repetition-loop attempt is carried out instead of speaking, or the examiner
   speaks (follow-up counted when asked for and within budget), every
   text through the output filters; queued proctor instructions are marked delivered.
"""

from __future__ import annotations

from typing import Final, Literal

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.output_filters import NEUTRAL_SUPPORT, check_neutrality
from ioa.runtime import recovery, repetition, texts
from ioa.runtime.classifier import detect_command
from ioa.runtime.command_handlers import dispatch
from ioa.runtime.commands import canonical
from ioa.runtime.effects import PromptLlm
from ioa.runtime.evidence import record_evidence, record_misconceptions
from ioa.runtime.instructions import admin_delivered, consume_queued
from ioa.runtime.moves import take_edge
from ioa.runtime.observation import ObservationProblem, ParsedObservation, parse_observation
from ioa.runtime.plan import NodePlan
from ioa.runtime.state import NodeVisit, Turn
from ioa.runtime.step import Step, guardrail_payload
from ioa.runtime.transcripts import CLEAR_CONFIDENCE
from ioa.runtime.transitions import (
    TurnFacts,
    completion,
    first_match,
    forced_exit,
)
from ioa.schema import (
    ALWAYS_ALLOWED_COMMANDS,
    AlwaysCondition,
    CandidateCommandType,
    EvidenceSatisfiedCondition,
    RecoveryAction,
    RecoveryEscalation,
    RecoveryScenario,
)

FALLBACK_RESULT: Final = {
    "status": "error",
    "instruction": "Something went wrong on our side. Continue with the current question.",
}


def handle_observation(step: Step, args: object) -> None:
    """Process one ``report_observation`` (module docstring)."""
    state = step.state
    if state.completed:
        step.result.update({"status": "ignored", "reason": "the exam is over"})
        return
    try:
        observation = parse_observation(args)
    except ObservationProblem as problem:
        step.emit(
            p.SystemErrorPayload(
                code="invalid_observation",
                message=f"report_observation arguments rejected: {problem}"[:2000],
                component="runtime_controller",
                severity="warning",
                details={"nodeId": state.current_node_id},
            )
        )
        step.result.update(FALLBACK_RESULT)
        return
    admin = state.admin_instruction()
    if admin is not None and state.node is not None:
        step.say(observation.spoken_text, "prompt")
        admin_delivered(step, admin)
        step.result.setdefault("status", "admin_instruction_delivered")
        return
    if state.exam_state is not ExamState.IN_PROGRESS or state.node is None:
        step.result.update({"status": "ignored", "reason": f"the exam is {state.exam_state}"})
        return
    _evaluate(step, observation, state.node)
    if not state.completed:
        consume_queued(step)


def _detected_command(
    step: Step, observation: ParsedObservation, answer: list[Turn], distrusted: bool
) -> tuple[CandidateCommandType, str, str, str | None] | None:
    """(command, spelling, origin, turn id) of the command the candidate's latest turn is.

    The LLM's ``commandDetected`` comes first; the classifier is the safety net. A turn whose
    command was already dispatched gives no second one (the LLM's next call after a
    clarification, say, is its answer, not the command again)."""
    state = step.state
    latest = answer[-1].turn_id if answer else None
    if observation.command is not None:
        command = canonical(observation.command)
        if command is None or latest in state.command_turns:
            return None
        if distrusted and command not in ALWAYS_ALLOWED_COMMANDS:
            return None
        return command, observation.command, "llm", latest
    for turn in reversed(answer):
        if turn.turn_id in state.distrusted_turns or turn.turn_id in state.command_turns:
            continue
        found = detect_command(turn.text)
        if found is not None:
            return found, found.value, "classifier", turn.turn_id
        break  # only the latest usable turn can be a command
    return None


def _decline_finish(step: Step, node: NodeVisit) -> None:
    """The candidate did not confirm a pending finish: record that they chose to go on."""
    pending = node.finish_pending
    if pending is None:
        return
    step.emit(
        p.CandidateCommandReceived(
            commandId=f"{pending}-confirm"[:200],
            command=CandidateCommandType.FINISH,
            commandType="finish_confirmation",
            accepted=False,
            rejectionReason="the candidate chose to continue the examination",
            origin="llm",
        ),
        correlation_id=pending[:200],
    )


FollowUpReason = Literal["evidence_gap", "depth_probe", "clarification", "misconception_probe"]


def _follow_up_reason(observation: ParsedObservation, missing: tuple[str, ...]) -> FollowUpReason:
    if observation.misconceptions:
        return "misconception_probe"
    if observation.follow_up_type in ("scaffold", "nudge") or missing:
        return "evidence_gap"
    if observation.follow_up_type in ("confirm", "redirect"):
        return "clarification"
    return "depth_probe"


def _guard(
    step: Step,
    gid: str,
    kind: str,
    severity: str,
    description: str,
    action: str,
    original: str | None = None,
    replacement: str | None = None,
) -> None:
    step.emit(
        guardrail_payload(
            guardrail_id=gid,
            guardrail_type=kind,
            severity=severity,
            description=description,
            action=action,
            node_id=step.state.current_node_id,
            original=original,
            replacement=replacement,
        )
    )


def _forced(step: Step, plan_node: NodePlan, decision: str, exit_reason: str) -> None:
    edge = forced_exit(plan_node)
    if edge is None:
        return
    take_edge(
        step,
        edge,
        decision="follow_ups_exhausted"
        if decision == "follow_ups_exhausted"
        else ("guardrail_override"),
        exit_reason="follow_ups_exhausted"
        if exit_reason == "follow_ups_exhausted"
        else ("forced_transition"),
        bridge=None if step.plan.node(_target_of(step, edge.targetNodeId)).is_end else texts.BRIDGE,
        condition=f"forced exit ({exit_reason.replace('_', ' ')})",
    )


def _target_of(step: Step, target_id: str) -> str:
    members = step.plan.pools.get(target_id)
    return members[0] if members else target_id


def _repetition(
    step: Step, spoken: str, answer: list[Turn]
) -> RecoveryAction | recovery.Escalated | None:
    """Check for a repetition loop (:mod:`ioa.runtime.repetition`): the action to carry out
    instead of speaking, an escalation (already carried out, nothing more to do), or None
    (nothing repeats, or there is no handler: then only a ``guardrail_triggered`` warning).
    An open episode resolves (``re_prompted``) once the candidate has answered again and
    nothing repeats."""
    state = step.state
    scenario = RecoveryScenario.REPETITION_LOOP
    episode = state.episode(scenario.value)
    since = episode.last_attempt_ms if episode is not None else None
    found = repetition.detect(state, spoken, answer, since)
    if found is None:
        if episode is not None and repetition.new_answer(state, answer, since) is not None:
            recovery.resolve(step, scenario, "re_prompted")
        return None
    outcome = recovery.attempt(step, scenario, found.description)
    if outcome is None:
        _guard(
            step,
            f"repetition-loop:{state.current_node_id}:{state.events_applied + 1}",
            "repetition_loop",
            "warning",
            f"{found.description}; no repetition_loop handler: event only",
            "event_only",
        )
        return None
    if isinstance(outcome, recovery.Attempt):
        return outcome.action
    if outcome.escalation is RecoveryEscalation.RETRY and state.exam_state is ExamState.IN_PROGRESS:
        handler = recovery.handler_for(step, scenario)
        if handler is not None and not outcome.left_node:
            return handler.action  # a fresh episode started: its first attempt
    step.result.setdefault("status", "recovery")
    return outcome


def _carry_out_loop(step: Step, action: RecoveryAction) -> None:
    """One repetition-loop attempt: the LLM's text is not spoken; ``rephrase`` asks the LLM to
    say it differently, every other action speaks its fixed text."""
    if action is RecoveryAction.REPHRASE:
        step.effect(PromptLlm(texts.REPETITION_INSTRUCTION))
    else:
        step.say(recovery.ACTION_TEXTS.get(action, texts.GENTLE_REPROMPT), "recovery")
    step.result.update({"status": "recovery", "recovery": "repetition_loop"})


def _evaluate(step: Step, observation: ParsedObservation, node: NodeVisit) -> None:
    state = step.state
    plan_node = step.plan.node(node.node_id)
    answer = state.answer_turns()
    distrusted = any(t.turn_id in state.distrusted_turns for t in answer)

    # 2. commands first, and only them
    detected = _detected_command(step, observation, answer, distrusted)
    if node.finish_pending is not None and (
        detected is None or detected[0] is not CandidateCommandType.FINISH
    ):
        _decline_finish(step, node)
    if detected is not None:
        command, spelled, origin, turn_id = detected
        anchor = turn_id or f"obs-{state.events_applied + 1}"
        dispatch(
            step,
            command_id=f"{origin}-{anchor}-{command.value}",
            command=command,
            spelled=spelled,
            origin="llm" if origin == "llm" else "classifier",
            turn_id=turn_id,
        )
        return

    # 3. evidence
    signals_ignored = distrusted and bool(observation.signals)
    if signals_ignored:
        _guard(
            step,
            f"evidence-rejected:{node.node_id}:{state.events_applied + 1}",
            "evidence_rejected",
            "warning",
            f"{len(observation.signals)} signal(s) ignored: the answer contains instructions "
            "addressed to the examination system",
            "event_only",
        )
        stt_rejected = False
        misconception_ids: list[str] = []
    else:
        stt_rejected, misconception_ids = record_evidence(
            step, observation, node, plan_node, answer
        )
    # 4. misconceptions
    record_misconceptions(step, observation, node, answer, misconception_ids)

    # 5a. low STT confidence (EVD-010, POL-R005)
    stt_attempt: recovery.Attempt | None = None
    unclear_audio = stt_rejected or any(t.confidence < CLEAR_CONFIDENCE for t in answer)
    if unclear_audio:
        outcome = recovery.attempt(
            step, RecoveryScenario.STT_LOW_CONFIDENCE, "low STT confidence on the latest answer"
        )
        if outcome is None:
            _guard(
                step,
                f"stt-review:{node.node_id}:{state.events_applied + 1}",
                "evidence_rejected",
                "warning",
                "EVD-010 low STT confidence on the latest answer and no stt_low_confidence "
                "handler: flagged for human review",
                "event_only",
            )
        elif isinstance(outcome, recovery.Escalated):
            return
        else:
            stt_attempt = outcome
    # 5b. distress
    if observation.distress:
        recovery_id = f"rec-{state.recoveries_started + 1:03d}"
        step.emit(
            p.RecoveryStarted(
                recoveryId=recovery_id,
                recoveryType="candidate_distress",
                nodeId=node.node_id,
                triggerDescription="the examiner reported signs of distress",
            ),
            correlation_id=recovery_id,
        )
        recovery.pause_exam(step, "candidate_distress", texts.PAUSED_DISTRESS)
        return
    # 5c. anxiety (POL-008)
    spoken = observation.spoken_text
    anxious = observation.anxiety
    if anxious:
        outcome = recovery.attempt(step, RecoveryScenario.ANXIETY, "the examiner reported anxiety")
        if isinstance(outcome, recovery.Escalated):
            return
        phrase = check_neutrality(spoken)
        replacement = NEUTRAL_SUPPORT if (phrase or observation.needs_follow_up) else None
        if replacement is not None and replacement != spoken:
            _guard(
                step,
                f"anxiety-policy:{node.node_id}:{state.events_applied + 1}",
                "anxiety_policy",
                "block",
                "POL-008: only neutral procedural support under anxiety"
                + (f" (matched '{phrase}')" if phrase else " (no follow-up probing)"),
                "output_replaced",
                original=spoken,
                replacement=replacement,
            )
            spoken = replacement
    else:
        recovery.resolve(step, RecoveryScenario.ANXIETY)
        phrase = check_neutrality(spoken)
        if phrase and "confirm_correctness" in plan_node.forbidden_actions:
            _guard(
                step,
                f"confirm-correctness:{node.node_id}:{state.events_applied + 1}",
                "unauthorized_scoring",
                "block",
                f"forbidden action confirm_correctness (matched '{phrase}')",
                "output_replaced",
                original=spoken,
                replacement=texts.GENTLE_REPROMPT,
            )
            spoken = texts.GENTLE_REPROMPT
    # 5d. off-topic limit, unclear and silent answers
    quality = observation.answer_quality
    scenario = {
        "off_topic": RecoveryScenario.OFF_TOPIC,
        "unclear": RecoveryScenario.UNCLEAR_ANSWER,
        "silence": RecoveryScenario.SILENCE,
    }.get(quality)
    if scenario is not None:
        handler = recovery.handler_for(step, scenario)
        episode = state.episode(scenario.value)
        if (
            scenario is RecoveryScenario.OFF_TOPIC
            and handler is not None
            and episode is not None
            and episode.attempts >= handler.maxAttempts
        ):
            _guard(
                step,
                f"off-topic-limit:{node.node_id}:{node.visit}",
                "off_topic_limit",
                "block",
                f"off-topic limit ({handler.maxAttempts}) reached at node {node.node_id}",
                "forced_transition",
            )
        outcome = recovery.attempt(step, scenario, f"answer quality: {quality}")
        if isinstance(outcome, recovery.Escalated):
            return
    elif quality in ("substantive", "partial"):
        for resolved in (
            RecoveryScenario.OFF_TOPIC,
            RecoveryScenario.UNCLEAR_ANSWER,
            RecoveryScenario.SILENCE,
        ):
            recovery.resolve(step, resolved)
    # 5e. repetition loop
    loop = None if anxious or stt_attempt is not None else _repetition(step, spoken, answer)
    if isinstance(loop, recovery.Escalated):
        return
    # 5f. follow-up budget
    exhausted = False
    if (
        observation.needs_follow_up
        and not anxious
        and (
            node.follow_ups >= plan_node.max_follow_ups
            or (
                plan_node.follow_up_window_ms is not None
                and node.follow_up_started_ms is not None
                and step.now - node.follow_up_started_ms > plan_node.follow_up_window_ms
            )
        )
    ):
        exhausted = True

    # 6. transitions
    policy = completion(plan_node, state.ledger, node.candidate_turns)
    approved = (
        observation.evidence_sufficient and not distrusted and stt_attempt is None and policy.holds
    )
    facts = TurnFacts(
        natural_completion=approved,
        candidate_turns=node.candidate_turns,
        elapsed_ms=node.clock.elapsed(step.now),
        covered=frozenset(state.ledger.covered_targets(node.node_id)),
    )
    edge = first_match(plan_node, facts)
    if edge is not None:
        natural = isinstance(edge.condition, AlwaysCondition | EvidenceSatisfiedCondition)
        to_end = step.plan.node(_target_of(step, edge.targetNodeId)).is_end
        bridge = None if to_end else (spoken if natural else texts.BRIDGE)
        take_edge(
            step,
            edge,
            decision="natural_completion" if natural else "condition_met",
            exit_reason="completed",
            bridge=bridge,
        )
        return
    if loop is not None and not exhausted:
        _carry_out_loop(step, loop)
        return
    if observation.evidence_sufficient and not approved:
        why = (
            "the answer contains instructions addressed to the examination system"
            if distrusted
            else "the answer was not heard clearly"
            if stt_attempt is not None
            else policy.why_not
        )
        _guard(
            step,
            f"completion-refused:{node.node_id}:{state.events_applied + 1}",
            "blocked_action",
            "warning",
            f"LLM proposed completing node {node.node_id}; not approved: {why}",
            "event_only",
            original=spoken,
            replacement="",
        )
        if policy.missing_targets and node.follow_ups >= plan_node.max_follow_ups:
            exhausted = True
        elif stt_attempt is None:
            step.effect(PromptLlm(texts.CONTINUE_INSTRUCTION.format(why=why)))
            step.result.update({"status": "continue", "approved": False, "reason": why})
            return
    if exhausted:
        _guard(
            step,
            f"max-follow-ups:{node.node_id}:{node.visit}",
            "max_follow_ups",
            "block",
            f"follow-up limit ({plan_node.max_follow_ups}) reached for node {node.node_id}: "
            "forcing transition",
            "forced_transition",
        )
        _forced(step, plan_node, "follow_ups_exhausted", "follow_ups_exhausted")
        return

    # 7. speak
    if stt_attempt is not None:
        step.say(texts.STT_REPROMPT, "recovery")
        step.result.update({"status": "recovery", "recovery": "stt_low_confidence"})
        return
    if observation.needs_follow_up and not anxious and spoken.strip():
        answer_ids = [t.turn_id for t in answer]
        trigger = (answer_ids or node.turn_ids or [f"{node.node_id}-opening"])[-1]
        step.emit(
            p.FollowUpUsed(
                nodeId=node.node_id,
                followUpIndex=node.follow_ups + 1,
                maxFollowUps=plan_node.max_follow_ups,
                reason=_follow_up_reason(observation, policy.missing_targets),
                triggerTurnId=trigger,
            )
        )
        step.say(spoken, "follow_up")
        step.result.update({"status": "followup_approved", "followUpIndex": node.follow_ups})
        return
    step.say(spoken, "recovery" if anxious else "prompt")
    step.result.setdefault("status", "continue")
