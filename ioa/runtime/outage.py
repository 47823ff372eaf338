"""A provider outage: the platform's fault, never the candidate's (our 03 chapter §8; issue #30).

A provider the bot depends on (the recogniser, the voice, the model) failing is reported as a
``Fault``:

* **fatal** (the service declares itself unusable): the exam ends at once at the
  technical-failure end (``aborted``, reason ``system_error``);
* **transient**: a ``system_error`` is stored, and an exam in progress pauses
  (``exam_state_changed`` → paused, reason :data:`TECHNICAL_PAUSE_REASON`, the
  ``technical_pause`` line): both clocks stop, there is nothing for the candidate to do. The
  first fault at a node opens a ``network_issue`` recovery episode (the proctor and the audit
  see it); further faults while it is open are not counted as more attempts, so repeated faults
  never escalate the candidate's recovery to the end of their exam;
* ``FaultCleared`` (the bot saw the provider work again, or its back-off ran out) resumes an exam
  paused for it, at the same node;
* only **time** ends an exam for an outage: paused for it :attr:`~ioa.runtime.timing.Timing.
  outage_limit_ms` (default 5 minutes) without a clearing, the exam ends at the
  technical-failure end (:func:`fire`). An outage shorter than that never ends an exam.

Pure: the host reports faults and their clearing; the deadline is one of the controller's
timers (``ioa.runtime.pacing``).
"""

from __future__ import annotations

from typing import Final

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import recovery
from ioa.runtime.command_handlers import resume
from ioa.runtime.inputs import Fault, FaultCleared
from ioa.runtime.moves import stop_exam
from ioa.runtime.step import Step
from ioa.schema import EndType, RecoveryScenario

TECHNICAL_PAUSE_REASON: Final = "technical_fault"
BOT_COMPONENTS: Final = frozenset({"bot", "stt", "tts", "llm", "pipeline"})


def fault(step: Step, report: Fault) -> None:
    """Record a fault; a fatal one ends the exam, a transient one pauses it (module
    docstring)."""
    state = step.state
    if state.completed:
        step.result.update({"status": "ignored", "reason": "the exam is over"})
        return
    component = report.component.lower()
    fatal = report.severity == "fatal"
    step.emit(
        p.SystemErrorPayload(
            code=f"{component}_{'failure' if fatal else 'fault'}"[:200],
            message=(report.detail or f"{component} {report.severity} fault")[:2000],
            component="bot" if component in BOT_COMPONENTS else "other",
            severity="fatal" if fatal else "error",
            userMessage=(
                "A technical problem ended the examination."
                if fatal
                else "We are having a technical problem on our side. Please wait: your time is "
                "not running."
            ),
            details={"component": component, "nodeId": state.current_node_id},
        )
    )
    if fatal:
        _end(step, f"fatal {component} failure")
        return
    if state.node is None or state.exam_state is not ExamState.IN_PROGRESS:
        return
    if state.episode(RecoveryScenario.NETWORK_ISSUE.value) is None:
        recovery.attempt(step, RecoveryScenario.NETWORK_ISSUE, f"{component} fault")
    recovery.pause_exam(step, TECHNICAL_PAUSE_REASON, step.plan.texts.technical_pause)


def fault_cleared(step: Step, report: FaultCleared) -> None:
    """The fault is over: resume an exam paused for it."""
    state = step.state
    if state.exam_state is ExamState.PAUSED and state.pause_reason == TECHNICAL_PAUSE_REASON:
        resume(step, "technical_recovered")
        step.result.update({"status": "resumed"})
    else:
        step.result.update({"status": "ignored"})


def deadline(step: Step) -> int | None:
    """When the current outage pause ends the exam (None when the exam is not paused for
    one)."""
    state = step.state
    clock = state.exam_clock
    if (
        state.completed
        or state.exam_state is not ExamState.PAUSED
        or state.pause_reason != TECHNICAL_PAUSE_REASON
        or clock is None
        or clock.stopped_since_ms is None
    ):
        return None
    return clock.stopped_since_ms + step.timing.outage_limit_ms


def fire(step: Step) -> None:
    """The outage lasted past the limit: the exam ends at the technical-failure end."""
    seconds = step.timing.outage_limit_ms // 1000
    _end(step, f"a provider was unavailable for more than {seconds} s")


def _end(step: Step, description: str) -> None:
    stop_exam(
        step,
        end_type=EndType.TECHNICAL_FAILURE,
        reason="system_error",
        to_state=ExamState.ABORTED,
        description=description,
    )
