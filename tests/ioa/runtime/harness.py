"""A small driver for controller tests: a package, a manual clock, a bot that acknowledges
every ``Speak`` at once, and helpers to feed inputs and look at what came out."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ioa.events import EventEnvelope, EventFactory, EventSource
from ioa.events import payloads as p
from ioa.runtime import (
    BotReady,
    CandidateActivity,
    CandidateReady,
    Command,
    Decision,
    Effect,
    ManualClock,
    Observation,
    ProctorAction,
    ProctorInstruction,
    RuntimeController,
    RuntimeInput,
    Speak,
    Tick,
    Timing,
    TranscriptSegment,
    UtteranceFinished,
    UtteranceStarted,
    rebuild_state,
)
from ioa.runtime.evolve import apply_event
from ioa.schema import AssessmentPackage, load_package
from tests.ioa.builders import example

T0 = 1_800_000_000_000
"""The epoch-ms instant the harness sessions open at."""


def obs(
    spoken: str = "Please go on.",
    *,
    signals: Iterable[dict[str, Any]] = (),
    quality: str = "substantive",
    follow_up: bool = False,
    done: bool = False,
    anxious: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """``report_observation`` arguments."""
    args: dict[str, Any] = {
        "signals": list(signals),
        "answerQuality": quality,
        "needsFollowUp": follow_up,
        "evidenceSufficient": done,
        "anxietyDetected": anxious,
        "spokenText": spoken,
    }
    args.update(extra)
    return args


def signal(
    target: str, kind: str = "positive", excerpt: str = "", confidence: float = 0.9, **extra: Any
) -> dict[str, Any]:
    """One ``signals`` item."""
    return {
        "signalType": target,
        "signalKind": kind,
        "excerpt": excerpt,
        "confidence": confidence,
        **extra,
    }


def package(document: dict[str, Any] | None = None) -> AssessmentPackage:
    return load_package(document if document is not None else example())


@dataclass
class Harness:
    """One controller plus everything it produced."""

    document: dict[str, Any] = field(default_factory=example)
    session_id: str = "session-test-1"
    ack: bool = True
    clock: ManualClock = field(default_factory=lambda: ManualClock(T0))
    controller: RuntimeController = field(init=False)
    events: list[EventEnvelope] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    spoken: list[Speak] = field(default_factory=list)
    on_decision: Callable[[Decision], None] | None = None
    mode: str = "voice"
    """The candidate's input mode (``bot_ready.inputMode``)."""
    timing: Timing = field(default_factory=Timing)

    def __post_init__(self) -> None:
        self.controller = RuntimeController(
            load_package(self.document),
            session_id=self.session_id,
            clock=self.clock,
            timing=self.timing,
        )

    # --- driving ------------------------------------------------------------------------------

    def at(self, seconds: float) -> Harness:
        self.clock.set(T0 + round(seconds * 1000))
        return self

    def send(self, item: RuntimeInput) -> Decision:
        decision = self.controller.handle(item)
        self._record(decision)
        if self.ack:
            for effect in decision.effects:
                if isinstance(effect, Speak):
                    self._record(self.controller.handle(UtteranceStarted(effect.utterance_id)))
                    self._record(
                        self.controller.handle(UtteranceFinished(effect.utterance_id, 1000))
                    )
        return decision

    def _record(self, decision: Decision) -> None:
        self.decisions.append(decision)
        self.events.extend(decision.events)
        self.effects.extend(decision.effects)
        self.spoken.extend(e for e in decision.effects if isinstance(e, Speak))
        if self.on_decision is not None:
            self.on_decision(decision)

    def start(self) -> Harness:
        self.at(0)
        self.send(BotReady("text" if self.mode == "text" else "voice"))
        self.send(CandidateReady())
        return self

    def say(self, text: str, confidence: float = 0.93, at: float | None = None) -> Decision:
        if at is not None:
            self.at(at)
        return self.send(TranscriptSegment("candidate", text, confidence))

    def observe(self, at: float | None = None, **kwargs: Any) -> Decision:
        if at is not None:
            self.at(at)
        spoken = kwargs.pop("spoken", "Please go on.")
        return self.send(Observation(obs(spoken, **kwargs)))

    def command(
        self, type_: str, command_id: str = "cmd-1", source: str = "candidate", **payload: Any
    ) -> Decision:
        return self.send(Command(command_id, type_, source, payload))

    def tick(self, at: float) -> Decision:
        self.at(at)
        return self.send(Tick())

    def activity(self, kind: str, active: bool, at: float | None = None) -> Decision:
        """The exam room's composing signal (text) or the bot's VAD (voice)."""
        if at is not None:
            self.at(at)
        return self.send(CandidateActivity(kind, active))  # type: ignore[arg-type]

    def connection(
        self, status: str, at: float | None = None, channel: str | None = None
    ) -> Decision:
        """A ``candidate_connection_changed`` stored by another writer (the web tier, or the
        bot's transport), folded in as the bot's journal adopts it, then the ``Tick`` the bot
        sends after folding."""
        if at is not None:
            self.at(at)
        state = self.controller.state
        stamp = datetime.fromtimestamp(self.clock.now_ms() / 1000, tz=UTC)
        make = EventFactory(
            session_id=self.session_id, source=EventSource.SYSTEM, clock=lambda: stamp
        )
        payload = p.CandidateConnectionChanged(
            status=status,  # type: ignore[arg-type]
            reconnects=0,
            channel=channel,  # type: ignore[arg-type]
            closeCode=1001 if status == "disconnected" else None,
        )
        envelope = make(payload).with_seq(state.last_seq + 1)
        apply_event(state, envelope, self.controller.plan)
        self.controller.log.append(envelope)
        self.events.append(envelope)
        return self.send(Tick())

    def instruct(self, mode: str, text: str) -> Decision:
        return self.send(ProctorInstruction(mode, text))  # type: ignore[arg-type]

    def proctor(self, action: str, **kwargs: Any) -> Decision:
        return self.send(ProctorAction(action, **kwargs))  # type: ignore[arg-type]

    def play(self, speaks: Iterable[Speak]) -> None:
        """The bot played these utterances to the end (for a harness built with ``ack=False``)."""
        for speak in list(speaks):
            self.send(UtteranceStarted(speak.utterance_id))
            self.send(UtteranceFinished(speak.utterance_id, 1500))

    def to_q1(self) -> Harness:
        """Start and finish the warm-up: the session is at ``q-dijkstra``."""
        self.start()
        self.say("Hello, I liked recursion most.", at=5)
        self.observe(at=6, spoken="Thank you, let us begin.", done=True)
        assert self.node == "q-dijkstra"
        return self

    # --- looking ------------------------------------------------------------------------------

    @property
    def node(self) -> str | None:
        return self.controller.state.current_node_id

    @property
    def state(self) -> Any:
        return self.controller.state

    def of(self, type_: str) -> list[Any]:
        """Payloads of the events of one type."""
        return [e.payload for e in self.events if e.type.value == type_]

    def types(self) -> list[str]:
        return [e.type.value for e in self.events]

    def texts(self) -> list[str]:
        return [s.text for s in self.spoken]

    def replayed_equal(self) -> bool:
        rebuilt = rebuild_state(self.controller.plan, self.session_id, self.events)
        return rebuilt == self.controller.state
