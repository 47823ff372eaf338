"""One step of the controller: handling a single input at a single instant.

A :class:`Step` collects the events and effects of the step. :meth:`Step.emit` builds an event
(deterministic id, the step's timestamp, ``seq`` = last + 1), applies it to the state at once
(so later decisions of the same step see it) and records it. :meth:`Step.say` runs a text
through the output validation pipeline, records every interception as a
``guardrail_triggered`` event and turns the validated parts into ``Speak`` effects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from typing import Any, Final

from ioa.events import (
    SCHEMA_VERSION,
    EventEnvelope,
    EventSource,
    EventType,
    format_timestamp,
)
from ioa.events import payloads as p
from ioa.events.payloads import EventPayload
from ioa.output_filters import FilterContext
from ioa.runtime.clock import to_datetime
from ioa.runtime.effects import Effect, Purpose, Speak
from ioa.runtime.evolve import apply_event
from ioa.runtime.ids import Rng, event_id
from ioa.runtime.plan import ExamPlan
from ioa.runtime.state import RuntimeState
from ioa.runtime.timing import Timing

MAX_TEXT: Final = 20_000
"""The longest text an event field holds."""


class Flow(Enum):
    """What one step of a decision pipeline (the observation's guardrails, a command's gates)
    tells the pipeline: go on to the next step, or the input is dealt with."""

    CONTINUE = "continue"
    STOP = "stop"


@lru_cache(maxsize=64)
def wire_time(ms: int) -> str:
    """The envelope timestamp of an epoch-millisecond instant (cached: a step's events share
    one instant, and formatting a datetime is most of an envelope's cost)."""
    return format_timestamp(to_datetime(ms))


@dataclass(frozen=True, slots=True)
class PendingUtterance:
    """A ``Speak`` effect the bot has not finished yet (transient, never replayed: an
    utterance in flight when a bot crashes is lost with it)."""

    node_id: str
    text: str
    purpose: Purpose
    started: bool = False


@dataclass
class Outbox:
    """The controller's transient bookkeeping of utterances in flight."""

    pending: dict[str, PendingUtterance] = field(default_factory=dict)
    serial: int = 0

    def next_id(self) -> str:
        self.serial += 1
        return f"utt-{self.serial:04d}"


def guardrail_payload(
    *,
    guardrail_id: str,
    guardrail_type: str,
    severity: str,
    description: str,
    action: str,
    node_id: str | None,
    original: str | None = None,
    replacement: str | None = None,
) -> p.GuardrailTriggered:
    """A ``guardrail_triggered`` payload. An intercepted text goes into ``originalText`` and
    what was said instead into ``replacementText`` (empty when nothing was), never into the
    description; the event is proctor/marking-only."""
    fields: dict[str, Any] = {
        "guardrailId": guardrail_id[:200],
        "guardrailType": guardrail_type,
        "severity": severity,
        "description": description,
        "actionTaken": action,
        "contextNodeId": node_id,
    }
    if original is not None:
        fields["originalText"] = original[:MAX_TEXT]
        fields["replacementText"] = (replacement or "")[:MAX_TEXT]
    return p.GuardrailTriggered(**fields)


@dataclass
class Step:
    """The working set of one ``handle()`` call."""

    plan: ExamPlan
    state: RuntimeState
    rng: Rng
    outbox: Outbox
    now: int
    events: list[EventEnvelope] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    timing: Timing = field(default_factory=Timing)

    @property
    def session_id(self) -> str:
        return self.state.session_id

    def emit(
        self,
        payload: EventPayload,
        *,
        source: EventSource = EventSource.RUNTIME_CONTROLLER,
        correlation_id: str | None = None,
    ) -> EventEnvelope:
        """Build, apply and record one event."""
        state = self.state
        # The payload was validated when it was built; the envelope's own fields are made
        # here from trusted values (the session id was checked when the controller was made,
        # the timestamp and the UUIDv7 are formatted by the protocol's functions), so the
        # envelope is assembled without a second validation.
        envelope = EventEnvelope.model_construct(
            eventId=event_id(state.session_id, state.events_applied + 1, self.now),
            sessionId=state.session_id,
            seq=state.last_seq + 1,
            timestamp=wire_time(self.now),
            source=source,
            type=EventType(payload.type),
            payload=payload,
            correlationId=correlation_id[:200] if correlation_id else None,
            schemaVersion=SCHEMA_VERSION,
        )
        apply_event(state, envelope, self.plan)
        self.events.append(envelope)
        return envelope

    def effect(self, effect: Effect) -> None:
        self.effects.append(effect)

    # --- speech ------------------------------------------------------------------------------

    def filter_context(self, node_id: str | None = None) -> FilterContext:
        """The output filter inputs for the current (or given) node."""
        target = node_id or self.state.current_node_id or self.state.last_node_id
        plan_node = self.plan.nodes.get(target) if target else None
        if plan_node is None:
            return FilterContext(
                node_id=target or "none",
                neutral_continue=self.plan.texts.neutral_continue,
                redirect=self.plan.texts.topic_redirect,
                neutral_probe=self.plan.texts.neutral_probe,
            )
        node = self.state.node
        said: tuple[str, ...] = ()
        question = plan_node.opening or ""
        if node is not None and node.node_id == plan_node.node_id:
            said = tuple(node.turn_texts)
            question = node.last_question or question
        return FilterContext(
            node_id=plan_node.node_id,
            rubric_texts=plan_node.rubric_texts,
            scenario_domain=plan_node.scenario_domain,
            extra_vocabulary=(plan_node.target_vocabulary,),
            candidate_turns=said,
            current_question=question,
            neutral_continue=self.plan.texts.neutral_continue,
            redirect=self.plan.texts.topic_redirect,
            neutral_probe=self.plan.texts.neutral_probe,
            protected_texts=plan_node.protected_texts,
            speakable_texts=plan_node.speakable_texts,
        )

    def say(self, text: str, purpose: Purpose, *, node_id: str | None = None) -> list[str]:
        """Validate ``text`` and queue it for speaking; returns the parts spoken."""
        where = node_id or self.state.current_node_id or self.state.last_node_id or "none"
        result = self.plan.pipeline.run(text, self.filter_context(where))
        for index, interception in enumerate(result.interceptions, start=1):
            self.emit(
                guardrail_payload(
                    guardrail_id=(
                        f"{interception.filter_name}:{where}:{self.state.events_applied + 1}"
                        f":{index}"
                    ),
                    guardrail_type=interception.filter_name,
                    severity="block" if interception.severity == "error" else "warning",
                    description=(
                        f"{interception.rule_id} {interception.filter_name} "
                        f"({interception.action}): {interception.detail}"
                    ),
                    action="output_replaced",
                    node_id=where,
                    original=interception.original_text,
                    replacement=interception.replacement_text,
                )
            )
        for part in result.parts:
            utterance_id = self.outbox.next_id()
            self.outbox.pending[utterance_id] = PendingUtterance(where, part, purpose)
            self.effect(Speak(utterance_id, where, part, purpose))
        return list(result.parts)
