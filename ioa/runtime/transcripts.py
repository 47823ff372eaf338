"""Final transcript segments (chapter 07 §7: the runtime's transcript webhook).

Each segment of the current node becomes a ``transcript_final`` (source ``bot``), then:

* a hesitation is detected from the timing (``hesitation_detected``): a candidate turn that
  starts at least :data:`AFTER_QUESTION_MS` after the examiner finished (``after_question``),
  or at least :data:`MID_RESPONSE_MS` after the candidate's previous segment with no examiner
  speech in between (``mid_response``), unless the examiner owed a reply then (the segment's
  ``awaiting_examiner``: the gap is the examiner's stall, not the candidate's hesitation);
* open recoveries the candidate's speech ends are resolved (silence; an interruption once the
  examiner has been heard to the end since, :mod:`ioa.runtime.interruption`; a network issue or
  low STT confidence once a segment is clear again, confidence >= :data:`CLEAR_CONFIDENCE`);
* the safety-net classifier looks for a prompt-injection attempt (recorded, the LLM is warned,
  the turn is distrusted) and, while the exam is paused, for the candidate saying they are
  ready to resume (after a recognition pause, any words resume).

Segments before the exam starts (scaffolding), whose speech was over before it started (audio
from before Start whose transcript came late), or after it ends are not recorded.
"""

from __future__ import annotations

from typing import Final

from ioa.errors import InvalidInputError
from ioa.events import EventSource, ExamState
from ioa.events import payloads as p
from ioa.output_filters.text import words
from ioa.runtime import recovery, texts
from ioa.runtime.agent_boundary import candidate_command
from ioa.runtime.answer_end import asks_for_time
from ioa.runtime.classifier import detect_injection
from ioa.runtime.command_handlers import dispatch
from ioa.runtime.effects import InjectContext
from ioa.runtime.inputs import SpeechUnheard, TranscriptSegment
from ioa.runtime.interruption import resolve_if_heard
from ioa.runtime.recognition import CLEAR_CONFIDENCE, ask_to_check, reprompt
from ioa.runtime.step import Step, guardrail_payload
from ioa.schema import CandidateCommandType, RecoveryScenario

AFTER_QUESTION_MS: Final = 5000
MID_RESPONSE_MS: Final = 3000
MS_PER_WORD: Final = 400
"""Speaking-time estimate (150 words a minute) when a segment has no start time."""


def _previous_candidate_end(step: Step) -> int | None:
    opened = step.state.opened_ms or 0
    for turn_id in reversed(step.state.turn_order):
        turn = step.state.turns[turn_id]
        if turn.speaker == "candidate":
            return opened + turn.end_ms
    return None


def handle_transcript(step: Step, segment: TranscriptSegment) -> None:
    """Record one final segment and react to it (module docstring)."""
    state = step.state
    if not 0.0 <= segment.confidence <= 1.0:
        raise InvalidInputError(f"STT confidence {segment.confidence!r} is not in [0, 1]")
    if segment.speaker not in ("candidate", "examiner"):
        raise InvalidInputError(f"unknown speaker {segment.speaker!r}")
    node = state.node
    text = segment.text.strip()
    if state.completed or node is None or not text:
        step.result.update({"status": "ignored"})
        return
    opened = state.opened_ms if state.opened_ms is not None else step.now
    previous_end = _previous_candidate_end(step)
    examiner_end = state.examiner_ended_ms
    if _before_start(step, segment, opened):
        step.result.update({"status": "ignored", "reason": "speech from before the start"})
        return
    start_abs, end_abs = _span(step, segment, text, node.entered_ms, opened, previous_end)
    turn_id = state.next_turn_id()
    step.emit(
        p.TranscriptFinal(
            turnId=turn_id,
            speaker=segment.speaker,
            text=text,
            startTimeMs=max(0, start_abs - opened),
            endTimeMs=max(0, end_abs - opened),
            nodeId=node.node_id,
            confidence=segment.confidence,
            language=segment.language or step.plan.texts.language,
        ),
        source=EventSource.BOT,
    )
    step.result.update({"status": "recorded", "turnId": turn_id})
    if segment.speaker != "candidate":
        return
    _hesitation(
        step, turn_id, start_abs, examiner_end, previous_end, stalled=segment.awaiting_examiner
    )
    _resolve_by_speech(step, segment.confidence)
    if not flag_injection(step, turn_id, text, node.node_id):
        _resume_by_voice(step, turn_id, text)
        # Read the words now, while the examiner's model thinks, so that the observation
        # answering this turn finds them read (both readings are cached).
        candidate_command(text, step.plan.texts.language)
        asks_for_time(text, step.plan.texts.language)


def _before_start(step: Step, segment: TranscriptSegment, opened: int) -> bool:
    """The segment's speech was over before the exam started (audio from before Start whose
    transcript came late): never an answer (issue #30). Speech that runs across the start
    counts: the candidate was answering as the exam began."""
    started = step.state.started_ms
    return segment.end_ms is not None and started is not None and opened + segment.end_ms < started


def handle_unheard(step: Step, item: SpeechUnheard) -> None:
    """The candidate spoke and the recogniser heard no words (issue #30): while the exam is in
    progress the examiner says it did not catch that. It is the ``stt_low_confidence``
    scenario at confidence zero: an attempt of the node's handler (its re-prompt; its
    escalation, a recognition pause, after ``maxAttempts``), or without a handler the re-prompt
    alone. A paused exam is not resumed by it (nothing was heard to say so)."""
    state = step.state
    if state.node is None or state.exam_state is not ExamState.IN_PROGRESS:
        step.result.update({"status": "ignored"})
        return
    outcome = recovery.attempt(
        step,
        RecoveryScenario.STT_LOW_CONFIDENCE,
        f"{item.duration_ms} ms of speech in which the recogniser heard no words",
    )
    if isinstance(outcome, recovery.Escalated):
        ask_to_check(step, [])
        step.result.update({"status": "recovery", "recovery": "stt_low_confidence"})
        return
    reprompt(step, [], "recovery" if outcome is not None else "prompt")
    step.result.update({"status": "recovery", "recovery": "stt_low_confidence"})


def _span(
    step: Step,
    segment: TranscriptSegment,
    text: str,
    entered_ms: int,
    opened: int,
    previous_end: int | None,
) -> tuple[int, int]:
    """(start, end) of the segment in epoch ms. Without a start time it is estimated from the
    word count, never before the node, the examiner's last words or the candidate's previous
    segment; the start is kept between the exam's opening and the end."""
    examiner_end = step.state.examiner_ended_ms
    boundary = max(
        entered_ms,
        examiner_end if examiner_end is not None else 0,
        previous_end if previous_end is not None else 0,
    )
    end_abs = opened + segment.end_ms if segment.end_ms is not None else step.now
    if segment.start_ms is not None:
        start_abs = opened + segment.start_ms
    else:
        start_abs = max(boundary, end_abs - MS_PER_WORD * max(1, len(words(text))))
    return min(max(start_abs, opened), end_abs), end_abs


def _resolve_by_speech(step: Step, confidence: float) -> None:
    """The open recoveries the candidate's speech ends (module docstring)."""
    recovery.resolve(step, RecoveryScenario.SILENCE)
    resolve_if_heard(step)
    if confidence >= CLEAR_CONFIDENCE:
        recovery.resolve(step, RecoveryScenario.NETWORK_ISSUE)
        recovery.resolve(step, RecoveryScenario.STT_LOW_CONFIDENCE, "re_prompted")


def flag_injection(step: Step, turn_id: str, text: str, node_id: str) -> bool:
    """A prompt-injection attempt is recorded and the LLM warned; True when there was one."""
    phrase = detect_injection(text)
    if phrase is None:
        return False
    step.emit(
        guardrail_payload(
            guardrail_id=f"prompt-injection:{turn_id}",
            guardrail_type="blocked_action",
            severity="warning",
            description=(
                f"prompt-injection attempt in candidate turn {turn_id} (matched '{phrase}'): "
                "the turn gives no evidence, no completion and no command"
            ),
            action="event_only",
            node_id=node_id,
        )
    )
    step.effect(InjectContext(texts.INJECTION_WARNING))
    return True


def _resume_by_voice(step: Step, turn_id: str, text: str) -> None:
    """While paused, the candidate saying they are ready resumes (a classifier command); a
    recognition pause (:data:`ioa.runtime.recovery.RECOGNITION_PAUSE`) is ended by any words
    at all: the recogniser that could not hear the answer cannot be relied on to hear "I'm
    ready" either, and the candidate was told to just start speaking."""
    state = step.state
    if state.exam_state is not ExamState.PAUSED:
        return
    spoke_again = state.pause_reason == recovery.RECOGNITION_PAUSE
    if spoke_again or (
        candidate_command(text, step.plan.texts.language) is CandidateCommandType.RESUME
    ):
        resume_for(step, turn_id, f"classifier-{turn_id}-resume")


def resume_for(step: Step, turn_id: str, command_id: str) -> None:
    """Resume because of the candidate's turn ``turn_id`` (a classifier resume command)."""
    dispatch(
        step,
        command_id=command_id,
        command=CandidateCommandType.RESUME,
        spelled="resume",
        origin="classifier",
        turn_id=turn_id,
    )


def _hesitation(
    step: Step,
    turn_id: str,
    start_abs: int,
    examiner_end: int | None,
    previous_end: int | None,
    *,
    stalled: bool = False,
) -> None:
    """A mid-response gap while the examiner owed a reply (``stalled``) is the examiner's."""
    node = step.state.node
    if node is None:
        return
    after_examiner = examiner_end is not None and (
        previous_end is None or examiner_end >= previous_end
    )
    if after_examiner and examiner_end is not None:
        gap = start_abs - examiner_end
        context = "after_question"
        threshold = AFTER_QUESTION_MS
    elif previous_end is not None and not stalled:
        gap = start_abs - previous_end
        context = "mid_response"
        threshold = MID_RESPONSE_MS
    else:
        return
    if gap >= threshold:
        step.emit(
            p.HesitationDetected(
                nodeId=node.node_id,
                turnId=turn_id,
                durationMs=gap,
                context="after_question" if context == "after_question" else "mid_response",
                followedByResponse=True,
            )
        )
