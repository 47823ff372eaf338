"""Invariant checks shared by the property tests (and usable on any recorded session)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ioa.events import EventEnvelope, check_causal_order, validate_event
from ioa.output_filters import FilterContext, OutputPipeline, PipelineResult
from ioa.runtime import RuntimeController, Speak, rebuild_state
from ioa.runtime.commands import gate
from ioa.runtime.plan import ExamPlan
from ioa.runtime.state import RuntimeState
from ioa.runtime.transitions import completion, forced_exit
from ioa.schema import (
    AlwaysCondition,
    CandidateCommandType,
    EvidenceSatisfiedCondition,
    PolicyEscalationCondition,
    TimeElapsedCondition,
    TurnCountReachedCondition,
)


@dataclass
class RecordingPipeline:
    """Wraps the output pipeline and remembers every (context, result)."""

    inner: OutputPipeline
    runs: list[tuple[FilterContext, PipelineResult]] = field(default_factory=list)

    def run(self, text: str, context: FilterContext) -> PipelineResult:
        result = self.inner.run(text, context)
        self.runs.append((context, result))
        return result

    def is_clean(self, text: str, context: FilterContext) -> bool:
        return self.inner.is_clean(text, context)

    @property
    def max_chars(self) -> int:
        return self.inner.max_chars


def record_speech(controller: RuntimeController) -> RecordingPipeline:
    recording = RecordingPipeline(controller.plan.pipeline)
    controller.plan.pipeline = recording  # type: ignore[assignment]
    return recording


def check_speech(recording: RecordingPipeline, spoken: Sequence[Speak]) -> None:
    """Every spoken text is a part the pipeline produced, and passes it unchanged."""
    produced: dict[str, FilterContext] = {}
    for context, result in recording.runs:
        for part in result.parts:
            produced.setdefault(part, context)
    for speak in spoken:
        assert speak.text in produced, f"spoken text never validated: {speak.text!r}"
        assert 0 < len(speak.text) <= 500
        again = recording.inner.run(speak.text, produced[speak.text])
        assert again.parts == (speak.text,) and not again.interceptions, speak.text


def check_sequence(events: Sequence[EventEnvelope]) -> None:
    """seq 1..N, unique ids, every event valid on the wire, EVT-003 causal order."""
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len({e.eventId for e in events}) == len(events)
    for event in events:
        validate_event(event.to_wire())
    assert check_causal_order(list(events), entered_node_ids=set()) == []


def check_completion(events: Sequence[EventEnvelope], *, must_complete: bool) -> None:
    """At most (or exactly) one exam_completed, then only the end node's closing speech."""
    kinds = [e.type.value for e in events]
    count = kinds.count("exam_completed")
    assert count == (1 if must_complete else count) and count <= 1
    if count:
        index = kinds.index("exam_completed")
        entered = [e.payload.nodeId for e in events[:index] if e.type.value == "node_entered"]
        end_node = entered[-1] if entered else None
        for event in events[index + 1 :]:
            assert event.type.value in ("examiner_utterance_started", "examiner_utterance_final")
            assert event.payload.nodeId == end_node


def check_follow_ups(events: Sequence[EventEnvelope], plan: ExamPlan) -> None:
    """No follow-up beyond the node's budget, per node visit."""
    used = 0
    for event in events:
        if event.type.value == "node_entered":
            used = 0
        elif event.type.value == "follow_up_used":
            used += 1
            budget = plan.node(event.payload.nodeId).max_follow_ups
            assert event.payload.followUpIndex == used <= budget


def _state_before(
    plan: ExamPlan, session_id: str, events: Sequence[EventEnvelope], index: int
) -> RuntimeState:
    return rebuild_state(plan, session_id, events[:index])


def check_transitions(plan: ExamPlan, session_id: str, events: Sequence[EventEnvelope]) -> None:
    """Every transition_decision is one the policy allows."""
    for index, event in enumerate(events):
        if event.type.value != "transition_decision":
            continue
        decision: Any = event.payload
        source = plan.node(decision.fromNodeId)
        assert not source.is_end
        edges = {t.id: t for t in source.transitions}
        exited = events[index - 1].payload
        assert events[index - 1].type.value == "node_exited" and exited.nodeId == source.node_id
        if decision.edgeId.startswith("runtime-"):
            assert plan.node(decision.toNodeId).is_end
            continue
        if decision.edgeId == "beat-wrap-up":
            assert decision.toNodeId == plan.wrap_up_node_id
            continue
        edge = edges[decision.edgeId]
        members = plan.pools.get(edge.targetNodeId, (edge.targetNodeId,))
        assert decision.toNodeId in members
        assert decision.poolId == (edge.targetNodeId if edge.targetNodeId in plan.pools else None)
        before = _state_before(plan, session_id, events, index - 1)
        assert before.node is not None and before.node.node_id == source.node_id
        condition = edge.condition
        if decision.reason == "natural_completion":
            assert isinstance(condition, AlwaysCondition | EvidenceSatisfiedCondition)
            policy = completion(source, before.ledger, before.node.candidate_turns)
            assert policy.holds, policy.why_not
            if isinstance(condition, EvidenceSatisfiedCondition):
                assert before.ledger.satisfied(source.node_id, condition.targetIds)
        elif decision.reason == "condition_met":
            if isinstance(condition, TurnCountReachedCondition):
                assert before.node.candidate_turns >= condition.count
            else:
                assert isinstance(condition, TimeElapsedCondition)
                elapsed = before.node.clock.elapsed(_ms(event))
                assert elapsed >= round(condition.seconds * 1000)
        elif decision.reason == "candidate_skip":
            assert gate(CandidateCommandType.SKIP, source.commands).allowed
            assert exited.reason == "candidate_skip"
        else:  # forced exits
            assert decision.reason in (
                "follow_ups_exhausted",
                "time_exhausted",
                "guardrail_override",
            )
            assert edge is forced_exit(source) or isinstance(condition, PolicyEscalationCondition)


def _ms(event: EventEnvelope) -> int:
    from ioa.runtime.evolve import event_ms

    return event_ms(event)


def check_replay(controller: RuntimeController, events: Sequence[EventEnvelope]) -> None:
    """The state rebuilt from the stored (wire) events equals the live state."""
    wires = [e.to_wire() for e in events]
    rebuilt = rebuild_state(controller.plan, controller.session_id, wires)
    assert rebuilt == controller.state
