"""The bot's side of the durable inbox (``sessions.inbox``; no Pipecat here).

:class:`CandidateInbox` belongs to one :class:`~bot.examiner.ExaminerCore` (its
:class:`InboxOwner`):

* :meth:`~CandidateInbox.accept` drops an input whose ``inputId`` this bot has already taken
  (a re-delivered frame, or one read from the inbox and then received live);
* :meth:`~CandidateInbox.poll` reads the inputs the bot has not processed from the database and
  feeds those it has not taken yet, oldest first: when the bot opens (so a resumed bot first
  consumes what waited while it was down), at every heartbeat (a forwarded message can be lost:
  the channel layer is best effort) and before a timer fires;
* :meth:`~CandidateInbox.tick_due` is where the controller's timer lands: the ``Tick`` is held
  back while a candidate input is on its way to the controller (taken, not yet decided) or waits
  in the inbox, so no silence prompt (nor any other timer) overtakes an answer the candidate
  has already sent. An input is held for at most :data:`HOLD_SECONDS` (one that the pipeline
  dropped must not stop the exam's clocks).

:func:`unanswered_turn` finds a stored answer the examiner never responded to (the bot died
between storing it and answering it), so the resumed bot answers it.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

from bot.journal import DbThreads
from ioa.events import EventEnvelope
from ioa.events import payloads as p
from ioa.runtime import RuntimeInput, Tick
from sessions.inbox import pending_inputs

logger = logging.getLogger(__name__)

HOLD_SECONDS: Final = 30.0
"""How long a taken-but-undecided input holds the controller's timers back."""
RECHECK_SECONDS: Final = 1.0
"""How soon a held timer is looked at again."""
ANSWERED_BY: Final = (
    p.ExaminerUtteranceStarted,
    p.ExaminerUtteranceFinal,
    p.TransitionDecision,
)
"""Events that show the examiner responded to what the candidate said before them: an
utterance that began to play (not a bridge; as the runtime's ``answered_upto``), or leaving the
node. Not ``evidence_signal`` nor ``follow_up_used``: they are stored when the examiner decides
its reply, and a bot that dies before the reply plays takes it along (the chaos run's drained
worker, issue #33); the resumed bot runs the turn again, at the price of a second follow-up
counted for one answer."""


class InboxOwner(Protocol):
    """What the inbox needs of the examiner it belongs to (``bot.examiner.ExaminerCore``)."""

    @property
    def session_id(self) -> uuid.UUID: ...

    @property
    def db(self) -> DbThreads: ...

    @property
    def closed(self) -> bool: ...

    async def on_channel_input(self, kind: str, fields: Mapping[str, object]) -> None: ...

    def post(self, item: RuntimeInput, *, input_ids: tuple[str, ...] = ()) -> None: ...


class CandidateInbox:
    """See the module docstring."""

    def __init__(self, core: InboxOwner) -> None:
        self._core = core
        self._taken: dict[str, float] = {}
        self._undecided: dict[str, float] = {}
        self._polling: asyncio.Lock = asyncio.Lock()

    def accept(self, fields: Mapping[str, object]) -> str | None:
        """The input's id if it is new (now taken), ``""`` if it was taken before, ``None``
        for an input without an id (not from the inbox)."""
        raw = fields.get("inputId")
        if not isinstance(raw, str) or not raw:
            return None
        if raw in self._taken:
            return ""
        self._taken[raw] = time.monotonic()
        return raw

    def in_flight(self, input_id: str | None) -> None:
        """A taken answer is on its way through the pipeline to the controller."""
        if input_id:
            self._undecided[input_id] = time.monotonic()

    def delivered(self, input_id: str | None) -> None:
        """The controller has the input (decided, or failed before deciding)."""
        if input_id:
            self._undecided.pop(input_id, None)

    async def poll(self) -> list[str]:
        """Feed the unprocessed inputs this bot has not taken; returns the ids still waiting
        (taken less than :data:`HOLD_SECONDS` ago or just fed)."""
        core = self._core
        async with self._polling:
            pending = await core.db.run(core.session_id, pending_inputs, session_id=core.session_id)
            for item in pending:
                if item.input_id not in self._taken:
                    fields = {**item.fields, "inputId": item.input_id}
                    await core.on_channel_input(item.kind, fields)
        now = time.monotonic()
        return [
            i.input_id for i in pending if now - self._taken.get(i.input_id, now) < HOLD_SECONDS
        ]

    def _holding(self) -> bool:
        now = time.monotonic()
        return any(now - at < HOLD_SECONDS for at in self._undecided.values())

    def tick_due(self) -> None:
        """The controller's next deadline has come (module docstring)."""
        if self._core.closed:
            return
        if self._holding():
            self._recheck()
            return
        asyncio.get_running_loop().create_task(self._tick_unless_waiting())

    def _recheck(self) -> None:
        asyncio.get_running_loop().call_later(RECHECK_SECONDS, self.tick_due)

    async def _tick_unless_waiting(self) -> None:
        try:
            waiting = await self.poll()
        except Exception:
            logger.exception("bot %s: the inbox could not be read", self._core.session_id)
            waiting = []
        if self._core.closed:
            return
        if waiting or self._holding():
            self._recheck()
            return
        self._core.post(Tick())


def unanswered_turn(events: Sequence[EventEnvelope], node_id: str | None) -> str | None:
    """What the candidate said in the latest visit of ``node_id`` after the examiner last
    responded (``None`` if nothing): a stored answer the bot died before answering."""
    if node_id is None:
        return None
    start = 0
    for index, event in enumerate(events):
        if isinstance(event.payload, p.NodeEntered) and event.payload.nodeId == node_id:
            start = index
    said: list[str] = []
    for event in events[start:]:
        payload = event.payload
        if isinstance(payload, p.TranscriptFinal) and payload.speaker == "candidate":
            said.append(payload.text)
        elif isinstance(payload, ANSWERED_BY) and getattr(payload, "purpose", None) != "bridge":
            said = []  # linking words ("Welcome back.") answer nothing (runtime: answered_upto)
    return " ".join(said) or None
