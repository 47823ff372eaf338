"""The recognition check (issue #30): when the recogniser was unsure of the candidate's words,
the examiner asks them to say it again and, in a voice exam, the exam room shows what was
heard so that the candidate can confirm it or type what they said
(:mod:`ioa.runtime.corrections` takes their answer).

The check is the ``recognition_check`` event, stored with the re-prompt: the candidate's turns
of the node heard below :data:`CLEAR_CONFIDENCE` (none: speech in which no words were heard).
A text exam has no recognition to check; its re-prompt is the plain one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ioa.events import payloads as p
from ioa.runtime.effects import Purpose
from ioa.runtime.state import Turn
from ioa.runtime.step import Step

CLEAR_CONFIDENCE: Final = 0.6
"""POL-R005: below this STT confidence a turn calls for the stt_low_confidence handler."""


def unclear_turns(turns: Sequence[Turn]) -> list[str]:
    """The ids of the candidate's ``turns`` heard below :data:`CLEAR_CONFIDENCE`."""
    return [
        t.turn_id for t in turns if t.speaker == "candidate" and t.confidence < CLEAR_CONFIDENCE
    ]


def voiced(step: Step) -> bool:
    """Whether the candidate answers by voice (a recognition to check)."""
    return step.state.input_mode != "text"


def ask_to_check(step: Step, turn_ids: Sequence[str]) -> None:
    """Record the check of ``turn_ids`` (voice only; nothing without a node)."""
    node = step.state.node
    if node is None or not voiced(step):
        return
    step.emit(p.RecognitionCheck(nodeId=node.node_id, turnIds=list(turn_ids)))


def reprompt(step: Step, turn_ids: Sequence[str], purpose: Purpose = "recovery") -> None:
    """Say the low-confidence re-prompt and, in a voice exam, ask for the check of
    ``turn_ids``."""
    lines = step.plan.texts
    step.say(lines.stt_check if voiced(step) else lines.stt_reprompt, purpose)
    ask_to_check(step, turn_ids)
