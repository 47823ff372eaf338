"""The candidate's answer to a recognition check (issue #30): what they say they said.

A :class:`~ioa.runtime.inputs.TranscriptCorrection` names the misheard turns (the pieces the
recogniser cut one answer into, in order; or none: speech in which no words were heard) and
the candidate's words. The controller:

1. refuses what cannot be a correction (:class:`~ioa.errors.InvalidInputError` naming why),
   whole: no words (control characters are dropped), a turn named twice, an unknown turn, a
   turn that is not the candidate's, not of the current node or already corrected;
2. stores the candidate's words as one new candidate turn (``transcript_final``, confidence 1:
   the candidate's own act is exact), then one ``transcript_corrected`` per misheard turn
   linking it to that turn (``how`` ``confirmed`` when the words are the heard ones, all pieces
   together, else ``typed``; ``originalText`` keeps what was heard of that piece; without a
   named turn one link with neither). A misheard turn is never rewritten; it stops counting
   as a turn;
3. closes the low-confidence episode, flags a prompt-injection attempt like any answer, and
   ends a recognition pause (the candidate is back: their correction says so);
4. gives the words to the examiner as the candidate's message and, while the exam is in
   progress, runs it on them (its ``report_observation`` follows, with the correction turn as
   the answer). Paused otherwise (a proctor's pause): the words wait in the context.

A correction that arrives when no exam is in progress is ignored (``status`` ``ignored``).
"""

from __future__ import annotations

from typing import Final, Literal

from ioa.errors import InvalidInputError
from ioa.events import EventSource, ExamState
from ioa.events import payloads as p
from ioa.output_filters.text import words
from ioa.runtime import recovery, texts
from ioa.runtime.effects import InjectContext, PromptLlm
from ioa.runtime.inputs import TranscriptCorrection
from ioa.runtime.state import Turn
from ioa.runtime.step import Step
from ioa.runtime.transcripts import flag_injection, resume_for
from ioa.schema import RecoveryScenario

MAX_CORRECTION_CHARS: Final = 4000
"""The longest correction kept (the exam room's limit for a typed answer)."""
_OPEN: Final = (ExamState.IN_PROGRESS, ExamState.PAUSED)


def handle_correction(step: Step, item: TranscriptCorrection) -> None:
    """Take the candidate's correction (module docstring)."""
    state = step.state
    node = state.node
    if state.completed or node is None or state.exam_state not in _OPEN:
        step.result.update({"status": "ignored", "reason": "no exam in progress"})
        return
    text = _printable(item.text)
    if not words(text):
        raise InvalidInputError("a correction needs the candidate's words")
    originals = _misheard(step, item.turn_ids)
    heard = " ".join(turn.text for turn in originals)
    how: Literal["typed", "confirmed"] = (
        "confirmed" if originals and _same(heard, text) else "typed"
    )
    turn_id = state.next_turn_id()
    _record(step, turn_id, text, originals, how)
    recovery.resolve(step, RecoveryScenario.STT_LOW_CONFIDENCE, "re_prompted")
    flag_injection(step, turn_id, text, node.node_id)
    if state.exam_state is ExamState.PAUSED and state.pause_reason == recovery.RECOGNITION_PAUSE:
        resume_for(step, turn_id, f"correction-{turn_id}-resume")
    step.effect(InjectContext(texts.CORRECTION_NOTE, role="developer"))
    step.effect(InjectContext(text, role="user"))
    if state.exam_state is ExamState.IN_PROGRESS:
        step.effect(PromptLlm(texts.CORRECTION_INSTRUCTION))
    step.result.update({"status": "corrected", "turnId": turn_id, "how": how})


def _printable(text: str) -> str:
    """The words as stored: control characters (a NUL from a hostile client) dropped, line
    breaks and tabs kept, trimmed, at most :data:`MAX_CORRECTION_CHARS`."""
    kept = "".join(ch for ch in text if ch >= " " or ch in "\n\t")
    return kept.strip()[:MAX_CORRECTION_CHARS]


def _misheard(step: Step, turn_ids: tuple[str, ...]) -> list[Turn]:
    """The turns a correction replaces, in order; refuses it whole if one is not one."""
    if len(set(turn_ids)) != len(turn_ids):
        raise InvalidInputError("a turn is named twice in one correction")
    return [_one_misheard(step, turn_id) for turn_id in turn_ids]


def _one_misheard(step: Step, turn_id: str) -> Turn:
    state = step.state
    turn = state.turns.get(turn_id)
    if turn is None:
        raise InvalidInputError(f"there is no turn {turn_id!r} to correct")
    if turn.speaker != "candidate":
        raise InvalidInputError(f"{turn_id} is the examiner's, not the candidate's")
    node = state.node
    if node is None or turn_id not in node.turn_ids:
        raise InvalidInputError(f"{turn_id} is not from the current question")
    if turn.corrected_by is not None:
        raise InvalidInputError(f"{turn_id} was already corrected by {turn.corrected_by}")
    return turn


def _same(heard: str, said: str) -> bool:
    """The candidate's words are the heard ones (case, spacing and punctuation aside)."""
    return [w.lower() for w in words(heard)] == [w.lower() for w in words(said)]


def _record(
    step: Step,
    turn_id: str,
    text: str,
    originals: list[Turn],
    how: Literal["typed", "confirmed"],
) -> None:
    """The correction turn, then a link to each turn it supersedes (one without a turn when
    none is named)."""
    state = step.state
    node_id = state.node.node_id if state.node is not None else "none"
    at = max(0, step.now - (state.opened_ms if state.opened_ms is not None else step.now))
    step.emit(
        p.TranscriptFinal(
            turnId=turn_id,
            speaker="candidate",
            text=text,
            startTimeMs=at,
            endTimeMs=at,
            nodeId=node_id,
            confidence=1.0,
            language=step.plan.texts.language,
        ),
        source=EventSource.RUNTIME_CONTROLLER,
    )
    links: list[Turn | None] = list(originals) or [None]
    for original in links:
        step.emit(
            p.TranscriptCorrected(
                nodeId=node_id,
                turnId=original.turn_id if original is not None else None,
                correctionTurnId=turn_id,
                how=how,
                originalText=original.text if original is not None else None,
            )
        )
