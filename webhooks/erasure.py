"""Webhooks' part of a personal-data erasure (docs/privacy.md), run inside the erasure's
transaction (``sessions.signals.personal_data_erased``, connected in ``WebhooksConfig.ready()``).

A delivery's body names objects and enumerated facts only (``webhooks.receivers``: ids, seq,
the completion reason, an irregularity's category, a cycle), never a person's name, email or
words, so bodies stay: they are what was signed and sent. What an integrator answered
(``WebhookAttempt.response_excerpt``) is theirs to word and may name the candidate; for every
delivery about the session it becomes the marker (status codes and times stay)."""

from __future__ import annotations

import uuid

from ioa.events.personal import ERASED_TEXT
from sessions import signals
from webhooks.models import WebhookAttempt


def on_personal_data_erased(*, session_id: uuid.UUID, **_: object) -> None:
    """Replace the integrators' answers to the session's deliveries by the marker."""
    WebhookAttempt.objects.filter(delivery__body__contains=f'"{session_id}"').exclude(
        response_excerpt=""
    ).update(response_excerpt=ERASED_TEXT)


def connect() -> None:
    """Subscribe (idempotent: the dispatch uid keeps one connection)."""
    signals.personal_data_erased.connect(
        on_personal_data_erased, dispatch_uid="webhooks.personal_data_erased"
    )
