"""The bot's side of ``sessions.bot_port``: what the exam room and the proctor's page ask of the
examiner, answered from here and registered by ``BotConfig.ready()``."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.utils import timezone

from bot.models import BotLease
from bot.selectors import start_queue
from bot.services import bot_start
from bot.speech_providers import resolve_speech
from bot.voice.languages import offline_stt_available
from sessions.bot_port import BotHealth, StartWait
from sessions.models import ExamSession


class SessionExaminerBot:
    """``sessions.bot_port.ExaminerBot`` over ``bot.services`` and the speech settings."""

    def start(self, *, session: ExamSession) -> None:
        bot_start(session=session)

    def hears(self, language: str) -> bool:
        """A hosted STT provider is asked for any language; the offline STT has an English model
        only (``bot.voice.languages``), so a German exam on it is answered in text."""
        if resolve_speech("stt").offline:
            return offline_stt_available(language)
        return True

    def listen_in_configured(self) -> bool:
        try:
            from bot.livekit import livekit_configured  # Pipecat's LiveKit transport
        except ImportError:  # a deployment without the bot's voice requirements
            return False
        return livekit_configured()

    def health(self, session_ids: Iterable[uuid.UUID | str]) -> dict[str, BotHealth]:
        """From the leases (``bot.lease``): live = running and not expired."""
        now = timezone.now()
        rows = BotLease.objects.filter(session_id__in=list(session_ids)).values_list(
            "session_id", "state", "expires_at"
        )
        return {
            str(session_id): BotHealth(
                state=state, live=state == BotLease.State.RUNNING and expires > now
            )
            for session_id, state, expires in rows
        }

    def start_wait(self, session_id: uuid.UUID) -> StartWait | None:
        """From the leases and the workers' reports (``bot.selectors.start_queue``)."""
        queue = start_queue(session_id=session_id, now=timezone.now())
        if queue is None:
            return None
        return StartWait(position=queue.position, workers=queue.workers, full=queue.full)
