"""The bot's part of a personal-data erasure (docs/privacy.md), run inside the erasure's
transaction (``sessions.signals.personal_data_erased``, connected in ``BotConfig.ready()``):
the session's lease keeps its state and times, and its last error (an exception's text, which
can quote what the candidate said: a provider's or a validator's message) becomes the marker."""

from __future__ import annotations

import uuid

from bot.models import BotLease
from ioa.events.personal import ERASED_TEXT
from sessions import signals


def on_personal_data_erased(*, session_id: uuid.UUID, **_: object) -> None:
    """Replace the session's lease's last error by the marker."""
    BotLease.objects.filter(session_id=session_id).exclude(last_error="").update(
        last_error=ERASED_TEXT
    )


def connect() -> None:
    """Subscribe (idempotent: the dispatch uid keeps one connection)."""
    signals.personal_data_erased.connect(
        on_personal_data_erased, dispatch_uid="bot.personal_data_erased"
    )
