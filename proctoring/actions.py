"""Proctor actions on a live session: the write side of the proctor dashboard (docs/proctoring.md).

:func:`action_perform` is the one way a proctor steers a session, from the dashboard's forms
and from ``POST /api/v1/sessions/<id>/actions/`` alike::

    dashboard / API ──► action_perform ──► sessions.bot_channel.ask_bot_sync ──► the session's bot
          ▲                   │                                              │
          └── request row ◄───┴──────── the bot's answer ◄── controller ─────┘ (events stored)

1. **Who.** The caller passes a session it found through :func:`proctorable_sessions` (the
   selector: ``ExamSession.objects.visible_to`` without candidates), so other people's
   sessions never get here (they answer 404 before).
2. **What.** The input is checked here (one rule set for the HTML forms and the API): a
   reason is required for every action; ``extend_time`` needs 1-3600 seconds and a scope
   (``node`` or ``exam``); ``instruct`` a mode (``queued``, ``immediate``) and a text;
   ``flag_irregularity`` a category (environment, candidate, staff, technical). Bad input
   raises :class:`ActionInvalid` and records nothing.
3. **Idempotency.** With an ``idempotency_key``, the same proctor repeating the key for the
   same session gets the first request back (:attr:`ActionOutcome.replayed`), whatever became
   of it; the key reused for a different action raises :class:`IdempotencyConflict`.
4. **A request row** (:class:`~sessions.models.ProctorActionRequest`) is stored first; its id
   is the command id, the instruction id, and so the ``correlationId`` of the events the
   action causes.
5. **Delivery.** The action goes to the running bot through its Channels group and the
   service waits (``VIVA_PROCTOR_ACTION_TIMEOUT_SECONDS``, default 10) for the bot's answer,
   sent once the controller's decision is stored: ``applied`` (its events), ``ignored`` (it
   does not apply now: "the exam is paused"...), ``refused`` (the bot found it invalid), or
   ``unconfirmed`` (no answer in time: the proctor checks the timeline before retrying).
   **No bot running** (no live lease): the request is ``refused`` with ``bot_unavailable``
   and nothing is sent — never silently dropped. The one exception is an irregularity
   report: it changes nothing in the exam, so without a bot (or once the exam is over) it is
   stored directly in the session log (``proctor_action``/``flag_irregularity``, source
   ``system``, status ``recorded``), also after the exam has ended (an auditor expects a late
   report to be on record). Marking hears of every stored report through the event store
   (an outbox message written with it, ``marking.receivers``): marks already computed go back
   to review, or, when locked, record it unchanged.

No database transaction is held while waiting for the bot (the bot writes to the session's
log meanwhile); the request row is written in its own short transactions before and after.
The events name the proctor in their payload (``proctor_action.actor``,
``proctor_instruction.proctorId``: ``user:<id>``) with the reason: the envelope's ``source``
stays the producing component (chapter 05 §2), ``runtime_controller`` for what the controller
decided and ``system`` for an irregularity stored directly.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import Requester, User
from ioa.events import TERMINAL_STATES, EventFactory, EventSource
from ioa.events import payloads as p
from sessions import bot_channel
from sessions.bot_port import BotHealth, bot_health
from sessions.event_store import append_events
from sessions.models import ExamSession, ProctorActionRequest, SessionEvent

logger = logging.getLogger(__name__)


class Action(StrEnum):
    """What a proctor can do to a session."""

    AUTHORISE_START = "authorise_start"
    PAUSE = "pause"
    RESUME = "resume"
    EXTEND_TIME = "extend_time"
    INSTRUCT = "instruct"
    SKIP_NODE = "skip_node"
    FLAG_IRREGULARITY = "flag_irregularity"
    TERMINATE = "terminate"


ACTION_LABELS: Final = {
    Action.AUTHORISE_START: "Authorise the start",
    Action.PAUSE: "Pause",
    Action.RESUME: "Resume",
    Action.EXTEND_TIME: "Extend time",
    Action.INSTRUCT: "Instruct the examiner",
    Action.SKIP_NODE: "Skip to the next part",
    Action.FLAG_IRREGULARITY: "Report an irregularity",
    Action.TERMINATE: "Terminate the exam",
}
CATEGORIES: Final = ("environment", "candidate", "staff", "technical")
SCOPES: Final = ("node", "exam")
MODES: Final = ("queued", "immediate")
MAX_REASON: Final = 2000
MAX_INSTRUCTION: Final = 1000
MAX_EXTENSION_SECONDS: Final = 3600
TERMINAL: Final = frozenset(s.value for s in TERMINAL_STATES)
S = ProctorActionRequest.Status


class ActionInvalid(Exception):
    """The action's input is not acceptable; ``field`` names the culprit. Nothing recorded."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class IdempotencyConflict(Exception):
    """The idempotency key was already used by this proctor for another action."""

    def __init__(self, request: ProctorActionRequest) -> None:
        super().__init__("this idempotency key was already used for a different action")
        self.request = request


@dataclass(frozen=True, slots=True)
class ActionOutcome:
    """A request and whether it is an earlier one returned for a repeated idempotency key."""

    request: ProctorActionRequest
    replayed: bool = False

    @property
    def done(self) -> bool:
        """Carried out (by the bot) or recorded (directly)."""
        return self.request.status in (S.APPLIED, S.RECORDED)


# --- reads ----------------------------------------------------------------------------------------


def proctorable_sessions(*, user: Requester) -> QuerySet[ExamSession]:
    """Sessions ``user`` may watch and steer: those they may see, unless they are a candidate
    (a candidate sees their own session, never as a proctor)."""
    if getattr(user, "role", None) == "candidate":
        return ExamSession.objects.none()
    return ExamSession.objects.visible_to(user)


def session_for_proctor(*, user: Requester, session_id: uuid.UUID | str) -> ExamSession | None:
    """The session if ``user`` may steer it, else ``None`` (callers answer 404)."""
    try:
        key = session_id if isinstance(session_id, uuid.UUID) else uuid.UUID(str(session_id))
    except ValueError:
        return None
    return (
        proctorable_sessions(user=user)
        .select_related("sitting", "sitting__version", "candidate")
        .filter(pk=key)
        .first()
    )


def requests_for(session: ExamSession, limit: int = 200) -> list[ProctorActionRequest]:
    """The session's proctor requests, newest first."""
    return list(
        ProctorActionRequest.objects.filter(session=session)
        .select_related("proctor")
        .order_by("-created_at")[:limit]
    )


def proctor_id(user: User) -> str:
    """How events name a proctor (``proctor_action.actor``, ``proctor_instruction.proctorId``)."""
    return f"user:{user.pk}"


def bot_is_live(session: ExamSession) -> bool:
    """Whether a bot holds a live lease on the session (it receives and answers actions)."""
    return bot_health([session.pk]).get(str(session.pk), BotHealth()).live


# --- input ----------------------------------------------------------------------------------------


def clean_action(
    *,
    action: str,
    reason: str,
    seconds: float | int | None = None,
    scope: str | None = None,
    mode: str | None = None,
    text: str | None = None,
    category: str | None = None,
) -> tuple[Action, str, dict[str, int | str | None]]:
    """The action, its reason and its parameters, checked (:class:`ActionInvalid`)."""
    try:
        kind = Action(action)
    except ValueError:
        raise ActionInvalid("action", f"unknown action {action!r}") from None
    why = (reason or "").strip()
    if not why:
        raise ActionInvalid("reason", "Give a reason: it is recorded with the action.")
    if len(why) > MAX_REASON or "\x00" in why:
        raise ActionInvalid("reason", f"The reason must be at most {MAX_REASON} characters.")
    params: dict[str, int | str | None] = {}
    if kind is Action.EXTEND_TIME:
        if (
            seconds is None
            or isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not math.isfinite(seconds)
            or not 1 <= seconds <= MAX_EXTENSION_SECONDS
        ):
            raise ActionInvalid(
                "seconds", f"Extend by 1 to {MAX_EXTENSION_SECONDS} seconds (a whole number)."
            )
        if scope not in SCOPES:
            raise ActionInvalid("scope", "Extend the current part (node) or the whole exam.")
        params = {"seconds": int(seconds), "scope": scope}
    elif kind is Action.INSTRUCT:
        if mode not in MODES:
            raise ActionInvalid("mode", "Choose queued (next turn) or immediate (now).")
        words = (text or "").strip()
        if not words or len(words) > MAX_INSTRUCTION or "\x00" in words:
            raise ActionInvalid(
                "text", f"Write the instruction (at most {MAX_INSTRUCTION} characters)."
            )
        params = {"mode": mode, "text": words}
    elif kind is Action.FLAG_IRREGULARITY:
        if category not in CATEGORIES:
            raise ActionInvalid("category", f"Choose a category: {', '.join(CATEGORIES)}.")
        params = {"category": category}
    return kind, why, params


# --- the write ------------------------------------------------------------------------------------


def action_perform(
    *,
    session: ExamSession,
    user: User,
    action: str,
    reason: str,
    idempotency_key: str = "",
    seconds: float | int | None = None,
    scope: str | None = None,
    mode: str | None = None,
    text: str | None = None,
    category: str | None = None,
    timeout: float | None = None,
) -> ActionOutcome:
    """Carry out one proctor action on ``session`` (module docstring)."""
    kind, why, params = clean_action(
        action=action,
        reason=reason,
        seconds=seconds,
        scope=scope,
        mode=mode,
        text=text,
        category=category,
    )
    key = (idempotency_key or "").strip()[:200]
    request, replayed = _request_create(
        session=session, user=user, action=kind, reason=why, params=params, key=key
    )
    if replayed:
        return ActionOutcome(request, replayed=True)
    session.refresh_from_db(fields=["state"])
    if kind is Action.FLAG_IRREGULARITY and (session.state in TERMINAL or not bot_is_live(session)):
        # No bot to carry it out (or the exam is over and a closing bot would ignore it).
        return ActionOutcome(_record_irregularity(request=request, session=session))
    if session.state in TERMINAL:
        return ActionOutcome(
            _answer(request, S.REFUSED, "session_over", "The exam is over; nothing was sent.")
        )
    if not bot_is_live(session):
        return ActionOutcome(
            _answer(
                request,
                S.REFUSED,
                "bot_unavailable",
                "No examiner bot is running for this session, so the action was not sent. "
                "It runs once the candidate is in the exam room; if the exam was under way, "
                "it is being restarted: try again in a few seconds.",
            )
        )
    wait = timeout if timeout is not None else _timeout()
    try:
        input_kind, fields = _message(request, kind, user)
        reply = bot_channel.ask_bot_sync(session.pk, input_kind, timeout=wait, **fields)
    except Exception as exc:  # the channel layer is down: nothing reached the bot
        logger.exception("proctor action %s: the channel layer failed", request.pk)
        return ActionOutcome(
            _answer(request, S.REFUSED, "bot_unavailable", f"The bot could not be reached: {exc}")
        )
    return ActionOutcome(_from_reply(request, reply, wait))


def _timeout() -> float:
    return float(getattr(settings, "VIVA_PROCTOR_ACTION_TIMEOUT_SECONDS", 10))


def _fingerprint(action: str, reason: str, params: Mapping[str, object]) -> tuple[object, ...]:
    return (action, reason, tuple(sorted(params.items())))


def _request_create(
    *,
    session: ExamSession,
    user: User,
    action: Action,
    reason: str,
    params: dict[str, int | str | None],
    key: str,
) -> tuple[ProctorActionRequest, bool]:
    """The new request row, or the earlier one with the same idempotency key (``True``)."""
    if key:
        earlier = ProctorActionRequest.objects.filter(
            session=session, proctor=user, idempotency_key=key
        ).first()
        if earlier is not None:
            return _same(earlier, action, reason, params), True
    try:
        with transaction.atomic():
            request = ProctorActionRequest.objects.create(
                session=session,
                proctor=user,
                action=action.value,
                params=params,
                reason=reason,
                idempotency_key=key,
            )
    except IntegrityError:  # the same key at the same moment: the other one won
        earlier = ProctorActionRequest.objects.get(
            session=session, proctor=user, idempotency_key=key
        )
        return _same(earlier, action, reason, params), True
    return request, False


def _same(
    earlier: ProctorActionRequest, action: Action, reason: str, params: dict[str, int | str | None]
) -> ProctorActionRequest:
    if _fingerprint(earlier.action, earlier.reason, earlier.params) != _fingerprint(
        action.value, reason, params
    ):
        raise IdempotencyConflict(earlier)
    return earlier


def _message(
    request: ProctorActionRequest, kind: Action, user: User
) -> tuple[str, dict[str, object]]:
    """The ``sessions.bot_channel`` input for the request: its kind and fields."""
    common = {"proctorId": proctor_id(user), "reason": request.reason}
    if kind is Action.INSTRUCT:
        return "proctor_instruction", {
            "mode": request.params["mode"],
            "text": request.params["text"],
            "instructionId": str(request.pk),
            **common,
        }
    return "proctor_action", {
        "action": kind.value,
        "commandId": str(request.pk),
        **{k: v for k, v in request.params.items() if v is not None},
        **common,
    }


@transaction.atomic
def _answer(
    request: ProctorActionRequest,
    status: str,
    code: str = "",
    message: str = "",
    event_ids: list[str] | None = None,
) -> ProctorActionRequest:
    request.status = status
    request.code = code
    request.message = message
    request.event_ids = list(event_ids or [])
    request.answered_at = timezone.now()
    request.save(update_fields=["status", "code", "message", "event_ids", "answered_at"])
    return request


def _from_reply(
    request: ProctorActionRequest, reply: Mapping[str, object] | None, waited: float
) -> ProctorActionRequest:
    """The request updated with the bot's answer (module docstring, step 5)."""
    if reply is None:
        return _answer(
            request,
            S.UNCONFIRMED,
            "bot_timeout",
            f"The examiner bot did not confirm the action within {waited:g} seconds. "
            "Check the session's timeline before trying again.",
        )
    status = str(reply.get("status", ""))
    reason = str(reply.get("reason") or "")
    found = reply.get("eventIds")
    event_ids = [str(e) for e in found] if isinstance(found, list | tuple) else []
    if status == "invalid":
        return _answer(request, S.REFUSED, "invalid", reason or "The bot refused the action.")
    if status == "failed":
        return _answer(request, S.REFUSED, "bot_failed", "The bot failed to carry it out.")
    if status == "duplicate" or event_ids:
        deferred = reply.get("deferred") is True
        return _answer(request, S.APPLIED, "", _done_text(request, deferred=deferred), event_ids)
    return _answer(
        request,
        S.IGNORED,
        "not_applicable",
        f"Not carried out: {reason or 'it does not apply now'}.",
    )


def _done_text(request: ProctorActionRequest, *, deferred: bool) -> str:
    """What the proctor is told of an applied action; ``deferred``: the bot holds it until the
    exam resumes (an immediate instruction sent while paused)."""
    if request.action == Action.INSTRUCT:
        if deferred:
            return (
                "Instruction sent: the exam is paused, so the examiner delivers it right after "
                "the resume."
            )
        when = "now" if request.params.get("mode") == "immediate" else "at the next turn"
        return f"Instruction sent: the examiner delivers it {when}."
    if request.action == Action.EXTEND_TIME:
        scope = "this part" if request.params.get("scope") == "node" else "the exam"
        return f"Added {request.params.get('seconds')} seconds to {scope}."
    return f"{ACTION_LABELS[Action(request.action)]}: done."


def _record_irregularity(
    *, request: ProctorActionRequest, session: ExamSession
) -> ProctorActionRequest:
    """Store the irregularity report directly (no bot runs: module docstring, step 5)."""
    node = (
        SessionEvent.objects.filter(session=session, type="node_entered")
        .order_by("-seq")
        .values_list("payload__nodeId", flat=True)
        .first()
    )
    make = EventFactory(session_id=str(session.pk), source=EventSource.SYSTEM)
    event = make(
        p.ProctorActionTaken(
            actor=proctor_id(request.proctor),
            action="flag_irregularity",
            reason=request.reason,
            category=request.params["category"],
            nodeId=node,
        ),
        correlation_id=str(request.pk),
    )
    result = append_events(session=session, events=[event])
    return _answer(
        request,
        S.RECORDED,
        "",
        "Irregularity recorded in the session log.",
        [s.event_id for s in result.events],
    )
