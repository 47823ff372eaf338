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
from typing import Final

from django.db import transaction
from django.utils import timezone

from bot.conf import bot_settings
from bot.lease import request_start
from bot.models import BotLease
from bot.providers import resolve
from sessions.models import ExamSession

INLINE_GRACE_SECONDS = 30.0
"""How long an inline start may take before another ``bot_start`` may try again."""


PUBLISH_RETRY: Final = {"max_retries": 1, "interval_start": 0, "interval_step": 0.3}
"""A start is put on the broker with one quick retry: a broker outage is reported in well under
a second, never by a page that hangs."""


class BotServiceUnavailable(Exception):
    """The start could not be queued (the broker is down). The request is left claimable, so the
    supervisor of any worker launches the bot once the broker is back; the caller says so
    (503)."""


def _enqueue(session_id: uuid.UUID) -> None:
    from bot.tasks import BOTS_QUEUE, run_session_bot

    try:
        run_session_bot.apply_async(
            (str(session_id),), queue=BOTS_QUEUE, retry=True, retry_policy=PUBLISH_RETRY
        )
    except Exception as exc:
        # Leave the start request expired: the next bot_start, or any worker's supervisor once
        # the broker is back, launches it (never a session stuck for the start grace).
        BotLease.objects.filter(session_id=session_id, state=BotLease.State.STARTING).update(
            expires_at=timezone.now()
        )
        raise BotServiceUnavailable(f"the bot service cannot be reached: {exc}") from exc


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
            transaction.on_commit(lambda: _enqueue(session_id))
        else:
            from bot.runners import start_inline

            transaction.on_commit(lambda: start_inline(session_id))
    return StartResult.STARTED
