"""Proctor (admin) instructions, as the beats chapter's admin instructions (spec-notes §2).

* ``queued``: appended to the current node's task messages and to the live LLM context
  (``InjectContext(persistent=True)``); no node switch. It is consumed (``delivered``) by the
  next ``report_observation`` (the LLM has had its turn with it); undelivered ones travel into
  the task messages of the next node entered.
* ``immediate``: the admin node (context APPEND) runs it now: the LLM's next observation is the
  admin run, its ``spokenText`` (validated like any other) is spoken, the instruction is
  ``delivered``, and the flow returns to the current node, or chains to the next pending
  immediate instruction.
* While the exam is paused an immediate instruction waits: nothing is spoken to a paused
  room; the resume runs it right after the welcome back and the question.
* Instructions still pending when the exam ends are ``cancelled``.

Every ``proctor_instruction`` event of one instruction carries its id as ``correlationId``, so
the timeline shows its issue and delivery together; the proctor's ``reason`` is on the issue.
"""

from __future__ import annotations

from ioa.errors import InvalidInputError
from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import texts
from ioa.runtime.effects import InjectContext, ReturnToNode
from ioa.runtime.inputs import ProctorInstruction
from ioa.runtime.moves import activate_admin
from ioa.runtime.state import Instruction
from ioa.runtime.step import MAX_TEXT, Step

ACTIVE_STATES = frozenset({ExamState.IN_PROGRESS, ExamState.PAUSED})


def _emit(step: Step, instruction: Instruction, status: str) -> None:
    step.emit(_payload(step, instruction, status), correlation_id=instruction.instruction_id)


def _payload(step: Step, instruction: Instruction, status: str) -> p.ProctorInstruction:
    return p.ProctorInstruction(
        instructionId=instruction.instruction_id,
        proctorId=instruction.proctor_id,
        mode="immediate" if instruction.mode == "immediate" else "queued",
        text=instruction.text,
        status="delivered" if status == "delivered" else "cancelled",
        nodeId=step.state.current_node_id,
    )


def issue(step: Step, command: ProctorInstruction) -> None:
    """Record a new instruction and deliver it as its mode says."""
    state = step.state
    text = command.text.strip()
    if not text:
        raise InvalidInputError("a proctor instruction needs text")
    if state.completed:
        step.result.update({"status": "ignored", "reason": "the exam is over"})
        return
    instruction_id = command.instruction_id or f"instr-{len(state.instructions) + 1:03d}"
    if instruction_id in state.instructions:
        step.result.update({"status": "duplicate", "instructionId": instruction_id})
        return
    reason = command.reason.strip() if isinstance(command.reason, str) else None
    if reason is not None and "\x00" in reason:
        raise InvalidInputError("a proctor's reason must be text without NUL characters")
    step.emit(
        p.ProctorInstruction(
            instructionId=instruction_id,
            proctorId=command.proctor_id,
            mode=command.mode,
            text=text,
            status="issued",
            nodeId=state.current_node_id,
            reason=reason[:MAX_TEXT] if reason else None,
        ),
        correlation_id=instruction_id,
    )
    step.result.update({"status": "issued", "instructionId": instruction_id})
    if command.mode == "queued":
        step.effect(InjectContext(texts.QUEUED_INSTRUCTION.format(text=text), persistent=True))
        return
    admin = state.admin_instruction()
    if state.exam_state is ExamState.PAUSED:
        # Nothing is spoken while paused: it runs right after the resume (command_handlers).
        step.result.update(
            {"deferred": True, "reason": "the exam is paused: it is spoken right after it resumes"}
        )
        return
    if (
        admin is not None
        and admin.instruction_id == instruction_id
        and state.exam_state in ACTIVE_STATES
    ):
        activate_admin(step)


def consume_queued(step: Step) -> None:
    """Mark every pending queued instruction delivered (after an observation)."""
    for instruction in step.state.pending_instructions("queued"):
        _emit(step, instruction, "delivered")


def admin_delivered(step: Step, instruction: Instruction) -> None:
    """The admin run of ``instruction`` is done: mark it and chain or return."""
    _emit(step, instruction, "delivered")
    node = step.state.node
    if step.state.admin_instruction() is not None:
        activate_admin(step)
    elif node is not None:
        step.effect(ReturnToNode(node.node_id))
