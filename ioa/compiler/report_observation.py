"""The ``report_observation`` function schema (chapter 07 §3): the LLM's only tool.

The LLM observes and reports; the runtime controller decides (A-3). The schema is part of
what ``adapterVersion`` versions (§12): change it here and bump
:data:`ioa.compiler.ADAPTER_VERSION`.
"""

from __future__ import annotations

from typing import Final

from ioa.compiler.types import FunctionSchemaSpec, JSONObject
from ioa.schema.enums import ALWAYS_ALLOWED_COMMANDS as ALWAYS_ALLOWED
from ioa.schema.enums import CandidateCommandType, SignalKind

REPORT_OBSERVATION: Final = "report_observation"

SIGNAL_KINDS: Final[tuple[str, ...]] = tuple(kind.value for kind in SignalKind)
"""The eight ``signalKind`` values of the event protocol (EVD-008)."""

CANONICAL_LLM_COMMANDS: Final[tuple[str, ...]] = (
    "repeat",
    "clarification",
    "request_rephrase",
    "slow_down",
    "pause",
    "thinking_aloud",
    "help",
    "skip",
    "revise_earlier_answer",
    "finish",
)
"""The canonical commands the LLM may report (spec-notes §3, LLM column)."""

COMMAND_ALIASES: Final[dict[str, str]] = {
    "clarify": "clarification",
    "rephrase": "request_rephrase",
    "thinking_time": "thinking_aloud",
    "revise": "revise_earlier_answer",
}
"""ADP-005 spellings accepted from the LLM, mapped to the canonical command."""

COMMAND_DETECTED_VALUES: Final[tuple[str, ...]] = (
    "repeat",
    "clarification",
    "clarify",
    "request_rephrase",
    "rephrase",
    "slow_down",
    "pause",
    "thinking_aloud",
    "thinking_time",
    "help",
    "skip",
    "revise_earlier_answer",
    "revise",
    "finish",
)
"""The ``commandDetected`` enum: every canonical command followed by its ADP-005 alias."""

ALWAYS_ALLOWED_COMMANDS: Final[tuple[str, ...]] = tuple(
    command.value for command in CandidateCommandType if command in ALWAYS_ALLOWED
)
"""Welfare and safety commands no node policy can refuse (spec-notes §3), in enum order."""

ANSWER_QUALITIES: Final[tuple[str, ...]] = (
    "substantive",
    "partial",
    "off_topic",
    "silence",
    "unclear",
)
FOLLOW_UP_TYPES: Final[tuple[str, ...]] = (
    "probe",
    "redirect",
    "scaffold",
    "challenge",
    "nudge",
    "confirm",
    "extend",
    "concede",
)
RAPPORT_MOVES: Final[tuple[str, ...]] = ("encouragement", "acknowledgement", "reassurance", "none")
DIALOGUE_MOVES: Final[tuple[str, ...]] = ("paraphrase", "transition", "none")

EXCERPT_MAX_CHARS: Final = 200
SPOKEN_TEXT_MAX_CHARS: Final = 500

REQUIRED_ARGUMENTS: Final[tuple[str, ...]] = (
    "signals",
    "answerQuality",
    "needsFollowUp",
    "evidenceSufficient",
    "anxietyDetected",
    "spokenText",
)
SIGNAL_REQUIRED_FIELDS: Final[tuple[str, ...]] = (
    "signalType",
    "signalKind",
    "excerpt",
    "confidence",
)


def _signal_item() -> JSONObject:
    return {
        "type": "object",
        "properties": {
            "signalType": {
                "type": "string",
                "description": (
                    "The id of the evidence target you observed, exactly as listed under "
                    "EVIDENCE TO LISTEN FOR in your instructions."
                ),
            },
            "signalKind": {
                "type": "string",
                "enum": list(SIGNAL_KINDS),
                "description": "What kind of evidence the response gives for this target.",
            },
            "rubricLevel": {
                "type": "string",
                "description": "Optional: the level of the demonstration, if you can tell.",
            },
            "excerpt": {
                "type": "string",
                "maxLength": EXCERPT_MAX_CHARS,
                "description": (
                    f"A short verbatim quote of the candidate (at most {EXCERPT_MAX_CHARS} "
                    "characters)."
                ),
            },
            "confidence": {
                "type": "number",
                "minimum": 0.0,
                "maximum": 1.0,
                "description": "How confident you are that the candidate showed this (0.0-1.0).",
            },
            "scaffoldingIntensity": {
                "type": "integer",
                "minimum": 0,
                "maximum": 3,
                "description": "How much scaffolding preceded this signal (0 none - 3 a lot).",
            },
            "scaffoldingEffective": {
                "type": "boolean",
                "description": "Whether the candidate improved after the scaffolding.",
            },
        },
        "required": list(SIGNAL_REQUIRED_FIELDS),
    }


def _misconception_item() -> JSONObject:
    return {
        "type": "object",
        "properties": {
            "concept": {"type": "string", "description": "What the candidate misunderstood."},
            "misconception": {"type": "string", "description": "The specific error."},
            "correction": {
                "type": "string",
                "description": "What correct understanding looks like (never say it aloud).",
            },
        },
        "required": ["concept", "misconception", "correction"],
    }


def report_observation_schema() -> FunctionSchemaSpec:
    """The ``report_observation`` tool as offered to the LLM (a fresh copy on every call)."""
    properties: JSONObject = {**_answer_properties(), **_conduct_properties()}
    return {
        "name": REPORT_OBSERVATION,
        "description": (
            "Report your observations about the candidate's latest response: the evidence "
            "signals you detected, whether the candidate issued a command, your view of the "
            "answer, and what you want to say next. Call this after every candidate response. "
            "It never moves the examination on by itself: the examination runtime decides."
        ),
        "properties": properties,
        "required": list(REQUIRED_ARGUMENTS),
    }


def _answer_properties() -> JSONObject:
    """What the LLM reports about the answer: evidence, a command, quality, follow-up, and
    whether the part has enough evidence."""
    return {
        "signals": {
            "type": "array",
            "description": (
                "Evidence signals observed in the candidate's latest response. "
                "Empty when there is none (for example when the candidate issued a command)."
            ),
            "items": _signal_item(),
        },
        "commandDetected": {
            "type": "string",
            "enum": list(COMMAND_DETECTED_VALUES),
            "description": "Set only if the candidate issued a command instead of answering.",
        },
        "answerQuality": {
            "type": "string",
            "enum": list(ANSWER_QUALITIES),
            "description": "Your view of the latest response.",
        },
        "needsFollowUp": {
            "type": "boolean",
            "description": "Whether you want to ask a follow-up question.",
        },
        "followUpType": {
            "type": "string",
            "enum": list(FOLLOW_UP_TYPES),
            "description": "The kind of follow-up you want to ask, if any.",
        },
        "evidenceSufficient": {
            "type": "boolean",
            "description": "Whether you believe enough evidence has been gathered for this part.",
        },
    }


def _conduct_properties() -> JSONObject:
    """What the LLM reports about the candidate's state and its own next turn."""
    return {
        "anxietyDetected": {
            "type": "boolean",
            "description": "Whether the candidate seems anxious or stressed.",
        },
        "distressDetected": {
            "type": "boolean",
            "description": "Beyond anxiety: crying, an aggressive tone, or refusing to continue.",
        },
        "rapportMove": {
            "type": "string",
            "enum": list(RAPPORT_MOVES),
            "description": "An affective move in your next turn (not counted as a follow-up).",
        },
        "dialogueMove": {
            "type": "string",
            "enum": list(DIALOGUE_MOVES),
            "description": "A structural move in your next turn.",
        },
        "misconceptions": {
            "type": "array",
            "description": (
                "Specific misconceptions: incorrect understanding, not merely incomplete."
            ),
            "items": _misconception_item(),
        },
        "spokenText": {
            "type": "string",
            "description": (
                "What you want to say to the candidate next (at most "
                f"{SPOKEN_TEXT_MAX_CHARS} characters). It is checked before it is spoken."
            ),
        },
    }
