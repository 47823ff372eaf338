"""Inputs from outside the pipeline: the session's bot group and the voice transport's presence.

:class:`ChannelInputs` takes each message of the session's bot group
(``sessions.bot_channel``), live or read back from the durable inbox (``bot.candidate_inbox``; an
input seen before is dropped by its ``inputId``):

* a typed answer → a transcription frame into the pipeline (the pipeline adapter records it);
* the candidate composing → the composing watch (``bot.activity``);
* a correction of what the recogniser heard → a ``TranscriptCorrection`` input; one the
  controller refuses (the exam moved on from the misheard answer) is stored as a
  ``system_error`` the candidate sees, with their words kept in its details;
* a command envelope → a ``Command`` input;
* the candidate being ready and proctor inputs → ``bot.proctoring`` (which answers the proctor);
* a connection change the web tier stored → folded in, then a ``Tick`` so the controller decides.

An input from the durable inbox is marked processed with the events of the decision on it.
:meth:`~ChannelInputs.media_connection` stores the voice transport coming or going as
``candidate_connection_changed`` (while the exam runs); the controller pauses after the grace
period and resumes on return (``ioa.runtime.absence``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Final, Protocol

from pipecat.frames.frames import Frame

from bot import proctoring, transport_presence
from bot.activity import ComposingWatch
from bot.candidate_inbox import CandidateInbox
from bot.examiner_inbox import Decisions, log_failure
from bot.journal_writer import JournalWriter
from bot.text_transport import typed_answer_frame
from ioa.errors import InvalidInputError
from ioa.events import ExamState
from ioa.events import payloads as p
from ioa.runtime import Command, Tick, TranscriptCorrection
from sessions.inbox import RECEIVED_AT

logger = logging.getLogger(__name__)

RUNNING = (ExamState.READY, ExamState.IN_PROGRESS, ExamState.PAUSED)
"""Exam states in which the candidate's voice connection is recorded."""
CORRECTION_REFUSED: Final = "correction_refused"
"""The ``system_error`` code of a correction the controller refused (the page reopens its
check on it)."""
CORRECTION_REFUSED_MESSAGE: Final = (
    "Your correction could not be used: the exam had already moved on from that answer, or it "
    "had been corrected already. Your words are kept in the record. If the examiner is waiting "
    "for an answer, say it again or type it."
)


class FramePush(Protocol):
    """What the channel inputs need of the effect applier (``bot.effects.EffectApplier``)."""

    async def push(self, frame: Frame) -> None: ...


def command_input(fields: Mapping[str, object]) -> Command:
    """The ``Command`` input a ``command`` message carries (its envelope, unchecked here;
    ``TypeError`` when it is not an object)."""
    command = fields.get("command") or {}
    if not isinstance(command, Mapping):
        raise TypeError(f"a command is an object, not {type(command).__name__}")
    return Command(
        command_id=str(command.get("commandId", "")),
        type=str(command.get("type", "")),
        source=str(command.get("source", "candidate")),
        payload=dict(command.get("payload") or {}),
    )


def correction_input(fields: Mapping[str, object]) -> TranscriptCorrection | None:
    """The ``TranscriptCorrection`` a ``candidate_correction`` message carries (None without
    words; the controller refuses a turn that cannot be corrected)."""
    text = str(fields.get("text", "")).strip()
    if not text:
        return None
    named = fields.get("turnIds")
    if not isinstance(named, list):
        single = fields.get("turnId")  # a message queued by an older web process
        named = [] if single is None else [single]
    return TranscriptCorrection(text, turn_ids=tuple(str(turn_id) for turn_id in named))


def _number(value: object) -> float:
    """``float(value)`` of a JSON number or numeric text; raises like ``float`` otherwise."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"not a number: {type(value).__name__}")


def _instant(value: object) -> float | None:
    """An epoch-seconds instant from a message field (``None`` when absent or not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class ChannelInputs:
    """See the module docstring."""

    def __init__(
        self,
        *,
        decisions: Decisions,
        frames: FramePush,
        writer: JournalWriter,
        inbox: CandidateInbox,
        composing: ComposingWatch,
    ) -> None:
        self._decisions = decisions
        self._frames = frames
        self._writer = writer
        self._inbox = inbox
        self._composing = composing
        self._media_reconnects = 0

    async def on_channel_input(self, kind: str, fields: Mapping[str, object]) -> None:
        """One message from the session's bot group (module docstring)."""
        input_id = self._inbox.accept(fields)
        if input_id == "":
            return  # seen before: dropped by its id
        ids = (input_id,) if input_id else ()
        if kind == "candidate_ready":
            await proctoring.candidate_ready(self._decisions)
            if input_id:  # marked once its decision is stored (it queues behind it)
                self._decisions.after_earlier(lambda: self._writer.record([], ids))
        elif kind in proctoring.HANDLED:
            await proctoring.handle(self._decisions, kind, fields)
        elif kind == "candidate_text":
            text = str(fields.get("text", "")).strip()
            if text:
                confidence = _number(fields.get("confidence", 1.0))
                frame = typed_answer_frame(
                    text,
                    min(1.0, max(0.0, confidence)),
                    input_id=input_id,
                    sent_at=_instant(fields.get(RECEIVED_AT)),
                )
                self._inbox.in_flight(input_id)
                await self._frames.push(frame)
        elif kind == "candidate_correction":
            correction = correction_input(fields)
            if correction is not None:
                self._decisions.post(
                    correction,
                    input_ids=ids,
                    on_refused=lambda why: self._correction_refused(correction, input_id, why),
                )
        elif kind == "candidate_activity":
            self._composing.signal(fields.get("active") is True)
        elif kind == "presence_changed":
            if not self._decisions.closed:
                self._decisions.after_earlier(self._fold_stored)
        elif kind == "command":
            self._decisions.post(command_input(fields), input_ids=ids)

    def _correction_refused(
        self, correction: TranscriptCorrection, input_id: str | None, why: InvalidInputError
    ) -> None:
        """The controller refused a correction the page was told was received (the exam had
        moved on from the misheard answer, or it was corrected already): stored as a
        ``system_error`` the candidate sees (their words and the reason kept in its details
        for the record), so the page does not wait on it."""
        refusal = p.SystemErrorPayload(
            code=CORRECTION_REFUSED,
            message=f"correction refused: {why}"[:2000],
            component="other",
            severity="warning",
            userMessage=CORRECTION_REFUSED_MESSAGE,
            details={
                "inputId": input_id,
                "turnIds": list(correction.turn_ids),
                "text": correction.text[:2000],
            },
        )
        stored = asyncio.ensure_future(self._decisions.submit_foreign([refusal]))
        stored.add_done_callback(log_failure)

    async def media_connection(
        self, status: transport_presence.Status, channel: transport_presence.Channel
    ) -> None:
        """The candidate's voice transport came or went: stored as
        ``candidate_connection_changed`` (while the exam runs), then the controller decides
        (it pauses after the grace period, resumes on return: ``ioa.runtime.absence``)."""
        state = self._writer.journal.controller.state
        if state.completed or state.exam_state not in RUNNING:
            return
        if status == "connected":
            if channel not in state.offline:
                return  # the first connection, or already back
            self._media_reconnects += 1
        event = p.CandidateConnectionChanged(
            status=status, reconnects=self._media_reconnects, channel=channel
        )
        try:
            await self._decisions.submit_foreign([event])
        except Exception:
            logger.exception("bot %s: connection change not stored", self._decisions.session_id)
            return
        self._decisions.post(Tick())

    async def _fold_stored(self) -> None:
        """Fold in events the web tier stored (a connection change), then let the controller
        decide on them (its next input is this ``Tick``)."""
        await self._writer.resync()
        self._decisions.post(Tick())
