"""The port through which sessions reaches its examiner bot without importing it.

``bot`` sits above ``sessions`` (docs/architecture.md, "Dependency direction"): the bot imports
the event store and the session models; sessions never imports the bot. Where the exam room or
the proctor's page must ask the bot for something — start a session's examiner, whether speech
recognition exists for a language, whether LiveKit is configured for listening in, whether a
session's bot is live — it asks the
:class:`ExaminerBot` that ``bot``'s ``AppConfig.ready()`` registered here. When none is
registered (a web tier without the bot app) :func:`examiner_bot` returns ``None`` and the
callers answer as they would for a bot that cannot: no start, text only, no listening in.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from sessions.models import ExamSession


@dataclass(frozen=True, slots=True)
class BotHealth:
    """A session's bot as the proctor's overview needs it: its lease state (``none`` when no bot
    was ever started) and whether it is live now (running, lease not expired)."""

    state: str = "none"
    live: bool = False


@dataclass(frozen=True, slots=True)
class StartWait:
    """A session whose examiner waits for a free worker: its place in the queue (1 = next) and
    whether every running worker is full, or none is running (``workers`` 0)."""

    position: int
    workers: int
    full: bool


class ExaminerBot(Protocol):
    """What sessions asks of the examiner bot."""

    def start(self, *, session: ExamSession) -> None:
        """Make sure the session has a running examiner (idempotent: a live bot is left
        alone). Raises when the start cannot be requested (a misconfigured provider, the broker
        is down)."""

    def hears(self, language: str) -> bool:
        """Whether speech in ``language`` (a BCP 47 code) can be recognised here."""

    def listen_in_configured(self) -> bool:
        """Whether the voice transport proctors listen in over (LiveKit) is configured."""

    def health(self, session_ids: Iterable[uuid.UUID | str]) -> dict[str, BotHealth]:
        """Per session id (str) that has a bot lease: its :class:`BotHealth`."""

    def start_wait(self, session_id: uuid.UUID) -> StartWait | None:
        """Where the session's requested examiner stands while no worker has taken it
        (``None`` once it runs, or when none was requested)."""


_registered: list[ExaminerBot] = []


def register(bot: ExaminerBot) -> None:
    """Install the examiner bot (``bot.apps.BotConfig.ready``); a second call replaces it."""
    _registered[:] = [bot]


def examiner_bot() -> ExaminerBot | None:
    """The registered examiner bot, or ``None`` when no bot app is installed."""
    return _registered[0] if _registered else None


def bot_health(session_ids: Iterable[uuid.UUID | str]) -> dict[str, BotHealth]:
    """Per session id (str): its bot's health, as the registered bot says (sessions without a
    lease, or every session when no bot is registered, are absent: ``BotHealth()``)."""
    bot = examiner_bot()
    return bot.health(session_ids) if bot is not None else {}
