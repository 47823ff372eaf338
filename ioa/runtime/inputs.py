"""What the controller reacts to (our 03 chapter §2 "Inputs").

Inputs carry no time: the controller reads its injected clock once per input. Every input is a
frozen dataclass; :data:`RuntimeInput` is their union.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Speaker = Literal["candidate", "examiner"]
InstructionMode = Literal["queued", "immediate"]
ProctorActionName = Literal[
    "pause",
    "resume",
    "extend_time",
    "terminate",
    "skip_node",
    "flag_irregularity",
    "authorise_start",
]
IrregularityCategory = Literal["environment", "candidate", "staff", "technical"]
TimeScope = Literal["exam", "node"]
FaultSeverity = Literal["transient", "fatal"]


InputMode = Literal["voice", "text"]
ActivityKind = Literal["composing", "speaking"]


@dataclass(frozen=True, slots=True)
class BotReady:
    """The bot loaded the package and joined the room: the session enters ``scaffolding`` and
    the bot sits in its silent boot node (context RESET). ``input_mode`` (recorded in
    ``bot_ready``) is how the candidate answers: text mode has the longer silence window."""

    input_mode: InputMode = "voice"


@dataclass(frozen=True, slots=True)
class CandidateActivity:
    """The candidate started (``active``) or stopped composing (the exam room's typing
    signal) or speaking (voice activity detection). Only a change of state is recorded
    (``candidate_activity``); a repeated start is a refresh and records nothing. ``at_ms``
    (voice): when the audio showed it, ms since the session opened."""

    activity: ActivityKind
    active: bool
    at_ms: int | None = None


@dataclass(frozen=True, slots=True)
class CandidateReady:
    """Consent, briefing, identity and audio check are done: the exam starts at the initial
    node (``scaffolding → ready → in_progress``). With ``await_authorisation`` (the sitting
    wants the proctor to start each exam) the session stops at ``ready`` until the proctor's
    ``authorise_start``."""

    await_authorisation: bool = False


@dataclass(frozen=True, slots=True)
class TranscriptSegment:
    """A final STT segment (the bot's transcript hook, ADP-013).

    ``start_ms``/``end_ms`` are milliseconds since the session opened (``bot_ready``); when
    absent, the segment ends now and its start is estimated from its length. ``language`` is
    what the recogniser reported; absent, the exam's language.
    """

    speaker: Speaker
    text: str
    confidence: float
    start_ms: int | None = None
    end_ms: int | None = None
    language: str | None = None
    awaiting_examiner: bool = False
    """The examiner owed the candidate a reply when this segment came (their previous turn was
    complete and not yet answered): the gap since that turn is the examiner's stall, never the
    candidate's hesitation (our chapter 04 §5)."""
    sent_ms: int | None = None
    """When the candidate handed the turn over (ms since the session opened): a typed answer
    stored in the inbox, which may reach the controller much later (a bot resuming after a
    drain, a loaded pipeline). Timers that came due after it do not fire before it (runtime
    semantics §6): the time an answer spent in transit is not the candidate's silence. Absent,
    ``end_ms`` is that instant when known."""


@dataclass(frozen=True, slots=True)
class Observation:
    """One ``report_observation`` call: the arguments exactly as the LLM sent them.

    ``reopenable``: the spoken turn it answers ended on the short reply pause and has not yet
    stayed over (the host's end-of-turn policy, ``ioa.runtime.answer_end``): the candidate may
    still go on, so a natural completion is held, not taken (runtime semantics §18)."""

    args: Mapping[str, Any]
    reopenable: bool = False


@dataclass(frozen=True, slots=True)
class Command:
    """A command envelope (chapter 05 §5): exam-room buttons, or the proctor."""

    command_id: str
    type: str
    source: str = "candidate"
    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Tick:
    """Only time passes: due timers fire (budgets, beats, silence)."""


@dataclass(frozen=True, slots=True)
class ProctorInstruction:
    """An admin instruction for the examiner (beats chapter): ``queued`` joins the node's task
    messages and the live context; ``immediate`` is spoken through the admin node now."""

    mode: InstructionMode
    text: str
    proctor_id: str = "proctor"
    instruction_id: str | None = None
    reason: str | None = None
    """Why the proctor gave it (proctor, store and marking only; never the candidate)."""


@dataclass(frozen=True, slots=True)
class ProctorAction:
    """A proctor's control action: pause, resume, extend time, terminate, skip the current
    node, flag an irregularity, authorise the start. Each one carried out is a
    ``proctor_action`` event; one whose ``command_id`` was already carried out is a no-op."""

    action: ProctorActionName
    proctor_id: str = "proctor"
    seconds: float | None = None
    """``extend_time``: how many seconds to add."""
    scope: TimeScope = "exam"
    """``extend_time``: the whole exam (default) or the current node."""
    reason: str | None = None
    """The proctor's words (never shown to the candidate)."""
    command_id: str | None = None
    """The command envelope the action came in (its id becomes the correlation id)."""
    category: IrregularityCategory | None = None
    """``flag_irregularity``: what kind of irregularity (optional for it; refused with any
    other action)."""


@dataclass(frozen=True, slots=True)
class Fault:
    """The bot or the transport failed (STT, TTS, LLM, network)."""

    component: str
    severity: FaultSeverity
    detail: str = ""


@dataclass(frozen=True, slots=True)
class FaultCleared:
    """The failure reported by :class:`Fault` is over."""

    component: str = "network"


@dataclass(frozen=True, slots=True)
class UtteranceStarted:
    """The bot started speaking a :class:`ioa.runtime.effects.Speak` effect: its first audio
    played (voice) or its text went out at ``at_ms`` (ms since the session opened; ``None``
    when unknown). It is recorded as ``examiner_utterance_started``'s ``atMs``."""

    utterance_id: str
    at_ms: int | None = None


@dataclass(frozen=True, slots=True)
class UtteranceFinished:
    """The bot finished (or was interrupted while) speaking a ``Speak`` effect.

    A barge-in that cut the audio short gives ``interrupted_at_ms`` (when the audio stopped, ms
    since the session opened, ``None`` when unknown) and ``spoken_text``, the prefix of the
    text played until then; both stay ``None`` for an utterance heard to the end."""

    utterance_id: str
    duration_ms: int = 0
    interrupted: bool = False
    interrupted_at_ms: int | None = None
    spoken_text: str | None = None


@dataclass(frozen=True, slots=True)
class UtterancesDropped:
    """``Speak`` effects the bot dropped before any of their audio played (a barge-in clears
    what the examiner had queued behind the utterance it cut). Never heard, so never recorded:
    the runtime forgets them, and a question dropped so has not been asked (§16)."""

    utterance_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BotResumed:
    """A bot took the session over without a fault (a draining worker handed it over, or the
    candidate's new connection moved it) and rebuilt it from the log. What the previous bot had
    queued but not begun to say was lost with it: when nothing the examiner said at the current
    node was heard, the question is asked now (runtime semantics §17)."""


@dataclass(frozen=True, slots=True)
class TurnSettled:
    """The candidate's spoken turn that ended on the short reply pause stayed over: the
    finished pause passed with no more speech (runtime semantics §18). A completion held for
    it is taken now; with nothing held it changes nothing."""


@dataclass(frozen=True, slots=True)
class CandidateInterrupted:
    """The candidate started speaking while the examiner was speaking (voice barge-in).

    ``utterance_id`` is the ``Speak`` effect that was being spoken, when the bot knows it;
    otherwise the latest utterance in flight is meant. Without an utterance in flight the
    input is ignored. With an ``interruption`` handler at the node it is a recovery attempt
    (our 03 chapter §8); without one nothing is recorded."""

    utterance_id: str | None = None


@dataclass(frozen=True, slots=True)
class SpeechUnheard:
    """The candidate spoke (the VAD heard ``duration_ms`` of speech) and the recogniser gave no
    words for it (issue #30): the examiner says it did not catch that, never nothing."""

    duration_ms: int = 0


@dataclass(frozen=True, slots=True)
class TranscriptCorrection:
    """The candidate's answer to a recognition check (issue #30): ``text`` is what they say
    they said, in place of the misheard turns ``turn_ids``, in order (an answer the recogniser
    cut into pieces is corrected whole; none: speech of which no words were heard). The heard
    words unchanged confirm them."""

    text: str
    turn_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TurnFault:
    """The examiner's LLM failed a turn (our chapter 04 §6): no usable reply before the deadline
    or within the turn's request budget. ``code`` names the fault (``llm_timeout``,
    ``llm_unknown_tool``...); ``problems`` lists everything that went wrong in the turn, in
    order. The controller records it and answers the candidate with the current question."""

    code: str
    detail: str = ""
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AttachMaterial:
    """The app hands the runtime a material of the candidate's: its extracted text
    (docs/spec/candidate-materials.md §3). ``material_id`` is an id, unique per session (a
    second hand-over of the same id is ignored); ``kind`` is ``submission`` or ``report``;
    only the first 200,000 characters of ``text`` are read; ``language`` (``en``, ``de``,
    ``es``) adds its cue words, default the exam's language. Recorded as
    ``material_attached``."""

    material_id: str
    kind: Literal["submission", "report"]
    text: str
    language: str | None = None


RuntimeInput = (
    BotReady
    | CandidateActivity
    | CandidateReady
    | TranscriptSegment
    | Observation
    | Command
    | Tick
    | ProctorInstruction
    | ProctorAction
    | Fault
    | FaultCleared
    | UtteranceStarted
    | UtteranceFinished
    | UtterancesDropped
    | BotResumed
    | TurnSettled
    | CandidateInterrupted
    | SpeechUnheard
    | TranscriptCorrection
    | TurnFault
    | AttachMaterial
)
"""Everything :meth:`ioa.runtime.RuntimeController.handle` accepts."""
