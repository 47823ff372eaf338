"""The durable inbox: every candidate input is stored before the bot sees it.

A candidate's client sends typed answers, corrections of what the recogniser heard (voice),
exam-room commands and "I am ready" as frames on the session socket (``sessions.consumers``),
each with a client-generated id (``id`` for ``answer``, ``correction`` and ``candidate_ready``,
the envelope's ``commandId`` for ``command``). :func:`receive_frame`:

1. parses the frame (:func:`parse_frame`; :class:`InvalidInput` names what is wrong);
2. stores it as a :class:`~sessions.models.CandidateInput` under ``(session, input_id)``
   (:func:`store_input`): a frame whose id is already stored is a duplicate and is not stored
   again;
3. only then is the input acknowledged to the client (the consumer sends
   ``{"kind": "ack", "id": ..., "duplicate": bool}``; a client retries until it has the ack);
4. forwards it to the session's bot (``sessions.bot_channel``, best effort) with ``inputId`` and
   ``receivedAt`` (when it was stored, epoch seconds: the instant the candidate handed it over,
   however late a bot reads it), unless the bot already processed it.

The bot drops inputs whose id it has seen, marks an input processed (:func:`mark_processed`) in
the transaction that stores the events it caused (``bot.journal.Journal.record_many``), and reads
what it has not processed (:func:`pending_inputs`) when it starts or resumes, at every heartbeat
(a forwarded message may be lost: the channel layer is best effort) and before any timer fires
(so a silence prompt never reaches a candidate whose answer waits here).

Lock order: the inbox rows are written alone (store) or after the session row and its events
(``mark_processed`` inside the bot's append), never before them.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from asgiref.sync import sync_to_async
from django.db import IntegrityError, transaction
from django.utils import timezone

from sessions.bot_channel import MAX_TEXT, send_to_bot
from sessions.models import CandidateInput

logger = logging.getLogger(__name__)

INPUT_ID: Final = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")
"""What a client-generated input id may look like (a UUID in practice)."""
RECEIVED_AT: Final = "receivedAt"
"""The field the bot gets with each input: when it was stored (epoch seconds)."""
MAX_CORRECTED_TURNS: Final = 20
"""The most misheard turns one correction may name (one answer cut into pieces)."""
FRAME_KINDS: Final = {
    "answer": "candidate_text",
    "correction": "candidate_correction",
    "command": "command",
    "candidate_ready": "",
}
"""Socket frame kind → the bot input kind it becomes (``candidate_ready`` keeps its name)."""


class InvalidInput(ValueError):
    """A candidate frame that cannot be an input; the message names what is wrong."""


@dataclass(frozen=True, slots=True)
class InboxItem:
    """One stored input as the bot receives it: ``kind`` and ``fields`` of
    ``sessions.bot_channel``."""

    input_id: str
    kind: str
    fields: dict[str, object]


@dataclass(frozen=True, slots=True)
class Receipt:
    """What storing an input did: ``created`` false for a duplicate; ``processed`` when the bot
    already acted on it."""

    input_id: str
    created: bool
    processed: bool


def _input_id(raw: object, *, what: str) -> str:
    if raw is None or raw == "":
        return uuid.uuid4().hex  # an old client without ids: still stored, not deduplicated
    if not isinstance(raw, str) or not INPUT_ID.match(raw):
        raise InvalidInput(f"{what} must be 1-100 letters, digits, '-', '_', '.' or ':'")
    return raw


def parse_frame(content: Mapping[str, object]) -> InboxItem:
    """The input a candidate frame carries (module docstring)."""
    kind = content.get("kind")
    if kind == "answer":
        text = content.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("an answer needs a non-empty text")
        input_id = _input_id(content.get("id"), what="the answer's id")
        return InboxItem(input_id, "candidate_text", {"text": text.strip()[:MAX_TEXT]})
    if kind == "correction":
        return _correction(content)
    if kind == "command":
        command = content.get("command")
        if not isinstance(command, dict):
            raise InvalidInput("a command frame needs a command object")
        input_id = _input_id(command.get("commandId"), what="the command's commandId")
        return InboxItem(input_id, "command", {"command": {**command, "source": "candidate"}})
    if kind == "candidate_ready":
        return InboxItem(_input_id(content.get("id"), what="the frame's id"), "candidate_ready", {})
    raise InvalidInput(f"candidate frames: {', '.join(FRAME_KINDS)}")


def _correction(content: Mapping[str, object]) -> InboxItem:
    """A voice candidate's answer to a recognition check: ``text``, what they said, and
    ``turnIds``, the misheard turns in order (absent or empty: speech of which no words were
    heard; a page from before several turns could be named sends one ``turnId``)."""
    text = content.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("a correction needs a non-empty text")
    turn_ids = _turn_ids(content)
    input_id = _input_id(content.get("id"), what="the correction's id")
    fields: dict[str, object] = {"text": text.strip()[:MAX_TEXT]}
    if turn_ids:
        fields["turnIds"] = turn_ids
    return InboxItem(input_id, "candidate_correction", fields)


def _turn_ids(content: Mapping[str, object]) -> list[str]:
    """The misheard turns a correction names (``turnIds``, or the older single ``turnId``)."""
    if "turnIds" in content:
        named = content["turnIds"]
        if not isinstance(named, list) or len(named) > MAX_CORRECTED_TURNS:
            raise InvalidInput(
                f"a correction's turnIds must be a list of at most {MAX_CORRECTED_TURNS} turn ids"
            )
    else:
        single = content.get("turnId")
        named = [] if single is None else [single]
    for turn_id in named:
        if not isinstance(turn_id, str) or not INPUT_ID.match(turn_id):
            raise InvalidInput("a correction names turns by id, such as 'turn-004'")
    return [str(turn_id) for turn_id in named]


def store_input(
    *, session_id: uuid.UUID, item: InboxItem, received_at: datetime | None = None
) -> Receipt:
    """Store ``item`` once per ``(session, input_id)``; a repeat returns the stored one."""
    try:
        with transaction.atomic():
            row = CandidateInput.objects.create(
                session_id=session_id,
                input_id=item.input_id,
                kind=item.kind,
                payload=item.fields,
                received_at=received_at or timezone.now(),
            )
        return Receipt(row.input_id, created=True, processed=False)
    except IntegrityError:
        processed = (
            CandidateInput.objects.filter(session_id=session_id, input_id=item.input_id)
            .values_list("processed_at", flat=True)
            .first()
        )
        return Receipt(item.input_id, created=False, processed=processed is not None)


def pending_inputs(*, session_id: uuid.UUID, limit: int = 200) -> list[InboxItem]:
    """The session's inputs the bot has not processed, oldest first."""
    rows = CandidateInput.objects.filter(session_id=session_id, processed_at__isnull=True).order_by(
        "id"
    )[:limit]
    return [
        InboxItem(r.input_id, r.kind, {**r.payload, RECEIVED_AT: r.received_at.timestamp()})
        for r in rows
    ]


def mark_processed(*, session_id: uuid.UUID, input_ids: Iterable[str]) -> int:
    """Record that the bot acted on these inputs (call inside the transaction that stores
    what they caused); returns how many were still pending."""
    ids = sorted({str(i) for i in input_ids})
    if not ids:
        return 0
    return CandidateInput.objects.filter(
        session_id=session_id, input_id__in=ids, processed_at__isnull=True
    ).update(processed_at=timezone.now())


async def receive_frame(session_id: uuid.UUID, content: Mapping[str, object]) -> Receipt:
    """Parse, store, then forward a candidate frame (module docstring). Raises
    :class:`InvalidInput`, or a ``DatabaseError`` when it could not be stored (no ack then)."""
    item = parse_frame(content)
    received_at = timezone.now()
    receipt = await sync_to_async(store_input, thread_sensitive=False)(
        session_id=session_id, item=item, received_at=received_at
    )
    if not receipt.processed:
        fields = {**item.fields, RECEIVED_AT: received_at.timestamp()}
        try:
            await send_to_bot(session_id, item.kind, inputId=item.input_id, **fields)
        except Exception:  # stored: the bot reads it from the inbox
            logger.warning("session %s: input %s stored, not forwarded", session_id, item.input_id)
    return receipt


def inbox_backlog(*, now: datetime) -> tuple[int, float]:
    """How many candidate inputs wait for a bot, and how long the oldest has waited (seconds)."""
    waiting = CandidateInput.objects.filter(processed_at__isnull=True)
    oldest = waiting.order_by("received_at").values_list("received_at", flat=True).first()
    age = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
    return waiting.count(), age
