"""The controller's durable state: a pure function of the session's events.

Only :mod:`ioa.runtime.evolve` changes a :class:`RuntimeState`, and only by applying an event.
The live controller applies every event it emits the same way, so rebuilding the state from
the stored events gives an equal state (our 03 chapter §10, "replay equals live").

Times are epoch milliseconds. A :class:`StopWatch` measures the active time of the exam or of
a node: it is stopped while the exam is paused (and, for a node, while a ``pause_timer``
recovery is open).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ioa.events import ExamState
from ioa.ledger import EvidenceLedger
from ioa.materials.draw import AttachedMaterial


@dataclass
class StopWatch:
    """Active time since ``origin_ms``, minus the intervals it was stopped."""

    origin_ms: int
    stopped_total_ms: int = 0
    stopped_since_ms: int | None = None
    stop_reasons: set[str] = field(default_factory=set)
    extension_ms: int = 0
    """Time added to this clock's budget (proctor ``extend_time``)."""
    resumed_ms: int | None = None
    """When it last ran again after being stopped (a pause, the candidate away)."""

    def stop(self, reason: str, at_ms: int) -> None:
        """Stop for ``reason`` (several reasons may stop it at once)."""
        if not self.stop_reasons:
            self.stopped_since_ms = at_ms
        self.stop_reasons.add(reason)

    def start(self, reason: str, at_ms: int) -> None:
        """Remove ``reason``; the clock runs again when no reason is left."""
        if reason not in self.stop_reasons:
            return
        self.stop_reasons.discard(reason)
        if not self.stop_reasons and self.stopped_since_ms is not None:
            self.stopped_total_ms += max(0, at_ms - self.stopped_since_ms)
            self.stopped_since_ms = None
            self.resumed_ms = at_ms

    @property
    def running(self) -> bool:
        return not self.stop_reasons

    def elapsed(self, now_ms: int) -> int:
        """Active milliseconds at ``now_ms``."""
        stopped = self.stopped_total_ms
        if self.stopped_since_ms is not None:
            stopped += max(0, now_ms - self.stopped_since_ms)
        return max(0, now_ms - self.origin_ms - stopped)


@dataclass
class Turn:
    """One ``transcript_final``."""

    turn_id: str
    node_id: str
    speaker: str
    text: str
    confidence: float
    start_ms: int
    """Relative to the session epoch (``bot_ready``), as in the event."""
    end_ms: int
    at_ms: int
    """The event's timestamp (epoch ms)."""
    counted: bool
    """A candidate turn taken while the exam was in progress (counts for ``minTurns``)."""
    index: int
    """Position in the session's ``turn_order``."""
    corrected_by: str | None = None
    """The candidate's correction turn that superseded this misheard one
    (``transcript_corrected``); the words stay as heard, they are no longer the answer."""


@dataclass
class Episode:
    """An open recovery sequence (``recovery_started`` … ``recovery_resolved``)."""

    recovery_id: str
    kind: str
    node_id: str
    attempts: int
    started_ms: int
    last_attempt_ms: int


@dataclass
class Instruction:
    """A proctor instruction (``proctor_instruction`` events)."""

    instruction_id: str
    proctor_id: str
    mode: str
    text: str
    status: str
    issued_ms: int


@dataclass(frozen=True, slots=True)
class Draw:
    """A grounded node's ``passage_drawn``: ``drawn`` with its passage, or ``no_material`` /
    ``no_passage`` (the node asks its fallback question)."""

    outcome: str
    material_kind: str
    passage_id: str | None = None
    text: str | None = None
    cue: str | None = None


@dataclass
class NodeVisit:
    """The current node visit."""

    node_id: str
    entered_ms: int
    visit: int
    """1-based position of this visit in the session."""
    clock: StopWatch
    follow_ups: int = 0
    follow_up_started_ms: int | None = None
    candidate_turns: int = 0
    turn_ids: list[str] = field(default_factory=list)
    turn_texts: list[str] = field(default_factory=list)
    """The candidate's words at this visit, turn by turn (the output filters' vocabulary)."""
    last_candidate_ms: int | None = None
    """When the candidate's latest turn at this visit was recorded (epoch ms)."""
    last_question: str | None = None
    pending_command: str | None = None
    """A consequential command (finish, skip) awaiting the candidate's confirmation (§5)."""
    pending_command_id: str | None = None
    """Its commandId."""
    thinking: bool = False
    """The candidate said they are thinking aloud: no silence prompts until they speak."""
    misconceptions: list[str] = field(default_factory=list)
    """Descriptions of the misconceptions recorded at this visit (for self-corrections)."""
    held_edge: str | None = None
    """The edge of a natural completion held while the spoken answer may go on
    (``transition_held``, runtime semantics §18), until it is taken or dropped."""
    held_ms: int | None = None
    """When it was held (epoch ms)."""
    examiner_texts: list[str] = field(default_factory=list)
    """What the examiner said at this visit (``examiner_utterance_final`` with purpose
    ``question``, ``follow_up`` or ``prompt``), oldest first, since the candidate last asked for
    a repeat, rephrase or clarification (the repetition-loop window, our 03 chapter §8)."""

    @property
    def finish_pending(self) -> str | None:
        """commandId of a finish awaiting the candidate's confirmation."""
        return self.pending_command_id if self.pending_command == "finish" else None


@dataclass
class RuntimeState:
    """Everything the controller decides from (see the module docstring)."""

    session_id: str
    events_applied: int = 0
    last_seq: int = 0
    last_event_ms: int | None = None
    exam_state: ExamState = ExamState.SCHEDULED
    opened_ms: int | None = None
    started_ms: int | None = None
    exam_clock: StopWatch | None = None
    pause_reason: str | None = None
    halfway_warned: bool = False
    wrap_up_warned: bool = False
    node: NodeVisit | None = None
    last_node_id: str | None = None
    nodes_visited: list[str] = field(default_factory=list)
    probe_counts: list[int] = field(default_factory=list)
    """Follow-ups used per finished visit of a node that allows follow-ups (metrics)."""
    total_follow_ups: int = 0
    transitions: int = 0
    turns: dict[str, Turn] = field(default_factory=dict)
    turn_order: list[str] = field(default_factory=list)
    answered_upto: int = 0
    """Index in ``turn_order`` up to which the examiner has spoken after the turns."""
    distrusted_turns: set[str] = field(default_factory=set)
    candidate_turns: int = 0
    examiner_turns: int = 0
    examiner_started_ms: int | None = None
    examiner_ended_ms: int | None = None
    latency_total_ms: int = 0
    latency_count: int = 0
    monologue_ms: int = 0
    longest_monologue_ms: int = 0
    ledger: EvidenceLedger = field(default_factory=EvidenceLedger)
    misconceptions: int = 0
    hesitations: int = 0
    self_corrections: int = 0
    episodes: dict[str, Episode] = field(default_factory=dict)
    recoveries_started: int = 0
    commands_seen: set[str] = field(default_factory=set)
    proctor_commands: set[str] = field(default_factory=set)
    """Correlation ids of the ``proctor_action`` events: a proctor command carried out once
    is not carried out again when it is delivered twice."""
    command_turns: set[str] = field(default_factory=set)
    """Candidate turns a detected (LLM/classifier) command was dispatched for."""
    instructions: dict[str, Instruction] = field(default_factory=dict)
    guardrails: int = 0
    system_errors: int = 0
    completed: bool = False
    completion_reason: str | None = None
    input_mode: str = "voice"
    """``text`` or ``voice`` (from ``bot_ready``)."""
    activity: dict[str, int] = field(default_factory=dict)
    """What the candidate is doing now (``composing``/``speaking``) → since when (epoch ms)."""
    last_activity_ms: int | None = None
    """When the candidate last stopped composing or speaking (epoch ms)."""
    offline: dict[str, int] = field(default_factory=dict)
    """Candidate connections that are down (``exam_room``/``webrtc``/``livekit``) → since."""
    silence_held_node: str | None = None
    """``node:visit`` whose silence escalation was held (a skip the node forbids, or the
    candidate active): no further silence prompts there until the candidate acts."""
    materials: list[AttachedMaterial] = field(default_factory=list)
    """The candidate's materials (``material_attached``), in attachment order."""
    draws: dict[str, Draw] = field(default_factory=dict)
    """Grounded node id -> its passage draw (``passage_drawn``; never redone)."""

    @property
    def candidate_active(self) -> bool:
        """The candidate is composing or speaking right now."""
        return bool(self.activity)

    @property
    def absent_since_ms(self) -> int | None:
        """Since when the candidate has been without a connection (None: connected)."""
        return min(self.offline.values()) if self.offline else None

    @property
    def terminal(self) -> bool:
        """True once ``exam_completed`` was emitted."""
        return self.completed

    @property
    def current_node_id(self) -> str | None:
        return self.node.node_id if self.node else None

    def node_turns(self) -> list[Turn]:
        """The candidate's turns of the current node visit, in order."""
        if self.node is None:
            return []
        return [self.turns[t] for t in self.node.turn_ids]

    def next_turn_id(self) -> str:
        """The id the next ``transcript_final`` gets (``turn-001``, ``turn-002``...)."""
        return f"turn-{len(self.turn_order) + 1:03d}"

    def answer_turns(self) -> list[Turn]:
        """The candidate's turns of this node since the examiner last started speaking."""
        if self.node is None:
            return []
        found: list[Turn] = []
        for turn_id in reversed(self.node.turn_ids):
            turn = self.turns[turn_id]
            if turn.index < self.answered_upto:
                break
            found.append(turn)
        found.reverse()
        return found

    def episode(self, kind: str) -> Episode | None:
        """The open recovery episode of ``kind``, if any."""
        for episode in self.episodes.values():
            if episode.kind == kind:
                return episode
        return None

    def pending_instructions(self, mode: str | None = None) -> list[Instruction]:
        """Instructions issued and not yet delivered or cancelled, oldest first."""
        return [
            i
            for i in self.instructions.values()
            if i.status == "issued" and (mode is None or i.mode == mode)
        ]

    def admin_instruction(self) -> Instruction | None:
        """The immediate instruction the admin node is running (the oldest pending one)."""
        pending = self.pending_instructions("immediate")
        return pending[0] if pending else None
