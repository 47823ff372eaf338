"""How the rest of the site talks to a session's bot: one Channels group per session.

No Pipecat here, so the WebSocket consumers and views can import it. A running bot joins the
group :func:`bot_group` of its session and reads messages of type ``bot.input``::

    {"type": "bot.input", "kind": <kind>, ...fields}

========================  =====================================================================
``candidate_ready``       consent, briefing and audio check are done: the exam starts
``candidate_text``        ``text`` (and optional ``confidence``, default 1.0): a typed answer, a
                          final transcript of the candidate (text mode); from the inbox with
                          ``receivedAt``, when it was stored (epoch seconds)
``candidate_correction``  ``text`` and optional ``turnId``: the voice candidate's answer to a
                          recognition check, what they said instead of the misheard turn
``command``               ``command``: a chapter 05 command envelope (``commandId``, ``type``,
                          ``source``, ``payload``) from an exam-room button or the proctor
``proctor_instruction``   ``mode`` (``queued``/``immediate``), ``text``, optional ``proctorId``,
                          ``instructionId``, ``reason``
``proctor_action``        ``action`` (one of :data:`PROCTOR_ACTIONS`: ``pause``, ``resume``,
                          ``extend_time``, ``terminate``, ``skip_node``, ``flag_irregularity``,
                          ``authorise_start``), optional ``seconds``, ``scope``, ``category``,
                          ``reason``, ``proctorId``, ``commandId``
``candidate_activity``    ``activity`` (``composing``), ``active`` (bool): the exam room's
                          throttled typing signal (``bot.activity``; not stored, a signal)
``presence_changed``      the web tier stored a ``candidate_connection_changed``: the bot folds
                          the stored events in and lets the controller decide (issue 15)
``stop``                  stop the bot without ending the exam (it can be started again)
========================  =====================================================================

Delivery is best effort (a group with no bot drops the message); the bot acknowledges what it
acted on with stored events (``transcript_final``, ``candidate_command_received``...), which
the exam room sees on its event socket.

A proctor input may carry ``replyTo``, a channel name: the bot then answers on it, once the
controller's decision is stored, with ``{"type": "bot.reply", "status", "reason",
"eventIds", "types"}`` (:func:`ask_bot`; ``proctoring.actions`` uses it so that an action no
bot carried out is reported as such, never silently dropped).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Final

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

MESSAGE_TYPE: Final = "bot.input"
KINDS: Final = frozenset(
    {
        "candidate_ready",
        "candidate_text",
        "candidate_correction",
        "command",
        "proctor_instruction",
        "proctor_action",
        "candidate_activity",
        "presence_changed",
        "stop",
    }
)
MAX_TEXT: Final = 4000
"""Longest typed answer forwarded (characters); longer text is cut."""
PROCTOR_ACTIONS: Final = frozenset(
    {
        "pause",
        "resume",
        "extend_time",
        "terminate",
        "skip_node",
        "flag_irregularity",
        "authorise_start",
    }
)
"""The ``action`` values of a ``proctor_action`` input (``ioa.runtime.ProctorAction``)."""
REPLY_TYPE: Final = "bot.reply"
"""Message type of the bot's answer to an input that carried ``replyTo``."""


def bot_group(session_id: uuid.UUID | str) -> str:
    """The Channels group the bot of ``session_id`` listens on."""
    return f"exam-bot.{uuid.UUID(str(session_id)).hex}"


def bot_message(kind: str, **fields: object) -> dict[str, object]:
    """A ``bot.input`` message (``ValueError`` for an unknown kind)."""
    if kind not in KINDS:
        raise ValueError(f"unknown bot input kind {kind!r}")
    if kind == "candidate_text":
        text = str(fields.get("text", "")).strip()
        if not text:
            raise ValueError("candidate_text needs a non-empty text")
        fields["text"] = text[:MAX_TEXT]
    if kind == "proctor_action" and fields.get("action") not in PROCTOR_ACTIONS:
        raise ValueError(f"unknown proctor action {fields.get('action')!r}")
    return {"type": MESSAGE_TYPE, "kind": kind, **fields}


async def send_to_bot(session_id: uuid.UUID | str, kind: str, **fields: object) -> None:
    """Send one input to the session's bot (best effort)."""
    layer = get_channel_layer()
    if layer is None:
        return
    await layer.group_send(bot_group(session_id), bot_message(kind, **fields))


def send_to_bot_sync(session_id: uuid.UUID | str, kind: str, **fields: object) -> None:
    """:func:`send_to_bot` for synchronous code (views, services, tests)."""
    async_to_sync(send_to_bot)(session_id, kind, **fields)


async def ask_bot(
    session_id: uuid.UUID | str, kind: str, *, timeout: float, **fields: object
) -> dict[str, object] | None:
    """Send one input to the session's bot and wait up to ``timeout`` seconds for its answer
    (module docstring). ``None`` when no answer came: no bot received it, or it was too slow."""
    layer = get_channel_layer()
    if layer is None:
        return None
    reply_to = await layer.new_channel()
    await layer.group_send(bot_group(session_id), bot_message(kind, replyTo=reply_to, **fields))
    try:
        reply = await asyncio.wait_for(layer.receive(reply_to), timeout=timeout)
    except TimeoutError:
        return None
    return dict(reply) if reply.get("type") == REPLY_TYPE else None


def ask_bot_sync(
    session_id: uuid.UUID | str, kind: str, *, timeout: float, **fields: object
) -> dict[str, object] | None:
    """:func:`ask_bot` for synchronous code (services)."""
    return async_to_sync(ask_bot)(session_id, kind, timeout=timeout, **fields)


async def reply(fields: Mapping[str, object], **body: object) -> None:
    """Answer an input that carried ``replyTo`` (nothing to do otherwise)."""
    reply_to = fields.get("replyTo")
    layer = get_channel_layer()
    if not isinstance(reply_to, str) or not reply_to or layer is None:
        return
    await layer.send(reply_to, {"type": REPLY_TYPE, **body})


def parse(message: Mapping[str, object]) -> tuple[str, dict[str, object]] | None:
    """``(kind, fields)`` of a received group message, or ``None`` if it is not bot input."""
    if message.get("type") != MESSAGE_TYPE or message.get("kind") not in KINDS:
        return None
    fields = {k: v for k, v in message.items() if k not in ("type", "kind")}
    return str(message["kind"]), fields
