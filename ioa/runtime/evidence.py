"""Writing an observation's evidence: signals into the ledger (EVD-008..010), misconceptions
and self-corrections as their events (our 06 chapter, ``docs/spec/evidence-ledger.md``)."""

from __future__ import annotations

from typing import Final

from ioa.events import payloads as p
from ioa.ledger import (
    Duplicate,
    LedgerEntry,
    Recorded,
    Rejected,
    RejectionCode,
    TurnInfo,
    decide_signal,
)
from ioa.runtime.grounding import drawn_passage_id
from ioa.runtime.observation import ParsedObservation
from ioa.runtime.plan import NodePlan
from ioa.runtime.state import NodeVisit, Turn
from ioa.runtime.step import Step, guardrail_payload
from ioa.schema import SignalKind

UNKNOWN_MISCONCEPTION_CONFIDENCE: Final = 0.5
"""Misconceptions carry no confidence in the tool schema; this is recorded when absent."""


def _turn_info(step: Step, turn: Turn) -> TurnInfo:
    return TurnInfo(
        turn.turn_id, turn.text, turn.confidence, turn.turn_id in step.state.distrusted_turns
    )


def record_evidence(
    step: Step,
    observation: ParsedObservation,
    node: NodeVisit,
    plan_node: NodePlan,
    answer: list[Turn],
) -> tuple[bool, list[str]]:
    """Write the signals; returns (an EVD-010 rejection happened, accepted misconception ids)."""
    state = step.state
    if not observation.signals:
        return False, []
    node_turns = [_turn_info(step, t) for t in state.node_turns()]
    answer_turns = [_turn_info(step, t) for t in answer]
    confidences = {t.turn_id: t.confidence for t in node_turns}
    stt_rejected = False
    misconception_signals: list[str] = []
    for index, proposal in enumerate(observation.signals, start=1):
        decision = decide_signal(
            proposal,
            node_id=node.node_id,
            targets=plan_node.targets,
            node_turns=node_turns,
            answer_turns=answer_turns,
            existing=state.ledger.by_key,
            turn_confidence=confidences,
            next_signal_id=state.ledger.next_signal_id(),
        )
        if isinstance(decision, Rejected):
            stt_rejected |= decision.code is RejectionCode.STT_LOW_CONFIDENCE
            _reject(step, decision, index, node.node_id)
            continue
        if isinstance(decision, Duplicate):
            continue
        entry = decision.entry
        _emit_entry(step, entry)
        if entry.signal_kind is SignalKind.MISCONCEPTION:
            misconception_signals.append(entry.signal_id)
        if entry.signal_kind is SignalKind.SELF_CORRECTION and not decision.merged:
            _self_correction(step, decision, node)
    return stt_rejected, misconception_signals


def _reject(step: Step, decision: Rejected, index: int, node_id: str) -> None:
    """A rejected proposal is an ``evidence_rejected`` guardrail (never a signal)."""
    step.emit(
        guardrail_payload(
            guardrail_id=f"evidence-rejected:{node_id}:{step.state.events_applied + 1}",
            guardrail_type="evidence_rejected",
            severity="warning",
            description=(
                f"{decision.rule_id} signal {index} ({decision.proposal.target_id}) rejected: "
                f"{decision.reason}"
            ),
            action="event_only",
            node_id=node_id,
        )
    )


def _emit_entry(step: Step, entry: LedgerEntry) -> None:
    """The ``evidence_signal`` of a new or merged ledger entry."""
    step.emit(
        p.EvidenceSignal(
            signalId=entry.signal_id,
            nodeId=entry.node_id,
            turnIds=list(entry.turn_ids),
            targetIds=[entry.target_id],
            evidenceDimension=entry.dimension,
            signalKind=entry.signal_kind,
            description=entry.description,
            confidence=entry.confidence,
            sttConfidenceSummary=p.SttConfidenceSummary(
                min=entry.stt.min,
                max=entry.stt.max,
                mean=entry.stt.mean,
                turnCount=entry.stt.turn_count,
            ),
            llmProposal=True,
            excerpt=entry.excerpt,
            rubricLevel=entry.rubric_level,
            scaffoldingIntensity=entry.scaffolding_intensity,
            scaffoldingEffective=entry.scaffolding_effective,
            passageId=drawn_passage_id(step.state, entry.node_id),
        )
    )


def _self_correction(step: Step, decision: Recorded, node: NodeVisit) -> None:
    entry = decision.entry
    turns = step.state.node_turns()
    first = entry.turn_ids[0]
    earlier = [t for t in turns if t.turn_id != first and t.turn_id not in entry.turn_ids]
    before = [t for t in earlier if turns.index(t) < [x.turn_id for x in turns].index(first)]
    original = (
        node.misconceptions[-1]
        if node.misconceptions
        else (before[-1].text if before else "an earlier claim")
    )
    quoted = decision.proposal.excerpt_text if decision.linked_by == "excerpt" else ""
    corrected = quoted or step.state.turns[first].text  # the candidate's words, never the model's
    turn_ids = ([before[-1].turn_id] if before else []) + list(entry.turn_ids)
    step.emit(
        p.SelfCorrectionDetected(
            nodeId=node.node_id,
            turnIds=turn_ids,
            originalClaim=original[:20000],
            correctedClaim=corrected,
            confidence=entry.confidence,
        )
    )


def record_misconceptions(
    step: Step,
    observation: ParsedObservation,
    node: NodeVisit,
    answer: list[Turn],
    signal_ids: list[str],
) -> None:
    turn_ids = [t.turn_id for t in answer] or node.turn_ids[-1:]
    targets = sorted(
        {
            step.state.ledger.entries[s].target_id
            for s in signal_ids
            if s in step.state.ledger.entries
        }
    )
    for item in observation.misconceptions:
        step.emit(
            p.MisconceptionDetected(
                nodeId=node.node_id,
                misconceptionId=f"misc-{step.state.misconceptions + 1:03d}",
                description=(
                    f"{item.concept}: {item.misconception} "
                    f"(correct understanding: {item.correction})"
                ),
                turnIds=list(turn_ids),
                targetIds=targets,
                confidence=(
                    item.confidence
                    if item.confidence is not None
                    else UNKNOWN_MISCONCEPTION_CONFIDENCE
                ),
                signalId=signal_ids[0] if signal_ids else None,
            )
        )
