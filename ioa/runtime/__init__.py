"""The runtime controller (chapter 07 §2-§5, spec-notes §2-§3, our 03 chapter
``docs/spec/runtime-semantics.md``): pure, deterministic, no Django, no Pipecat.

Public API::

    controller = RuntimeController(package, session_id=sid, clock=clock)   # rng optional
    decision = controller.handle(BotReady())       # then CandidateReady(), TranscriptSegment(...),
                                                   # Observation(args), Command(...), Tick(), ...
    decision.events    # chapter 05 envelopes (seq assigned), already applied to the state
    decision.effects   # Speak / EnterNode / EnterAdminNode / ReturnToNode / InjectContext /
                       # PromptLlm / AdjustSpeech / EnterBootNode / EndSession
    decision.result    # the report_observation tool result for the LLM
    controller.next_deadline_ms()                  # when to send the next Tick
    RuntimeController.restore(package, session_id=sid, events=stored, clock=clock)
"""

from ioa.runtime.clock import Clock, ManualClock, SystemClock, to_datetime, to_ms
from ioa.runtime.controller import Decision, RuntimeController
from ioa.runtime.effects import (
    AdjustSpeech,
    Effect,
    EndSession,
    EnterAdminNode,
    EnterBootNode,
    EnterNode,
    InjectContext,
    PromptLlm,
    ReturnToNode,
    Speak,
)
from ioa.runtime.ids import Rng, SeededRng
from ioa.runtime.inputs import (
    AttachMaterial,
    BotReady,
    BotResumed,
    CandidateActivity,
    CandidateInterrupted,
    CandidateReady,
    Command,
    Fault,
    FaultCleared,
    Observation,
    ProctorAction,
    ProctorInstruction,
    RuntimeInput,
    SpeechUnheard,
    Tick,
    TranscriptCorrection,
    TranscriptSegment,
    TurnFault,
    TurnSettled,
    UtteranceFinished,
    UtterancesDropped,
    UtteranceStarted,
)
from ioa.runtime.plan import ExamPlan, NodePlan
from ioa.runtime.replay import controller_from_events, rebuild_state
from ioa.runtime.state import RuntimeState
from ioa.runtime.timing import Timing

__all__ = [
    "AdjustSpeech",
    "AttachMaterial",
    "BotReady",
    "BotResumed",
    "CandidateActivity",
    "CandidateInterrupted",
    "CandidateReady",
    "Clock",
    "Command",
    "Decision",
    "Effect",
    "EndSession",
    "EnterAdminNode",
    "EnterBootNode",
    "EnterNode",
    "ExamPlan",
    "Fault",
    "FaultCleared",
    "InjectContext",
    "ManualClock",
    "NodePlan",
    "Observation",
    "ProctorAction",
    "ProctorInstruction",
    "PromptLlm",
    "ReturnToNode",
    "Rng",
    "RuntimeController",
    "RuntimeInput",
    "RuntimeState",
    "SeededRng",
    "Speak",
    "SpeechUnheard",
    "SystemClock",
    "Tick",
    "Timing",
    "TranscriptCorrection",
    "TranscriptSegment",
    "TurnFault",
    "TurnSettled",
    "UtteranceFinished",
    "UtteranceStarted",
    "UtterancesDropped",
    "controller_from_events",
    "rebuild_state",
    "to_datetime",
    "to_ms",
]
