"""The events an integrator can subscribe to, and the body every delivery carries.

Bodies follow the Standard Webhooks shape, ``{"type", "timestamp", "data"}``, and carry
identifiers and facts only, never a person's name, email, answers or a proctor's free-text reason:
an integrator reads more through the REST API with its own token, under its own permissions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

from django.db import models


class WebhookEvent(models.TextChoices):
    EXAM_COMPLETED = "exam.completed", "Exam completed"
    MARKS_LOCKED = "marks.locked", "Marks locked"
    IRREGULARITY_REPORTED = "irregularity.reported", "Irregularity reported"


def body(*, event: str, occurred_at: datetime, data: Mapping[str, object]) -> str:
    """The JSON text of a delivery (compact, keys sorted: the exact bytes that are signed)."""
    document = {"type": event, "timestamp": occurred_at.isoformat(), "data": data}
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
