"""The studio's preview: an author answers a draft as a candidate would, in text, against the
real runtime controller and the offline examiner's judgement, and sees what the controller
decided. REHEARSAL ONLY: nothing is stored, so a preview never counts anywhere.

Stateless by replay. The browser keeps the author's inputs (answers and command buttons, each
with the milliseconds since the preview started); every request replays all of them through a
fresh :class:`~ioa.runtime.RuntimeController` on a manual clock (deterministic: the same inputs
give the same conversation) and returns the conversation, the controller's decisions and its
state. Between inputs time passes as it did for the author: timers (silence, budgets) fire at
their deadlines on the way.

The examiner's part is :mod:`bot.offline_examiner`'s, fed from the package node directly
(opening, prompt seed, evidence targets, follow-up budget) instead of a compiled task message:
it reports the targets whose words the answer shares, asks follow-ups from the prompt seed,
detects spoken commands, and answers the runtime's instructions. The examiner speaks
instantly (each utterance is reported started and finished at once).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal, NotRequired, TypedDict

from bot.offline_examiner import Brief, Conversation, Target, instructed, observation
from ioa.events import EventEnvelope
from ioa.events import payloads as p
from ioa.runtime import (
    BotReady,
    CandidateReady,
    Command,
    Decision,
    ManualClock,
    Observation,
    PromptLlm,
    RuntimeController,
    RuntimeInput,
    Speak,
    Tick,
    TranscriptSegment,
    UtteranceFinished,
    UtteranceStarted,
    to_ms,
)
from ioa.schema import AssessmentPackage

T0: Final = 1_767_603_600_000
MAX_INPUTS: Final = 400
MAX_AT_MS: Final = 6 * 3600 * 1000
MAX_TEXT: Final = 2000
MAX_TIMER_STEPS: Final = 10_000
MAX_PROMPT_DEPTH: Final = 3


class PreviewInputError(ValueError):
    """An input of the preview is malformed (the message names it)."""


@dataclass(frozen=True, slots=True)
class PreviewInput:
    """One thing the author did: an answer (``text``) or a command button (``command``)."""

    at_ms: int
    text: str | None = None
    command: str | None = None


def parse_inputs(raw: object) -> list[PreviewInput]:
    """The inputs of a request body; raises :class:`PreviewInputError` naming the bad one."""
    if not isinstance(raw, list):
        raise PreviewInputError("inputs must be a list")
    if len(raw) > MAX_INPUTS:
        raise PreviewInputError(f"a preview takes at most {MAX_INPUTS} inputs; restart it")
    out: list[PreviewInput] = []
    last = 0
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise PreviewInputError(f"inputs[{index}] must be an object")
        at = item.get("atMs")
        if not isinstance(at, int) or isinstance(at, bool) or not last <= at <= MAX_AT_MS:
            raise PreviewInputError(f"inputs[{index}].atMs must be a non-decreasing integer")
        last = at
        text, command = item.get("text"), item.get("command")
        if (text is None) == (command is None):
            raise PreviewInputError(f"inputs[{index}] needs exactly one of text or command")
        if text is not None and (not isinstance(text, str) or not 0 < len(text) <= MAX_TEXT):
            raise PreviewInputError(f"inputs[{index}].text must be 1-{MAX_TEXT} characters")
        if command is not None and (not isinstance(command, str) or not command):
            raise PreviewInputError(f"inputs[{index}].command must be a command name")
        out.append(PreviewInput(at, text, command))
    return out


class Said(TypedDict):
    """One line of the preview's conversation."""

    speaker: Literal["examiner", "candidate"]
    text: NotRequired[str]
    command: NotRequired[str]
    atMs: int


class DecisionRow(TypedDict):
    """One controller event as the staff panel lists it (:func:`decision_row`)."""

    seq: int | None
    type: str
    summary: str


class PreviewState(TypedDict):
    """Where the controller stands (:func:`state_of`)."""

    nodeId: str | None
    nodeKind: str | None
    completed: bool
    covered: list[str]
    targets: list[str]
    followUpsUsed: int
    maxFollowUps: int
    nodeBudgetSec: float | None
    nodeElapsedSec: float | None
    nextTimerInSec: float | None
    guardrails: int


class PreviewResult(TypedDict):
    """What :func:`run_preview` answers."""

    conversation: list[Said]
    decisions: list[DecisionRow]
    state: PreviewState


@dataclass
class _Preview:
    package: AssessmentPackage
    controller: RuntimeController
    clock: ManualClock
    events: list[EventEnvelope] = field(default_factory=list)
    said: list[Said] = field(default_factory=list)
    answer: str = ""

    def send(self, item: RuntimeInput, depth: int = 0) -> Decision:
        decision = self.controller.handle(item)
        self.events.extend(decision.events)
        for effect in decision.effects:
            if isinstance(effect, Speak):
                self.said.append({"speaker": "examiner", "text": effect.text, "atMs": self._now()})
                self.send(UtteranceStarted(effect.utterance_id), depth)
                self.send(UtteranceFinished(effect.utterance_id, 0), depth)
            elif isinstance(effect, PromptLlm) and depth < MAX_PROMPT_DEPTH:
                args = instructed(self.conversation(""), effect.instruction)
                self.send(Observation(args), depth + 1)
        return decision

    def _now(self) -> int:
        return self.clock.now_ms() - T0

    def advance_to(self, target_ms: int) -> None:
        for _ in range(MAX_TIMER_STEPS):
            deadline = None if self.controller.completed else self.controller.next_deadline_ms()
            if deadline is None or deadline > target_ms:
                break
            self.clock.set(max(self.clock.now_ms(), deadline))
            self.send(Tick())
        self.clock.set(max(self.clock.now_ms(), target_ms))

    def visit(self) -> list[EventEnvelope]:
        for index in range(len(self.events) - 1, -1, -1):
            if isinstance(self.events[index].payload, p.NodeEntered):
                return self.events[index:]
        return []

    def conversation(self, answer: str) -> Conversation:
        node_id = self.controller.state.current_node_id
        node = self.package.node(node_id) if node_id else None
        brief = Brief()
        if node is not None:
            brief = Brief(
                opening=node.prompt.opening or "" if node.prompt else "",
                seed=node.promptSeed,
                targets=tuple(
                    Target(t.id, t.label, t.description or "") for t in node.evidenceTargets
                ),
                max_follow_ups=node.followUpPolicy.maxFollowUps if node.followUpPolicy else 0,
            )
        visit = self.visit()
        covered = {
            target
            for e in visit
            if isinstance(e.payload, p.EvidenceSignal) and e.payload.signalKind.value == "positive"
            for target in e.payload.targetIds
        }
        asked = [
            e.payload.text
            for e in visit
            if isinstance(e.payload, p.ExaminerUtteranceFinal) and e.payload.text
        ]
        return Conversation(
            brief=brief,
            answer=answer,
            covered=covered,
            follow_ups_used=sum(1 for e in visit if isinstance(e.payload, p.FollowUpUsed)),
            asked=asked,
            last_examiner=asked[-1] if asked else "",
            last_answer=self.answer,
        )


def run_preview(package: AssessmentPackage, inputs: Sequence[PreviewInput]) -> PreviewResult:
    """Replay ``inputs`` (module docstring); the conversation, decisions and state."""
    clock = ManualClock(T0)
    controller = RuntimeController(package, session_id="studio-preview", clock=clock)
    preview = _Preview(package, controller, clock)
    preview.send(BotReady())
    preview.send(CandidateReady())
    for number, item in enumerate(inputs, start=1):
        preview.advance_to(T0 + item.at_ms)
        if controller.completed:
            break
        if item.command is not None:
            preview.said.append(
                {"speaker": "candidate", "command": item.command, "atMs": item.at_ms}
            )
            preview.send(Command(f"preview-{number}", item.command, "candidate", {}))
            continue
        text = item.text or ""
        preview.said.append({"speaker": "candidate", "text": text, "atMs": item.at_ms})
        preview.answer = text
        preview.send(TranscriptSegment("candidate", text, 0.95))
        if not controller.completed:
            preview.send(Observation(observation(preview.conversation(text))))
    return {
        "conversation": preview.said,
        "decisions": [decision_row(e) for e in preview.events],
        "state": state_of(preview),
    }


def decision_row(event: EventEnvelope) -> DecisionRow:
    """One controller event as the staff panel lists it: type, when, and a short summary."""
    payload = event.payload
    summary = ""
    if isinstance(payload, p.NodeEntered):
        summary = f"entered {payload.nodeId} ({payload.nodeKind.value})"
    elif isinstance(payload, p.NodeExited):
        summary = f"left {payload.nodeId}: {payload.reason}"
    elif isinstance(payload, p.TransitionDecision):
        summary = (
            f"{payload.fromNodeId} → {payload.toNodeId} by {payload.edgeId} ({payload.reason})"
        )
    elif isinstance(payload, p.EvidenceSignal):
        summary = f"evidence {payload.signalKind.value}: {', '.join(payload.targetIds)}"
    elif isinstance(payload, p.FollowUpUsed):
        summary = f"follow-up {payload.followUpIndex} of {payload.maxFollowUps} ({payload.reason})"
    elif isinstance(payload, p.GuardrailTriggered):
        summary = f"{payload.guardrailType}: {payload.description}"
    elif isinstance(payload, p.RecoveryStarted):
        summary = f"recovery {payload.recoveryType}: {payload.triggerDescription}"
    elif isinstance(payload, p.CandidateCommandReceived):
        verdict = "accepted" if payload.accepted else f"refused ({payload.rejectionReason})"
        summary = f"command {payload.command.value} {verdict}"
    elif isinstance(payload, p.TimeWarning):
        summary = f"time warning ({payload.scope})"
    elif isinstance(payload, p.ExamCompleted):
        summary = f"exam completed: {payload.reason}"
    elif isinstance(payload, p.ExamStateChanged):
        summary = f"exam {payload.fromState.value} → {payload.toState.value}"
    return {"seq": event.seq, "type": event.type.value, "summary": summary}


def state_of(preview: _Preview) -> PreviewState:
    """Where the controller stands: node, evidence at this visit, follow-ups, timers."""
    controller = preview.controller
    node_id = controller.state.current_node_id
    node = preview.package.node(node_id) if node_id else None
    conversation = preview.conversation("")
    deadline = None if controller.completed else controller.next_deadline_ms()
    budget = node.timeBudget.maxDurationSec if node and node.timeBudget else None
    entered = next(
        (e for e in reversed(preview.events) if isinstance(e.payload, p.NodeEntered)), None
    )
    elapsed_sec = (
        round((preview.clock.now_ms() - to_ms(datetime.fromisoformat(entered.timestamp))) / 1000, 1)
        if entered is not None
        else None
    )
    return {
        "nodeId": node_id,
        "nodeKind": node.kind.value if node else None,
        "completed": controller.completed,
        "covered": sorted(conversation.covered),
        "targets": [t.id for t in node.evidenceTargets] if node else [],
        "followUpsUsed": conversation.follow_ups_used,
        "maxFollowUps": conversation.brief.max_follow_ups,
        "nodeBudgetSec": budget,
        "nodeElapsedSec": elapsed_sec,
        "nextTimerInSec": None
        if deadline is None
        else round((deadline - preview.clock.now_ms()) / 1000, 1),
        "guardrails": sum(1 for e in preview.events if isinstance(e.payload, p.GuardrailTriggered)),
    }
