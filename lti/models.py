"""The LTI tool's own records (django-lti's ``lti_tool`` holds registrations, deployments, keys,
platform users, contexts and resource links).

* :class:`SittingLink` — a resource link bound to a sitting, with the AGS endpoints and scopes
  the platform sent for it (the line item the marks go to).
* :class:`LaunchAccount` — the local account of a platform user (``lti_tool.LtiUser``).
* :class:`UsedNonce` — every accepted id token's nonce: a second launch with it is a replay.
* :class:`GradePassback` — each score posted to the platform (or why it was not), append-only.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class SittingLink(models.Model):
    resource_link = models.OneToOneField(
        "lti_tool.LtiResourceLink", on_delete=models.CASCADE, related_name="viva_link"
    )
    sitting = models.ForeignKey(
        "exam_sessions.Sitting", on_delete=models.PROTECT, related_name="lti_links"
    )
    registration = models.ForeignKey("lti_tool.LtiRegistration", on_delete=models.PROTECT)
    ags_lineitems = models.URLField(max_length=500, blank=True)
    ags_lineitem = models.URLField(max_length=500, blank=True)
    ags_scopes = models.JSONField(default=list)
    nrps_memberships = models.URLField(max_length=500, blank=True)
    """The course's Names and Role Provisioning URL (roster sync)."""
    roster_synced_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.resource_link} → {self.sitting}"


class LaunchAccount(models.Model):
    """One local account per platform user and role (our users have one role; a person may be
    an instructor in one course and a learner in another)."""

    lti_user = models.ForeignKey(
        "lti_tool.LtiUser", on_delete=models.CASCADE, related_name="viva_accounts"
    )
    role = models.CharField(max_length=16)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lti_account"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lti_user", "role"], name="lti_account_per_role")
        ]

    def __str__(self) -> str:
        return f"{self.lti_user} → {self.user}"


class UsedNonce(models.Model):
    registration = models.ForeignKey("lti_tool.LtiRegistration", on_delete=models.CASCADE)
    nonce = models.CharField(max_length=255)
    used_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["registration", "nonce"], name="lti_nonce_once")
        ]

    def __str__(self) -> str:
        return f"nonce {self.nonce[:12]}… used {self.used_at:%Y-%m-%d %H:%M}"


class GradePassback(models.Model):
    class Status(models.TextChoices):
        POSTED = "posted"
        FAILED = "failed"

    session = models.ForeignKey(
        "exam_sessions.ExamSession", on_delete=models.PROTECT, related_name="grade_passbacks"
    )
    link = models.ForeignKey(SittingLink, on_delete=models.PROTECT, related_name="passbacks")
    cycle = models.PositiveIntegerField()
    score = models.FloatField()
    status = models.CharField(max_length=8, choices=Status.choices)
    detail = models.TextField(blank=True)
    posted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "posted_at", "id"]

    def __str__(self) -> str:
        return f"{self.session_id} cycle {self.cycle}: {self.score} ({self.status})"
