"""Reading ``report_observation`` arguments (chapter 07 §3) into a typed observation.

The top-level arguments are checked strictly (required fields, types, enums): a malformed call
is answered with a ``system_error`` event and a canned fallback result (§11), never an
exception. Signal items are read leniently (see :mod:`ioa.ledger.proposals`): one bad signal is
rejected on its own, the rest of the observation still counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ioa.compiler.report_observation import (
    ANSWER_QUALITIES,
    COMMAND_DETECTED_VALUES,
    DIALOGUE_MOVES,
    FOLLOW_UP_TYPES,
    RAPPORT_MOVES,
)
from ioa.ledger import SignalProposal

REQUIRED: Final = (
    "signals",
    "answerQuality",
    "needsFollowUp",
    "evidenceSufficient",
    "anxietyDetected",
    "spokenText",
)


@dataclass(frozen=True, slots=True)
class Misconception:
    """One ``misconceptions`` item."""

    concept: str
    misconception: str
    correction: str
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class ParsedObservation:
    """A well-formed ``report_observation`` call."""

    signals: tuple[SignalProposal, ...]
    answer_quality: str
    needs_follow_up: bool
    evidence_sufficient: bool
    anxiety: bool
    spoken_text: str
    command: str | None = None
    follow_up_type: str | None = None
    distress: bool = False
    rapport_move: str | None = None
    dialogue_move: str | None = None
    misconceptions: tuple[Misconception, ...] = ()


class ObservationProblem(Exception):
    """Why the arguments are not a valid observation."""


def _enum(args: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or value not in allowed:
        raise ObservationProblem(f"{key} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _bool(args: Mapping[str, Any], key: str, default: bool | None = None) -> bool:
    value = args.get(key, default)
    if not isinstance(value, bool):
        raise ObservationProblem(f"{key} must be true or false, got {value!r}")
    return value


def _misconception(item: object) -> Misconception:
    if not isinstance(item, Mapping):
        raise ObservationProblem("every misconceptions item must be an object")
    fields = []
    for key in ("concept", "misconception", "correction"):
        value = item.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ObservationProblem(f"misconceptions[].{key} must be a non-empty string")
        fields.append(value.strip())
    confidence = item.get("confidence")
    level: float | None = None
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        level = float(confidence) if 0 <= confidence <= 1 else None
    return Misconception(fields[0], fields[1], fields[2], level)


def parse_observation(args: object) -> ParsedObservation:
    """Read the arguments; raises :class:`ObservationProblem` when they are malformed."""
    if not isinstance(args, Mapping):
        raise ObservationProblem("report_observation arguments must be an object")
    missing = [key for key in REQUIRED if key not in args]
    if missing:
        raise ObservationProblem(f"missing required argument(s): {', '.join(missing)}")
    signals = args["signals"]
    if not isinstance(signals, list):
        raise ObservationProblem("signals must be an array")
    spoken = args["spokenText"]
    if not isinstance(spoken, str):
        raise ObservationProblem("spokenText must be a string")
    quality = _enum(args, "answerQuality", ANSWER_QUALITIES)
    if quality is None:
        raise ObservationProblem("answerQuality is required")
    misconceptions = args.get("misconceptions") or []
    if not isinstance(misconceptions, list):
        raise ObservationProblem("misconceptions must be an array")
    return ParsedObservation(
        signals=tuple(SignalProposal.from_args(item) for item in signals),
        answer_quality=quality,
        needs_follow_up=_bool(args, "needsFollowUp"),
        evidence_sufficient=_bool(args, "evidenceSufficient"),
        anxiety=_bool(args, "anxietyDetected"),
        spoken_text=spoken,
        command=_enum(args, "commandDetected", COMMAND_DETECTED_VALUES),
        follow_up_type=_enum(args, "followUpType", FOLLOW_UP_TYPES),
        distress=_bool(args, "distressDetected", False),
        rapport_move=_enum(args, "rapportMove", RAPPORT_MOVES),
        dialogue_move=_enum(args, "dialogueMove", DIALOGUE_MOVES),
        misconceptions=tuple(_misconception(item) for item in misconceptions),
    )
