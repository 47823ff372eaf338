"""Marking: requests for marking, enqueued when a session completes.

Issue 10 adds the marker itself; for now a :class:`MarkingRequest` records that a completed
session awaits marking (one row per session, written idempotently by ``marking.tasks``).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class MarkingRequest(models.Model):
    """A completed session waiting to be marked."""

    class Status(models.TextChoices):
        REQUESTED = "requested"

    id = models.BigAutoField(primary_key=True)
    session = models.OneToOneField(
        "exam_sessions.ExamSession", on_delete=models.PROTECT, related_name="marking_request"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.REQUESTED)
    requested_at = models.DateTimeField(default=timezone.now)
    completed_seq = models.PositiveBigIntegerField(null=True, blank=True)
    """The seq of the session's ``exam_completed`` event."""
    deliveries = models.PositiveIntegerField(default=1)
    """How many times the task ran for this session (re-deliveries are no-ops otherwise)."""

    class Meta:
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        return f"Marking request for {self.session_id} ({self.status})"
