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

A refusal is a move, never a silence (our 03 chapter §16): a refused completion is answered
with the runtime's own probe (:mod:`ioa.runtime.probes`, a counted follow-up) or the exhausted
exit; every reply to an answer that covered no new target is a follow-up, whatever the LLM
called it, so a node takes at most ``maxFollowUps`` + 1 such answers; an answer is never met
with no text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Final

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.output_filters import check_neutrality
from ioa.runtime import held_edge, recovery, repetition, texts
from ioa.runtime.agent_boundary import candidate_command, judge_llm_claim, read_consent
from ioa.runtime.answer_end import asks_for_time
from ioa.runtime.command_handlers import dispatch
from ioa.runtime.commands import canonical
from ioa.runtime.effects import PromptLlm
from ioa.runtime.evidence import record_evidence, record_misconceptions
from ioa.runtime.instructions import admin_delivered, consume_queued
from ioa.runtime.moves import ask_question, question_unheard, take_edge
from ioa.runtime.observation import ObservationProblem, ParsedObservation, parse_observation
from ioa.runtime.plan import NodePlan
from ioa.runtime.probes import FollowUpReason, count_follow_up, probe_text
from ioa.runtime.recognition import CLEAR_CONFIDENCE, ask_to_check, reprompt, unclear_turns
from ioa.runtime.state import NodeVisit, Turn
from ioa.runtime.step import Flow, Step, guardrail_payload
from ioa.runtime.transitions import (
    Completion,
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

LLM_CLAIM_REFUSED: Final = "llm-claim-refused:"
"""Prefix of the ``guardrailId`` of a refused LLM command claim (marking flags it)."""

FALLBACK_RESULT: Final = {
    "status": "error",
    "instruction": "Something went wrong on our side. Continue with the current question.",
}


def handle_observation(step: Step, args: object, *, reopenable: bool = False) -> None:
    """Process one ``report_observation`` (module docstring); ``reopenable``: the spoken turn
    may still go on (a natural completion is held, :mod:`ioa.runtime.held_edge`)."""
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
    _evaluate(step, observation, state.node, reopenable=reopenable)
    if not state.completed:
        consume_queued(step)


def _detected_command(
    step: Step, observation: ParsedObservation, answer: list[Turn], distrusted: bool
) -> tuple[CandidateCommandType, str, str, str | None] | None:
    """(command, spelling, origin, turn id) of the command the candidate's latest turn is.

    The LLM's ``commandDetected`` comes first, judged by the agent boundary
    (:func:`ioa.runtime.agent_boundary.judge_llm_claim`: a consequential command needs the
    candidate's own words); a refused claim is recorded (:func:`_refuse_llm_claim`) and the
    candidate's words are read instead. While a finish awaits confirmation, the candidate's
    "yes" confirms it. A turn whose command was already dispatched gives no second one (the
    LLM's next call after a clarification, say, is its answer, not the command again)."""
    state = step.state
    latest = answer[-1].turn_id if answer else None
    node = state.node
    asked = canonical(node.pending_command) if node and node.pending_command else None
    if observation.command is not None:
        command = canonical(observation.command)
        if command is None or latest in state.command_turns:
            return None
        if distrusted and command not in ALWAYS_ALLOWED_COMMANDS:
            return None
        verdict = judge_llm_claim(
            command,
            [t.text for t in answer],
            pending=asked,
            language=step.plan.texts.language,
        )
        if verdict.allowed:
            return command, observation.command, "llm", latest
        _refuse_llm_claim(step, command, latest, verdict.reason, observation.spoken_text)
    for turn in reversed(answer):
        if turn.turn_id in state.distrusted_turns or turn.turn_id in state.command_turns:
            continue
        if asked is not None and read_consent(turn.text, step.plan.texts.language) == "yes":
            return asked, asked.value, "classifier", turn.turn_id
        found = candidate_command(turn.text, step.plan.texts.language)
        if found is not None:
            return found, found.value, "classifier", turn.turn_id
        break  # only the latest usable turn can be a command
    return None


def _refuse_llm_claim(
    step: Step, command: CandidateCommandType, turn_id: str | None, reason: str, spoken: str
) -> None:
    """Record a refused LLM ``commandDetected`` claim (``guardrail_triggered``, never a
    ``candidate_command_received``: the candidate asked for nothing). What the LLM wanted to
    say with it is not spoken (:func:`_without_claim`)."""
    anchor = turn_id or f"obs-{step.state.events_applied + 1}"
    step.emit(
        guardrail_payload(
            guardrail_id=f"{LLM_CLAIM_REFUSED}{command.value}:{anchor}"[:200],
            guardrail_type="blocked_action",
            severity="block",
            description=f"LLM claimed the candidate asked for '{command.value}'; refused: {reason}",
            action="command_refused",
            node_id=step.state.current_node_id,
            original=spoken,
            replacement=_redirect_text(step),
        ),
        correlation_id=anchor[:200],
    )
    step.result.update({"claimRefused": command.value, "claimRefusedReason": reason})


def _redirect_text(step: Step) -> str:
    """The redirect and the current question. Before a grounded node's question was asked
    (its opening is the LLM's, refused here), the question is the node's fallback question:
    never a bare "stay with this question" with no question."""
    node = step.state.node
    question = node.last_question if node is not None else None
    if node is not None and not question:
        plan_node = step.plan.node(node.node_id)
        grounding = plan_node.node.grounding
        question = plan_node.opening or (grounding.fallbackQuestion if grounding else None)
    return f"{step.plan.texts.redirect} {question or ''}".strip()


def _without_claim(step: Step, observation: ParsedObservation) -> ParsedObservation:
    """The observation without a refused claim: its evidence still counts, but the LLM's
    proposal to complete and its words (written for the claimed command) are dropped; the
    current question is asked again."""
    return replace(
        observation,
        command=None,
        evidence_sufficient=False,
        needs_follow_up=False,
        spoken_text=_redirect_text(step),
    )


def _decline_pending(step: Step, node: NodeVisit, answer: list[Turn]) -> bool:
    """The candidate did not confirm a pending finish or skip: record that they chose to go on
    (the command is cancelled). True when their words were a plain "no": an answer to the
    confirmation question, not to the exam's."""
    command = canonical(node.pending_command) if node.pending_command else None
    pending = node.pending_command_id
    if command is None or pending is None:
        return False
    step.emit(
        p.CandidateCommandReceived(
            commandId=f"{pending}-confirm"[:200],
            command=command,
            commandType=f"{command.value}_confirmation",
            accepted=False,
            rejectionReason="the candidate chose to continue the examination"
            if command is CandidateCommandType.FINISH
            else "the candidate chose to stay with the question",
            origin="classifier",
        ),
        correlation_id=pending[:200],
    )
    language = step.plan.texts.language
    return bool(answer) and read_consent(answer[-1].text, language) == "no"


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
    *,
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
        bridge=None
        if step.plan.node(_target_of(step, edge.targetNodeId)).is_end
        else step.plan.texts.bridge,
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
            gid=f"repetition-loop:{state.current_node_id}:{state.events_applied + 1}",
            kind="repetition_loop",
            severity="warning",
            description=f"{found.description}; no repetition_loop handler: event only",
            action="event_only",
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
        step.say(recovery.action_text(step.plan.texts, action), "recovery")
    step.result.update({"status": "recovery", "recovery": "repetition_loop"})


ASIDES: Final = frozenset(
    {CandidateCommandType.SIGNAL_CONFIDENCE, CandidateCommandType.THINKING_ALOUD}
)
"""Commands a candidate says about their answer, not instead of it: the evidence in the turn is
written before the command is carried out."""


@dataclass
class _Evaluation:
    """What the steps of one observation know, and what each step found for the later ones."""

    step: Step
    observation: ParsedObservation
    node: NodeVisit
    plan_node: NodePlan
    answer: list[Turn]
    distrusted: bool
    spoken: str = ""
    """What the examiner will say: the LLM's text, or what a guardrail put in its place."""
    stt_rejected: bool = False
    stt_attempt: recovery.Attempt | None = None
    """The low-confidence recovery attempt under way (the re-prompt is spoken)."""
    anxious: bool = False
    loop: RecoveryAction | None = None
    """The repetition-loop action to carry out instead of speaking."""
    exhausted: bool = False
    """The follow-up budget is used up: the node is left."""
    policy: Completion = field(default_factory=lambda: Completion(holds=False))
    """The completion policy, checked by :func:`_transitions` (after the evidence is written)."""
    approved: bool = False
    """The LLM's ``evidenceSufficient`` is approved."""
    covered_before: frozenset[str] = frozenset()
    """The node's covered targets before this observation's evidence was written."""
    declined: bool = False
    """The candidate's answer was a plain "no" to a pending finish or skip."""
    reopenable: bool = False
    """The spoken turn may still go on (``Observation.reopenable``): a completion is held."""
    evidence_written: bool = False
    """The observation's evidence was written already (with an aside, :data:`ASIDES`)."""

    @property
    def answered(self) -> bool:
        """The candidate said something other than a command since the examiner last spoke."""
        commands = self.step.state.command_turns
        return any(t.turn_id not in commands for t in self.answer)

    @property
    def adds_nothing(self) -> bool:
        """A candidate answer at a node with evidence targets that covered no new target: the
        examiner's reply to it is a follow-up whatever the LLM called it (§16)."""
        state = self.step.state
        answers = [t for t in self.answer if t.turn_id not in state.command_turns]
        if (
            self.declined
            or not answers
            or not self.plan_node.targets
            or _asks_for_time(answers[-1], self.step.plan.texts.language)
        ):
            return False
        if any(t.confidence < CLEAR_CONFIDENCE for t in answers):
            return False  # not heard clearly: a recognition problem, not a vague answer
        return state.ledger.covered_targets(self.node.node_id) <= self.covered_before

    def guard_id(self, prefix: str) -> str:
        """A guardrail id unique to this observation: ``prefix:node:next event number``."""
        return f"{prefix}:{self.node.node_id}:{self.step.state.events_applied + 1}"


def _asks_for_time(turn: Turn, language: str) -> bool:
    """The candidate's latest words ask for time or trail off in a filler: they are thinking,
    not answering ("let me think", "um..."; :func:`ioa.runtime.answer_end.asks_for_time`)."""
    return asks_for_time(turn.text, language)


def _commands_first(ev: _Evaluation) -> Flow:
    """2. A candidate command is dispatched and nothing else happens (the agent boundary
    judges the LLM's claims; a refused claim's words are dropped)."""
    step, node = ev.step, ev.node
    detected = _detected_command(step, ev.observation, ev.answer, ev.distrusted)
    if "claimRefused" in step.result:
        ev.observation = _without_claim(step, ev.observation)
    ev.spoken = ev.observation.spoken_text
    asked = node.pending_command
    if asked is not None and (detected is None or detected[0].value != asked):
        ev.declined = _decline_pending(step, node, ev.answer)
    if detected is None:
        return Flow.CONTINUE
    command, spelled, origin, turn_id = detected
    if command in ASIDES:
        _evidence_and_misconceptions(ev)  # what the candidate said with it is still evidence
        ev.evidence_written = True
    anchor = turn_id or f"obs-{step.state.events_applied + 1}"
    dispatch(
        step,
        command_id=f"{origin}-{anchor}-{command.value}",
        command=command,
        spelled=spelled,
        origin="llm" if origin == "llm" else "classifier",
        turn_id=turn_id,
    )
    # How sure the candidate is of their answer is recorded, and the turn is answered as any
    # answer (before, the examiner said nothing to "I'm not sure about that").
    return Flow.CONTINUE if command is CandidateCommandType.SIGNAL_CONFIDENCE else Flow.STOP


def _evidence_and_misconceptions(ev: _Evaluation) -> Flow:
    """3-4. Evidence is written (unless the answer addresses the system), then misconceptions."""
    step, observation = ev.step, ev.observation
    if ev.evidence_written:
        return Flow.CONTINUE
    misconception_ids: list[str] = []
    if ev.distrusted and observation.signals:
        _guard(
            step,
            gid=ev.guard_id("evidence-rejected"),
            kind="evidence_rejected",
            severity="warning",
            description=f"{len(observation.signals)} signal(s) ignored: the answer contains "
            "instructions addressed to the examination system",
            action="event_only",
        )
    else:
        ev.stt_rejected, misconception_ids = record_evidence(
            step, observation, ev.node, ev.plan_node, ev.answer
        )
    record_misconceptions(step, observation, ev.node, ev.answer, misconception_ids)
    return Flow.CONTINUE


def _question_first(ev: _Evaluation) -> Flow:
    """4b. The candidate spoke at a node whose question they have not heard (a barge-in dropped
    the queued opening before any of it played, and nothing of the node is on its way): the
    runtime asks the question verbatim, whatever the LLM proposed. Their words are kept (turns,
    evidence), but they answered nothing, so they complete nothing. Signs of distress still come
    first; a node the LLM opens itself (no verbatim opening) is left to the usual flow."""
    step, node = ev.step, ev.node
    if (
        not ev.answered
        or ev.observation.distress
        or not ev.plan_node.opening
        or not question_unheard(step, node)
    ):
        return Flow.CONTINUE
    _guard(
        step,
        gid=ev.guard_id("question-unheard"),
        kind="blocked_action",
        severity="warning",
        description=f"the question of node {node.node_id} was not heard before the candidate "
        "spoke: it is asked now instead of the LLM's reply",
        action="event_only",
        original=ev.spoken,
        replacement=ev.plan_node.opening,
    )
    ask_question(step, ev.plan_node)
    step.result.update({"status": "question_asked", "reason": "question not heard"})
    return Flow.STOP


def _low_stt_confidence(ev: _Evaluation) -> Flow:
    """5a. Low STT confidence (EVD-010, POL-R005): a recovery attempt, else a review flag."""
    if not ev.stt_rejected and all(t.confidence >= CLEAR_CONFIDENCE for t in ev.answer):
        return Flow.CONTINUE
    outcome = recovery.attempt(
        ev.step, RecoveryScenario.STT_LOW_CONFIDENCE, "low STT confidence on the latest answer"
    )
    if outcome is None:
        _guard(
            ev.step,
            gid=ev.guard_id("stt-review"),
            kind="evidence_rejected",
            severity="warning",
            description="EVD-010 low STT confidence on the latest answer and no "
            "stt_low_confidence handler: flagged for human review",
            action="event_only",
        )
    elif isinstance(outcome, recovery.Escalated):
        ask_to_check(ev.step, unclear_turns(ev.answer))
        return Flow.STOP
    else:
        ev.stt_attempt = outcome
    return Flow.CONTINUE


def _distress(ev: _Evaluation) -> Flow:
    """5b. Signs of distress pause the exam."""
    if not ev.observation.distress:
        return Flow.CONTINUE
    step = ev.step
    recovery_id = f"rec-{step.state.recoveries_started + 1:03d}"
    step.emit(
        p.RecoveryStarted(
            recoveryId=recovery_id,
            recoveryType="candidate_distress",
            nodeId=ev.node.node_id,
            triggerDescription="the examiner reported signs of distress",
        ),
        correlation_id=recovery_id,
    )
    recovery.pause_exam(step, "candidate_distress", step.plan.texts.paused_distress)
    return Flow.STOP


def _anxiety_policy(ev: _Evaluation) -> Flow:
    """5c. Under anxiety only neutral procedural support is spoken (POL-008); otherwise a
    confirmation of correctness is replaced where the node forbids it."""
    step, spoken = ev.step, ev.spoken
    ev.anxious = ev.observation.anxiety
    if not ev.anxious:
        recovery.resolve(step, RecoveryScenario.ANXIETY)
        phrase = check_neutrality(spoken)
        if phrase and "confirm_correctness" in ev.plan_node.forbidden_actions:
            _replace_spoken(
                ev,
                ev.guard_id("confirm-correctness"),
                "unauthorized_scoring",
                f"forbidden action confirm_correctness (matched '{phrase}')",
                step.plan.texts.gentle_reprompt,
            )
        return Flow.CONTINUE
    outcome = recovery.attempt(step, RecoveryScenario.ANXIETY, "the examiner reported anxiety")
    if isinstance(outcome, recovery.Escalated):
        return Flow.STOP
    phrase = check_neutrality(spoken)
    if phrase or ev.observation.needs_follow_up:
        replacement = step.plan.texts.calm_support
        if replacement != spoken:
            _replace_spoken(
                ev,
                ev.guard_id("anxiety-policy"),
                "anxiety_policy",
                "POL-008: only neutral procedural support under anxiety"
                + (f" (matched '{phrase}')" if phrase else " (no follow-up probing)"),
                replacement,
            )
    return Flow.CONTINUE


def _replace_spoken(ev: _Evaluation, gid: str, kind: str, description: str, text: str) -> None:
    """Record a blocked output (``output_replaced``) and speak ``text`` instead."""
    _guard(
        ev.step,
        gid=gid,
        kind=kind,
        severity="block",
        description=description,
        action="output_replaced",
        original=ev.spoken,
        replacement=text,
    )
    ev.spoken = text


_QUALITY_SCENARIOS: Final = {
    "off_topic": RecoveryScenario.OFF_TOPIC,
    "unclear": RecoveryScenario.UNCLEAR_ANSWER,
    "silence": RecoveryScenario.SILENCE,
}


def _answer_quality(ev: _Evaluation) -> Flow:
    """5d. Off-topic (with its limit), unclear and silent answers are recovery attempts; a
    substantive or partial answer resolves their episodes."""
    step, node, quality = ev.step, ev.node, ev.observation.answer_quality
    scenario = _QUALITY_SCENARIOS.get(quality)
    if scenario is None:
        if quality in ("substantive", "partial"):
            for resolved in _QUALITY_SCENARIOS.values():
                recovery.resolve(step, resolved)
        return Flow.CONTINUE
    handler = recovery.handler_for(step, scenario)
    episode = step.state.episode(scenario.value)
    if (
        scenario is RecoveryScenario.OFF_TOPIC
        and handler is not None
        and episode is not None
        and episode.attempts >= handler.maxAttempts
    ):
        _guard(
            step,
            gid=f"off-topic-limit:{node.node_id}:{node.visit}",
            kind="off_topic_limit",
            severity="block",
            description=f"off-topic limit ({handler.maxAttempts}) reached at node {node.node_id}",
            action="forced_transition",
        )
    outcome = recovery.attempt(step, scenario, f"answer quality: {quality}")
    return Flow.STOP if isinstance(outcome, recovery.Escalated) else Flow.CONTINUE


def _repetition_loop(ev: _Evaluation) -> Flow:
    """5e. A repetition loop (not checked under anxiety or a low-confidence attempt)."""
    if ev.anxious or ev.stt_attempt is not None:
        return Flow.CONTINUE
    loop = _repetition(ev.step, ev.spoken, ev.answer)
    if isinstance(loop, recovery.Escalated):
        return Flow.STOP
    ev.loop = loop
    return Flow.CONTINUE


def _follow_up_budget(ev: _Evaluation) -> Flow:
    """5f. A follow-up asked for beyond the node's budget (count or window) exhausts it; so
    does any answer that adds no evidence once the budget is spent (§16)."""
    node, plan_node = ev.node, ev.plan_node
    window = plan_node.follow_up_window_ms
    over_window = (
        window is not None
        and node.follow_up_started_ms is not None
        and ev.step.now - node.follow_up_started_ms > window
    )
    ev.exhausted = (
        (ev.observation.needs_follow_up or ev.adds_nothing)
        and not ev.anxious
        and ev.stt_attempt is None
        and (node.follow_ups >= plan_node.max_follow_ups or over_window)
    )
    return Flow.CONTINUE


def _transitions(ev: _Evaluation) -> Flow:
    """6. The first matching transition is taken (natural completion only when the LLM's
    ``evidenceSufficient`` is approved by the completion policy)."""
    step, node, state = ev.step, ev.node, ev.step.state
    ev.policy = completion(ev.plan_node, state.ledger, node.candidate_turns)
    ev.approved = (
        ev.observation.evidence_sufficient
        and not ev.distrusted
        and ev.stt_attempt is None
        and ev.policy.holds
    )
    facts = TurnFacts(
        natural_completion=ev.approved,
        candidate_turns=node.candidate_turns,
        elapsed_ms=node.clock.elapsed(step.now),
        covered=frozenset(state.ledger.covered_targets(node.node_id)),
    )
    edge = first_match(ev.plan_node, facts)
    if edge is None:
        return Flow.CONTINUE
    natural = isinstance(edge.condition, AlwaysCondition | EvidenceSatisfiedCondition)
    to_end = step.plan.node(_target_of(step, edge.targetNodeId)).is_end
    if natural and ev.reopenable:
        # The spoken answer may still go on: the bridge now, the edge once it is over (§18).
        held_edge.hold(step, edge, bridge=None if to_end else ev.spoken)
        return Flow.STOP
    take_edge(
        step,
        edge,
        decision="natural_completion" if natural else "condition_met",
        exit_reason="completed",
        bridge=None if to_end else (ev.spoken if natural else step.plan.texts.bridge),
    )
    return Flow.STOP


def _loop_attempt(ev: _Evaluation) -> Flow:
    """A repetition-loop attempt is carried out instead of speaking (unless the follow-up
    budget is exhausted: then the node is left)."""
    if ev.loop is None or ev.exhausted:
        return Flow.CONTINUE
    _carry_out_loop(ev.step, ev.loop)
    return Flow.STOP


def _completion_refused(ev: _Evaluation) -> Flow:
    """The LLM proposed completing the node and the runtime did not approve: recorded, and the
    runtime makes the move (§16): the exhausted exit when the budget is spent, the re-prompt or
    calm support when those are due, else its own probe, counted as a follow-up. The LLM's own
    text is never spoken: it was written to leave the node."""
    if not ev.observation.evidence_sufficient or ev.approved:
        return Flow.CONTINUE
    step, node = ev.step, ev.node
    why = (
        "the answer contains instructions addressed to the examination system"
        if ev.distrusted
        else "the answer was not heard clearly"
        if ev.stt_attempt is not None
        else ev.policy.why_not
    )
    _guard(
        step,
        gid=ev.guard_id("completion-refused"),
        kind="blocked_action",
        severity="warning",
        description=f"LLM proposed completing node {node.node_id}; not approved: {why}",
        action="event_only",
        original=ev.spoken,
        replacement="",
    )
    if not ev.answered:
        if question_unheard(step, node):
            # The candidate has heard nothing at this visit and nothing is on its way (the
            # opening was dropped by a barge-in, or never given): the question is asked now.
            ask_question(step, ev.plan_node)
            step.result.update({"status": "question_asked", "approved": False, "reason": why})
            return Flow.STOP
        # Nothing the candidate said is waiting for a reply: the question stands.
        step.result.update({"status": "waiting_for_answer", "approved": False, "reason": why})
        return Flow.STOP
    if node.follow_ups >= ev.plan_node.max_follow_ups:
        ev.exhausted = True
    if ev.exhausted or ev.stt_attempt is not None:
        return Flow.CONTINUE
    if ev.anxious:
        ev.spoken = step.plan.texts.calm_support
        return Flow.CONTINUE
    probe = _ask_probe(ev, "evidence_gap" if ev.policy.missing_targets else "depth_probe")
    step.result.update(
        {
            "status": "probe",
            "approved": False,
            "reason": why,
            "instruction": texts.PROBE_INSTRUCTION.format(why=why, probe=probe),
        }
    )
    return Flow.STOP


def _ask_probe(ev: _Evaluation, reason: FollowUpReason) -> str:
    """Ask the runtime's own probe as a counted follow-up; returns its text."""
    step, node = ev.step, ev.node
    text = probe_text(step, node, ev.plan_node, ev.policy.missing_targets)
    count_follow_up(step, node, ev.plan_node, answer=ev.answer, reason=reason)
    step.say(text, "follow_up")
    return text


def _budget_exhausted(ev: _Evaluation) -> Flow:
    """An exhausted follow-up budget forces the node's exit."""
    if not ev.exhausted:
        return Flow.CONTINUE
    node, plan_node = ev.node, ev.plan_node
    _guard(
        ev.step,
        gid=f"max-follow-ups:{node.node_id}:{node.visit}",
        kind="max_follow_ups",
        severity="block",
        description=f"follow-up limit ({plan_node.max_follow_ups}) reached for node "
        f"{node.node_id}: forcing transition",
        action="forced_transition",
    )
    _forced(ev.step, plan_node, "follow_ups_exhausted", "follow_ups_exhausted")
    return Flow.STOP


def _speak(ev: _Evaluation) -> Flow:
    """The examiner speaks: the low-confidence re-prompt, or the (filtered) text; a follow-up
    the LLM asked for, and any reply to an answer that added nothing, is counted (§16). An
    answer is never met with silence: no text becomes the runtime's probe (or, after an
    answer that added evidence, the neutral continue)."""
    step, node = ev.step, ev.node
    if ev.stt_attempt is not None:
        reprompt(step, unclear_turns(ev.answer))
        step.result.update({"status": "recovery", "recovery": "stt_low_confidence"})
        return Flow.STOP
    if ev.anxious:
        step.say(ev.spoken.strip() or step.plan.texts.calm_support, "recovery")
        step.result.setdefault("status", "continue")
        return Flow.STOP
    reason = _follow_up_reason(ev.observation, ev.policy.missing_targets)
    if not ev.spoken.strip() and (ev.adds_nothing or ev.observation.needs_follow_up):
        _ask_probe(ev, reason)
        step.result.update({"status": "probe", "followUpIndex": node.follow_ups})
        return Flow.STOP
    if ev.observation.needs_follow_up or ev.adds_nothing:
        count_follow_up(step, node, ev.plan_node, answer=ev.answer, reason=reason)
        # Spent either way; but only a follow-up the LLM asked for is the question now being
        # asked (``last_question``: what a failed turn's fallback asks again), never an
        # "I see, please go on".
        step.say(ev.spoken, "follow_up" if ev.observation.needs_follow_up else "prompt")
        step.result.update({"status": "followup_approved", "followUpIndex": node.follow_ups})
        return Flow.STOP
    spoken = ev.spoken if ev.spoken.strip() or not ev.answer else step.plan.texts.neutral_continue
    step.say(spoken, "prompt")
    step.result.setdefault("status", "continue")
    return Flow.STOP


PIPELINE: Final[tuple[Callable[[_Evaluation], Flow], ...]] = (
    _commands_first,
    _evidence_and_misconceptions,
    _question_first,
    _low_stt_confidence,
    _distress,
    _anxiety_policy,
    _answer_quality,
    _repetition_loop,
    _follow_up_budget,
    _transitions,
    _loop_attempt,
    _completion_refused,
    _budget_exhausted,
    _speak,
)
"""The decision order (module docstring): each step either lets the next run or stops."""


def _evaluate(
    step: Step, observation: ParsedObservation, node: NodeVisit, *, reopenable: bool = False
) -> None:
    """Run :data:`PIPELINE` on one observation until a step stops it."""
    answer = step.state.answer_turns()
    ev = _Evaluation(
        step=step,
        observation=observation,
        node=node,
        plan_node=step.plan.node(node.node_id),
        answer=answer,
        distrusted=any(t.turn_id in step.state.distrusted_turns for t in answer),
        covered_before=frozenset(step.state.ledger.covered_targets(node.node_id)),
        reopenable=reopenable,
    )
    for run in PIPELINE:
        if run(ev) is Flow.STOP:
            return
