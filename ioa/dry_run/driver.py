"""Run one simulated candidate through the real runtime controller (pure, deterministic).

:func:`run_persona` plays three parts around a :class:`~ioa.runtime.RuntimeController`, using
its public inputs only:

* the **bot**: every ``Speak`` is spoken one after the other (:data:`MS_PER_WORD` a word) and
  reported with ``UtteranceStarted``/``UtteranceFinished``; a ``Tick`` is sent at every
  controller deadline on the way (budgets, silence, pacing);
* the **candidate**: the persona (:mod:`ioa.dry_run.personas`) chooses each move after the
  examiner has finished speaking; an answer takes :data:`THINK_MS` to start and
  :data:`MS_PER_WORD` a word to say, a button press :data:`PRESS_MS`;
* a **faithful examiner** in place of the LLM: after each answer it reports exactly what the
  persona says the answer covers (``report_observation``), asks a follow-up while targets are
  uncovered and the node's follow-up budget lasts, and answers the runtime's instructions
  (``PromptLlm``) with a neutral line.

Question pools are drawn by an injected :class:`VariantRng`: variant ``k`` takes the ``k``-th
node of every pool, so running variants ``0..max pool size - 1`` draws every pooled node.
A run that does not reach ``exam_completed`` within :data:`MAX_MOVES` candidate moves stops
there (a dead end in the report).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ioa.dry_run.personas import Move, Press, Say, Silence, Turn
from ioa.events import EventEnvelope
from ioa.events import payloads as p
from ioa.runtime import (
    BotReady,
    CandidateReady,
    Command,
    Decision,
    EndSession,
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
)
from ioa.schema import AssessmentPackage
from ioa.schema.nodes import Node

T0: Final = 1_767_603_600_000
"""When every dry-run session opens (2026-01-05T09:00:00Z): the runs are reproducible."""
MS_PER_WORD: Final = 400
MIN_UTTERANCE_MS: Final = 600
THINK_MS: Final = 2_000
PRESS_MS: Final = 1_000
MAX_MOVES: Final = 300
MAX_TIMER_STEPS: Final = 10_000
MAX_PROMPT_DEPTH: Final = 3
FOLLOW_UPS: Final = (
    "Could you expand on that a little?",
    "What else would you add to your answer?",
    "Can you take that one step further?",
    "Is there anything more you would say about it?",
)
REDIRECTS: Final = (
    "Let us stay with the question, please.",
    "Could we come back to the question I asked?",
    "Please try to answer the question itself.",
)


class VariantRng:
    """The controller's RNG for the dry run: always the ``variant``-th option (modulo)."""

    def __init__(self, variant: int) -> None:
        self.variant = variant

    def choose(self, key: str, options: Sequence[str]) -> str:
        if not options:
            raise ValueError("cannot choose from no options")
        return options[self.variant % len(options)]


def _duration_ms(text: str) -> int:
    return max(MIN_UTTERANCE_MS, MS_PER_WORD * len(text.split()))


@dataclass
class _Run:
    package: AssessmentPackage
    persona: Callable[[Turn], Move]
    controller: RuntimeController
    clock: ManualClock
    events: list[EventEnvelope] = field(default_factory=list)
    queue: list[Speak] = field(default_factory=list)
    speaking: tuple[str, int] | None = None
    """(utterance id, when it ends) of the utterance being spoken."""
    presses: int = 0
    llm_requests: dict[str, int] = field(default_factory=dict)
    """Per node, the examiner's ``report_observation`` calls: what a live examiner asks the LLM."""

    # --- the bot ---------------------------------------------------------------------------

    def send(self, item: RuntimeInput, depth: int = 0) -> Decision:
        decision = self.controller.handle(item)
        self.events.extend(decision.events)
        for effect in decision.effects:
            if isinstance(effect, Speak):
                self.queue.append(effect)
            elif isinstance(effect, PromptLlm) and depth < MAX_PROMPT_DEPTH:
                self._count_request()
                self.send(Observation(self._instructed(effect.instruction)), depth + 1)
            elif isinstance(effect, EndSession):
                self.queue.clear()
        self._start_next()
        return decision

    def _start_next(self) -> None:
        if self.speaking is not None or not self.queue:
            return
        speak = self.queue.pop(0)
        self.speaking = (speak.utterance_id, self.clock.now_ms() + _duration_ms(speak.text))
        self.send(UtteranceStarted(speak.utterance_id))

    def advance_to(self, target_ms: int) -> None:
        """Time passes to ``target_ms``: utterances end and timers fire on the way."""
        for _ in range(MAX_TIMER_STEPS):
            finish = self.speaking[1] if self.speaking is not None else None
            deadline = None if self.controller.completed else self.controller.next_deadline_ms()
            upcoming = min((t for t in (finish, deadline) if t is not None), default=None)
            if upcoming is None or upcoming > target_ms:
                break
            self.clock.set(max(self.clock.now_ms(), upcoming))
            if self.speaking is not None and finish == upcoming:
                utterance_id, _ = self.speaking
                self.speaking = None
                self.send(UtteranceFinished(utterance_id, 0))
            else:
                self.send(Tick())
        self.clock.set(max(self.clock.now_ms(), target_ms))

    def finish_speaking(self) -> None:
        for _ in range(MAX_TIMER_STEPS):
            if self.speaking is None:
                return
            self.advance_to(self.speaking[1])

    def _count_request(self) -> None:
        node_id = self.controller.state.current_node_id or ""
        self.llm_requests[node_id] = self.llm_requests.get(node_id, 0) + 1

    # --- the examiner ------------------------------------------------------------------------

    def node(self) -> Node | None:
        node_id = self.controller.state.current_node_id
        return self.package.node(node_id) if node_id else None

    def _visit(self) -> list[EventEnvelope]:
        """The events since the current node was entered."""
        for index in range(len(self.events) - 1, -1, -1):
            if isinstance(self.events[index].payload, p.NodeEntered):
                return self.events[index:]
        return []

    def covered(self) -> frozenset[str]:
        return frozenset(
            target
            for e in self._visit()
            if isinstance(e.payload, p.EvidenceSignal) and e.payload.signalKind.value == "positive"
            for target in e.payload.targetIds
        )

    def _follow_up(self, node: Node, covered: frozenset[str]) -> str | None:
        used = sum(1 for e in self._visit() if isinstance(e.payload, p.FollowUpUsed))
        budget = node.followUpPolicy.maxFollowUps if node.followUpPolicy else 0
        uncovered = [t for t in node.evidenceTargets if t.id not in covered]
        if uncovered and used < budget:
            return FOLLOW_UPS[used % len(FOLLOW_UPS)]
        return None

    def observe(self, node: Node, say: Say) -> dict[str, Any]:
        covered = self.covered() | set(say.covers)
        labels = {t.id: t.label for t in node.evidenceTargets}
        args: dict[str, Any] = {
            "signals": [
                {"signalType": t, "signalKind": "positive", "excerpt": labels[t], "confidence": 0.9}
                for t in say.covers
                if t in labels
            ],
            "answerQuality": say.quality,
            "needsFollowUp": False,
            "evidenceSufficient": False,
            "anxietyDetected": say.anxious,
            "spokenText": "Thank you.",
        }
        if say.anxious:
            return {**args, "spokenText": "Take your time, there is no hurry."}
        if say.quality in ("off_topic", "unclear"):
            turns = sum(1 for e in self._visit() if isinstance(e.payload, p.TranscriptFinal))
            return {**args, "spokenText": REDIRECTS[turns % len(REDIRECTS)]}
        follow_up = self._follow_up(node, frozenset(covered))
        if follow_up is not None:
            return {**args, "needsFollowUp": True, "followUpType": "probe", "spokenText": follow_up}
        return {**args, "evidenceSufficient": True}

    def _instructed(self, instruction: str) -> dict[str, Any]:
        node = self.node()
        opening = node.prompt.opening if node and node.prompt and node.prompt.opening else None
        lowered = instruction.lower()
        spoken = "Please go on."
        follow_up = None
        if "rephrase" in lowered:
            spoken = f"Let me put it another way. {opening}" if opening else spoken
        elif "clarif" in lowered:
            spoken = f"To clarify, the question is: {opening}" if opening else spoken
        elif "open this part" in lowered:
            spoken = opening or "Please go ahead."
        elif "not approved moving on" in lowered and node is not None:
            follow_up = self._follow_up(node, self.covered())
        return {
            "signals": [],
            "answerQuality": "substantive",
            "needsFollowUp": follow_up is not None,
            "evidenceSufficient": False,
            "anxietyDetected": False,
            "spokenText": follow_up or spoken,
            **({"followUpType": "probe"} if follow_up else {}),
        }

    # --- the candidate -----------------------------------------------------------------------

    def move(self, node: Node, move: Move) -> None:
        now = self.clock.now_ms()
        if isinstance(move, Silence):
            self.advance_to(now + move.seconds * 1000)
            return
        if isinstance(move, Press):
            self.advance_to(now + PRESS_MS)
            if self.node() is node and not self.controller.completed:
                self.presses += 1
                self.send(Command(f"dry-run-{self.presses}", move.command, "candidate", {}))
            return
        self.advance_to(now + THINK_MS + _duration_ms(move.text))
        if self.node() is not node or self.controller.completed:
            return
        self.send(TranscriptSegment("candidate", move.text, 0.93))
        if not self.controller.completed and self.node() is node:
            self._count_request()
            self.send(Observation(self.observe(node, move)))


@dataclass(frozen=True, slots=True)
class RunResult:
    """One persona's session: its events, and whether it stopped before the end."""

    persona: str
    variant: int
    events: tuple[EventEnvelope, ...]
    stuck_at: str | None
    """The node where the run stopped without ``exam_completed`` (a dead end), else None."""
    llm_requests: tuple[tuple[str, int], ...] = ()
    """Per node (package order of first request), the examiner's LLM requests: one per
    candidate answer and one per runtime instruction (``PromptLlm``)."""


def run_persona(
    package: AssessmentPackage, name: str, persona: Callable[[Turn], Move], *, variant: int = 0
) -> RunResult:
    """Run ``persona`` through a fresh controller (module docstring)."""
    clock = ManualClock(T0)
    controller = RuntimeController(
        package, session_id=f"dry-run-{name}-{variant}", clock=clock, rng=VariantRng(variant)
    )
    run = _Run(package, persona, controller, clock)
    run.send(BotReady())
    run.send(CandidateReady())
    visit_key: tuple[int, str] | None = None
    index = 0
    for _ in range(MAX_MOVES):
        run.finish_speaking()
        node = run.node()
        if controller.completed or node is None:
            break
        entered = sum(1 for e in run.events if isinstance(e.payload, p.NodeEntered))
        if visit_key is None or visit_key != (entered, node.nodeId):
            visit_key, index = (entered, node.nodeId), 0
        run.move(node, persona(Turn(node, index, run.covered())))
        index += 1
    run.finish_speaking()
    stuck = None if controller.completed else controller.state.current_node_id
    return RunResult(name, variant, tuple(run.events), stuck, tuple(run.llm_requests.items()))
