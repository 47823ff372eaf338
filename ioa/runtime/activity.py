"""What the candidate is doing: composing, speaking, connected (our 03 chapter §6, §11).

The silence clock must follow the candidate, not the examiner's last word: it counts from the
candidate's last activity (the end of the examiner's speech, their last typing or speech, a
silence prompt, whichever is latest), is suspended while they compose or speak, and, after
speech, for the recogniser's latency (a final transcript comes seconds after the voice stops).
It does not run while the candidate is away (``candidate_connection_changed``) or the exam is
paused, and starts again from zero when the part's clock runs again (the time stopped is
nobody's silence: a candidate welcomed back is not told "take your time" at once).

Only changes are recorded (``candidate_activity``): a repeated start is a refresh, a stop
without a start is nothing, so the throttled signals of the exam room cost no events.

:class:`~ioa.runtime.timing.Timing` holds the host's settings that are not package policy
(grace periods); the bot passes them from Django settings, tests pass their own.
"""

from __future__ import annotations

from typing import Final

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.events.payloads import CandidateActivity as ActivityEvent
from ioa.runtime.inputs import CandidateActivity
from ioa.runtime.step import Step
from ioa.runtime.timing import Timing
from ioa.schema import RecoveryHandler, RecoveryScenario

DEFAULT_SILENCE_SEC: Final = 20.0
"""Voice: the silence window when the handler has no ``afterSec``."""
DEFAULT_TEXT_SILENCE_SEC: Final = 90.0
"""Text: the silence window when the handler has no ``textAfterSec`` (typing takes longer
than speaking; at least twice the voice window)."""


def record(step: Step, item: CandidateActivity) -> None:
    """Record a change of the candidate's activity (module docstring)."""
    state = step.state
    if state.completed or state.exam_state not in (ExamState.IN_PROGRESS, ExamState.PAUSED):
        step.result.update({"status": "ignored"})
        return
    active = item.activity in state.activity
    if item.active == active:
        step.result.update({"status": "unchanged"})
        return
    if item.at_ms is not None and item.at_ms < 0:
        item = CandidateActivity(item.activity, item.active, None)
    step.emit(
        ActivityEvent(
            activity=item.activity,
            state="started" if item.active else "stopped",
            nodeId=state.current_node_id,
            atMs=item.at_ms,
        )
    )
    step.result.update({"status": "recorded"})


def silence_window_ms(state_mode: str, handler: RecoveryHandler) -> int:
    """The package's silence window for this input mode."""
    voice = handler.afterSec if handler.afterSec is not None else DEFAULT_SILENCE_SEC
    if state_mode != "text":
        return round(voice * 1000)
    text = handler.textAfterSec
    seconds = text if text is not None else max(DEFAULT_TEXT_SILENCE_SEC, 2 * voice)
    return round(seconds * 1000)


def silence_anchor(step: Step, timing: Timing) -> int | None:
    """When the silence clock started, or None while it does not run (module docstring)."""
    state = step.state
    node = state.node
    if node is None or node.thinking or state.admin_instruction() is not None:
        return None
    if state.candidate_active or state.offline:
        return None
    if state.silence_held_node == f"{node.node_id}:{node.visit}":
        return None
    ended = state.examiner_ended_ms
    if ended is None or ended < node.entered_ms:
        return None
    if node.last_candidate_ms is not None and node.last_candidate_ms >= ended:
        return None
    anchor = ended
    if node.clock.resumed_ms is not None and node.clock.resumed_ms > anchor:
        anchor = node.clock.resumed_ms  # the time paused or away is nobody's silence
    if state.last_activity_ms is not None and state.last_activity_ms > anchor:
        anchor = state.last_activity_ms
        if state.input_mode != "text":
            anchor += timing.recogniser_latency_ms
    episode = state.episode(RecoveryScenario.SILENCE.value)
    return max(anchor, episode.last_attempt_ms) if episode is not None else anchor


def hold_silence(step: Step, why: str) -> None:
    """The silence escalation would skip a part it must not skip: record it for the proctor
    (``guardrail_triggered``, once per visit) and stop prompting until the candidate acts."""
    node = step.state.node
    if node is None:
        return
    step.emit(
        p.GuardrailTriggered(
            guardrailId=f"silence-hold:{node.node_id}:{node.visit}",
            guardrailType="blocked_action",
            severity="warning",
            description=f"silence escalation held: {why}; the proctor decides",
            actionTaken="event_only",
            contextNodeId=node.node_id,
        )
    )
