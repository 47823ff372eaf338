"""Starting a session's examiner bot from Django (no Pipecat import here).

``bot_start(session=...)`` is idempotent: it launches a bot only when the session is not over,
no bot holds a live lease on it, and no start is already pending (``bot.lease.request_start``).
The launch happens after the surrounding transaction commits, on the runner
``VIVA_BOT_RUNNER`` names: ``inline`` (an asyncio task in this ASGI process) or ``celery`` (the
``bots`` queue).
"""

from __future__ import annotations

import enum
import uuid

from django.db import transaction

from bot.conf import bot_settings
from bot.lease import request_start
from bot.providers import resolve
from sessions.models import ExamSession

INLINE_GRACE_SECONDS = 30.0
"""How long an inline start may take before another ``bot_start`` may try again."""


class StartResult(enum.StrEnum):
    STARTED = "started"
    """A bot is being launched."""
    ALREADY_RUNNING = "already_running"
    """A bot holds the session, or a start is pending."""
    FINISHED = "finished"
    """The exam is over."""


def bot_start(*, session: ExamSession | uuid.UUID | str) -> StartResult:
    """Make sure the session has a running bot (module docstring).

    Raises ``bot.providers.ProviderError`` when the LLM provider is misconfigured (for example
    the offline rehearsal examiner outside development)."""
    session_id = session.pk if isinstance(session, ExamSession) else uuid.UUID(str(session))
    config = bot_settings()
    resolve(config)  # fail here, not in the worker, on a misconfigured provider
    grace = config.start_grace_seconds if config.runner == "celery" else INLINE_GRACE_SECONDS
    with transaction.atomic():
        state = ExamSession.objects.filter(pk=session_id).values_list("state", flat=True).first()
        if state is None:
            raise ExamSession.DoesNotExist(f"no exam session {session_id}")
        if not request_start(session_id=session_id, runner=config.runner, grace_seconds=grace):
            from bot.lease import TERMINAL

            return StartResult.FINISHED if state in TERMINAL else StartResult.ALREADY_RUNNING
        if config.runner == "celery":
            from bot.tasks import run_session_bot

            transaction.on_commit(lambda: run_session_bot.delay(str(session_id)))
        else:
            from bot.runners import start_inline

            transaction.on_commit(lambda: start_inline(session_id))
    return StartResult.STARTED
