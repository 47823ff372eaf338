"""The bot's side of the proctor dashboard (no Pipecat here): proctor inputs from the session's
bot group become controller inputs, and the sender gets an answer.

* :func:`runtime_input` — a ``proctor_action`` / ``proctor_instruction`` message
  (``sessions.bot_channel``) as an ``ioa.runtime`` input; ``ValueError`` for a malformed one.
* :func:`handle` — hands the input to the examiner core (after every earlier input), waits
  until the controller's decision is stored and applied, and answers on ``replyTo``:
  ``status`` is the controller's (``paused``, ``extended``, ``issued``, ``ignored``,
  ``duplicate``...), ``reason`` why an action did not apply, ``deferred`` whether it waits
  for the exam to resume (an immediate instruction sent while paused), ``eventIds`` /
  ``types`` the stored events. A malformed input answers ``invalid``; a failure ``failed``.
* :func:`candidate_ready` — the candidate is ready: the exam starts, or waits at ``ready`` for
  the proctor when the sitting says so (``Sitting.proctor_authorises_start``).

``bot.session_runner`` routes these kinds here before anything else sees them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Final, Protocol, TypeGuard

from bot.journal import DbThreads
from ioa.errors import InvalidInputError
from ioa.runtime import CandidateReady, Decision, ProctorAction, ProctorInstruction, RuntimeInput
from ioa.runtime.inputs import IrregularityCategory, ProctorActionName
from sessions import bot_channel
from sessions.models import Sitting

logger = logging.getLogger(__name__)

HANDLED: Final = frozenset({"proctor_action", "proctor_instruction", "candidate_ready"})
CATEGORIES: Final = frozenset({"environment", "candidate", "staff", "technical"})


class Core(Protocol):
    """What this module needs of :class:`bot.examiner.ExaminerCore`."""

    @property
    def session_id(self) -> uuid.UUID: ...

    @property
    def db(self) -> DbThreads: ...

    async def submit(self, item: RuntimeInput) -> Decision: ...

    def post(self, item: RuntimeInput) -> None: ...


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _is_action(value: object) -> TypeGuard[ProctorActionName]:
    return value in bot_channel.PROCTOR_ACTIONS


def _is_category(value: object) -> TypeGuard[IrregularityCategory]:
    return value in CATEGORIES


def runtime_input(kind: str, fields: Mapping[str, object]) -> ProctorAction | ProctorInstruction:
    """The controller input a proctor message asks for (``ValueError`` when malformed)."""
    proctor = _text(fields.get("proctorId")) or "proctor"
    if kind == "proctor_instruction":
        text = _text(fields.get("text"))
        if text is None:
            raise ValueError("an instruction needs text")
        return ProctorInstruction(
            mode="immediate" if fields.get("mode") == "immediate" else "queued",
            text=text,
            proctor_id=proctor,
            instruction_id=_text(fields.get("instructionId")),
            reason=_text(fields.get("reason")),
        )
    if kind != "proctor_action":
        raise ValueError(f"not a proctor input: {kind}")
    action = fields.get("action")
    if not _is_action(action):
        raise ValueError(f"unknown proctor action {action!r}")
    seconds = fields.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float)):
        raise ValueError("seconds must be a number")
    category = fields.get("category")
    if category is not None and not _is_category(category):
        raise ValueError(f"unknown irregularity category {category!r}")
    return ProctorAction(
        action=action,
        proctor_id=proctor,
        seconds=float(seconds) if isinstance(seconds, int | float) else None,
        scope="node" if fields.get("scope") == "node" else "exam",
        reason=_text(fields.get("reason")),
        command_id=_text(fields.get("commandId")),
        category=category,
    )


async def handle(core: Core, kind: str, fields: Mapping[str, object]) -> None:
    """Carry out one proctor input and answer the sender (module docstring)."""
    try:
        item = runtime_input(kind, fields)
    except ValueError as exc:
        await bot_channel.reply(fields, status="invalid", reason=str(exc), eventIds=[], types=[])
        return
    try:
        decision = await core.submit(item)
    except InvalidInputError as exc:
        await bot_channel.reply(fields, status="invalid", reason=str(exc), eventIds=[], types=[])
        return
    except Exception as exc:
        logger.exception("bot %s: proctor input %s failed", core.session_id, kind)
        await bot_channel.reply(
            fields, status="failed", reason=f"{type(exc).__name__}", eventIds=[], types=[]
        )
        return
    await bot_channel.reply(
        fields,
        status=decision.status,
        reason=str(decision.result.get("reason") or ""),
        deferred=decision.result.get("deferred") is True,
        eventIds=[e.eventId for e in decision.events],
        types=[e.type.value for e in decision.events],
    )


def start_awaits_authorisation(session_id: uuid.UUID | str) -> bool:
    """Whether the session's sitting wants a proctor to authorise each start (sync, ORM)."""
    return bool(
        Sitting.objects.filter(sessions__pk=session_id)
        .values_list("proctor_authorises_start", flat=True)
        .first()
    )


async def candidate_ready(core: Core) -> None:
    """The candidate is ready: start, or wait at ``ready`` for the proctor."""
    await_authorisation = await core.db.run(
        core.session_id, start_awaits_authorisation, core.session_id
    )
    core.post(CandidateReady(await_authorisation=bool(await_authorisation)))
