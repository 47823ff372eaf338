"""What the controller asks the bot to do (our 03 chapter §2 "Outputs").

The bot applies effects in order. A ``Speak`` text has already passed the output validation
pipeline: the bot sends it to TTS verbatim (and reports ``UtteranceStarted`` /
``UtteranceFinished`` with its ``utterance_id``). No other text ever reaches TTS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Purpose = Literal["question", "follow_up", "prompt", "bridge", "recovery", "closing"]
ContextRole = Literal["system", "developer", "user"]


@dataclass(frozen=True, slots=True)
class Speak:
    """Say ``text`` (validated, at most 500 characters) now."""

    utterance_id: str
    node_id: str
    text: str
    purpose: Purpose


@dataclass(frozen=True, slots=True)
class EnterNode:
    """Switch the flow to ``node_id`` (Pipecat ``set_node_from_config``) with its context
    strategy. ``task_additions`` are appended to the node's task messages (pending queued
    proctor instructions). The opening question, if any, follows as a ``Speak``; when the node
    has none, a ``PromptLlm`` follows instead. ``starts_exam``: the exam's first node, entered
    at Start: its context starts empty and nothing the candidate said before is an answer
    (issue #30)."""

    node_id: str
    context_strategy: str
    summary_prompt: str | None = None
    task_additions: tuple[str, ...] = ()
    is_end: bool = False
    starts_exam: bool = False


@dataclass(frozen=True, slots=True)
class EnterBootNode:
    """Sit in the silent boot node (context RESET) until the candidate is ready."""


@dataclass(frozen=True, slots=True)
class EnterAdminNode:
    """Run one immediate proctor instruction through the admin node (context APPEND): the
    LLM's next ``report_observation`` is that run."""

    instruction_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ReturnToNode:
    """Leave the admin node and go back to ``node_id`` (context APPEND)."""

    node_id: str


@dataclass(frozen=True, slots=True)
class InjectContext:
    """Append a message to the live LLM context; ``persistent`` also adds it to the current
    node's task messages until it is consumed."""

    text: str
    role: ContextRole = "system"
    persistent: bool = False


@dataclass(frozen=True, slots=True)
class PromptLlm:
    """Inject ``instruction`` and run the LLM now; its ``report_observation`` follows."""

    instruction: str


@dataclass(frozen=True, slots=True)
class AdjustSpeech:
    """Change TTS delivery: ``rate`` (``slower``), ``volume`` (``up``/``down``)."""

    setting: Literal["rate", "volume"]
    value: str


@dataclass(frozen=True, slots=True)
class EndSession:
    """The exam is over: after the closing, end the pipeline."""

    reason: str


Effect = (
    Speak
    | EnterNode
    | EnterBootNode
    | EnterAdminNode
    | ReturnToNode
    | InjectContext
    | PromptLlm
    | AdjustSpeech
    | EndSession
)
