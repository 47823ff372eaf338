"""A turn the examiner's LLM failed (our chapter 04 §6, ``docs/spec/agent-boundary.md``).

The bot's turn watch (``bot/turn_deadline.py``) reports a :class:`~ioa.runtime.inputs.TurnFault`
when a candidate turn got no usable LLM reply before the deadline or within its request budget.
The controller records it as a ``system_error`` (component ``bot``, severity ``warning``, the
fault's code, the turn's problems in ``details``; marking flags it ``llm_fault``) and gives the
candidate the neutral fallback: the current question, asked again. Nothing about the fault is
said to the candidate, and nothing the LLM produced in that turn is spoken.
"""

from __future__ import annotations

import re
from typing import Final

from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime.inputs import TurnFault
from ioa.runtime.step import Step

_CODE: Final = re.compile(r"^llm_[a-z_]{1,60}$")


def turn_fault(step: Step, fault: TurnFault) -> None:
    """Record the fault and, while the exam is in progress, ask the current question again."""
    state = step.state
    if state.completed:
        step.result.update({"status": "ignored", "reason": "the exam is over"})
        return
    code = fault.code if _CODE.match(fault.code) else "llm_fault_unknown"
    node = state.node
    step.emit(
        p.SystemErrorPayload(
            code=code,
            message=(fault.detail or code.replace("_", " "))[:2000],
            component="bot",
            severity="warning",
            details={
                "nodeId": state.current_node_id,
                "problems": [str(item)[:200] for item in fault.problems[:20]],
            },
        )
    )
    step.result.update({"status": "fallback", "fault": code})
    if node is None or state.exam_state is not ExamState.IN_PROGRESS:
        return
    question = node.last_question or step.plan.node(node.node_id).opening
    if question:
        step.say(question, "question")
