"""The candidate leaving and coming back (our 03 chapter §11; spec-notes §2).

A lost connection is a ``candidate_connection_changed`` (the exam room's socket, stored by the
web tier; the SmallWebRTC peer or the LiveKit participant, stored by the bot), folded into the
state like any stored event. From then on:

* nothing is said to the empty room and no silence prompt runs (:mod:`ioa.runtime.activity`);
* after :attr:`~ioa.runtime.timing.Timing.connection_grace_ms` still away, the exam pauses
  itself (``exam_state_changed`` → paused, reason ``candidate_disconnected``): both clocks
  stop, nothing is spoken, the proctor sees the pause;
* back (every channel connected again) while paused for it, the exam resumes
  (``candidate_returned``) at the same node: the examiner welcomes them back and asks the
  question again, or responds to the answer it still owed them (they answered, the exam paused
  before the reply: :func:`~ioa.runtime.command_handlers.owed_answer`);
* away :attr:`~ioa.runtime.timing.Timing.absence_limit_ms` in all (paused or not), the exam
  ends ``aborted`` (``candidate_absent``) at the terminated end node, without a closing: never
  a normal completion.

The return is noticed at the controller's next input (:func:`reconcile`, run before the
timers): the host sends a ``Tick`` when it folds in a stored connection event.
"""

from __future__ import annotations

from typing import Final, Literal

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime.command_handlers import resume
from ioa.runtime.moves import stop_exam
from ioa.runtime.step import Step
from ioa.schema import EndType

DISCONNECTED_REASON: Final = "candidate_disconnected"
RETURNED_REASON: Final = "candidate_returned"
AbsenceTimer = Literal["grace", "limit"]


def deadlines(step: Step) -> list[tuple[AbsenceTimer, int]]:
    """The absence timers pending now (also while paused)."""
    state = step.state
    since = state.absent_since_ms
    if since is None or state.completed or state.started_ms is None:
        return []
    found: list[tuple[AbsenceTimer, int]] = []
    if state.exam_state is ExamState.IN_PROGRESS:
        found.append(("grace", since + step.timing.connection_grace_ms))
    if state.exam_state in (ExamState.IN_PROGRESS, ExamState.PAUSED):
        found.append(("limit", since + step.timing.absence_limit_ms))
    return found


def fire(step: Step, timer: AbsenceTimer) -> None:
    """Pause after the grace period; end ``aborted`` after the absence limit."""
    state = step.state
    if timer == "grace":
        step.emit(
            p.ExamStateChanged(
                fromState=ExamState.IN_PROGRESS,
                toState=ExamState.PAUSED,
                reason=DISCONNECTED_REASON,
            )
        )
        return
    away = step.now - (state.absent_since_ms or step.now)
    stop_exam(
        step,
        end_type=EndType.TERMINATED,
        reason="candidate_absent",
        to_state=ExamState.ABORTED,
        description=f"the candidate did not come back ({away // 1000} s without a connection)",
        speak_closing=False,
    )


def reconcile(step: Step) -> None:
    """The candidate is back: lift a pause the lost connection set."""
    state = step.state
    if (
        state.exam_state is ExamState.PAUSED
        and state.pause_reason == DISCONNECTED_REASON
        and not state.offline
        and not state.completed
    ):
        resume(step, RETURNED_REASON)
