"""The LTI tool's own records (django-lti's ``lti_tool`` holds registrations, deployments, keys,
platform users, contexts and resource links).

* :class:`Placement` — a sitting placed in one LMS course: the registration, deployment and
  context (``lti_tool.LtiContext``, which names its deployment and registration) it belongs to.
  A launch from any other course never binds to the sitting (``lti.services.link_for``).
* :class:`SittingLink` — a resource link bound to a sitting through one of its placements, with
  the AGS endpoints and scopes the platform sent for it (the line item the marks go to).
* :class:`CandidateLink` — the link a candidate came through (their own launch or their
  course's roster): their grade goes to that course's line item.
* :class:`LaunchAccount` — the local account of a platform user (``lti_tool.LtiUser``).
* :class:`UsedNonce` — every accepted id token's nonce: a second launch with it is a replay.
* :class:`GradePassback` — each attempt to send a grade to the platform (posted, or refused and
  why), append-only.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Placement(models.Model):
    """A sitting placed in one course of one LMS (module docstring)."""

    class How(models.TextChoices):
        DEEP_LINK = "deep_link", "Deep Linking"
        FIRST_LAUNCH = "first_launch", "First launch with the sitting id"
        COPY = "copy", "Copy of a sitting placed elsewhere"
        ADDED = "added", "Added by an instructor of the sitting"
        MIGRATED = "migrated", "Bound before placements were recorded"

    sitting = models.ForeignKey(
        "exam_sessions.Sitting", on_delete=models.PROTECT, related_name="lti_placements"
    )
    context = models.ForeignKey(
        "lti_tool.LtiContext", on_delete=models.PROTECT, related_name="viva_placements"
    )
    how = models.CharField(max_length=16, choices=How.choices)
    placed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    copied_from = models.ForeignKey(
        "exam_sessions.Sitting",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sitting", "context"], name="lti_placement_once")
        ]

    def __str__(self) -> str:
        return f"{self.sitting} in {self.context}"


class SittingLink(models.Model):
    resource_link = models.OneToOneField(
        "lti_tool.LtiResourceLink", on_delete=models.CASCADE, related_name="viva_link"
    )
    sitting = models.ForeignKey(
        "exam_sessions.Sitting", on_delete=models.PROTECT, related_name="lti_links"
    )
    placement = models.ForeignKey(
        Placement, null=True, on_delete=models.PROTECT, related_name="links"
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


class CandidateLink(models.Model):
    """A candidate's session reached through a link (their launch, or their course's roster
    read at an instructor's launch): the session's grade goes to this course's line item."""

    session = models.ForeignKey(
        "exam_sessions.ExamSession", on_delete=models.CASCADE, related_name="lti_candidate_links"
    )
    link = models.ForeignKey(SittingLink, on_delete=models.CASCADE, related_name="candidates")
    seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "link"], name="lti_candidate_link_once")
        ]

    def __str__(self) -> str:
        return f"{self.session_id} via {self.link_id}"


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
    """One attempt to send a session's grade to one course's line item (append-only): at lock
    ``pending`` (``gradingProgress: PendingManual``, no score), at release ``score`` (the
    score and the released feedback as the comment). A refused attempt names the platform's
    answer and when the next attempt is due (``next_attempt_at``; none after the last)."""

    class Status(models.TextChoices):
        POSTED = "posted"
        FAILED = "failed"

    class Kind(models.TextChoices):
        PENDING = "pending", "Pending manual grading (no score)"
        SCORE = "score", "Released score"

    session = models.ForeignKey(
        "exam_sessions.ExamSession", on_delete=models.PROTECT, related_name="grade_passbacks"
    )
    link = models.ForeignKey(SittingLink, on_delete=models.PROTECT, related_name="passbacks")
    cycle = models.PositiveIntegerField()
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.SCORE)
    score = models.FloatField(null=True, blank=True)
    comment = models.TextField(blank=True)
    attempt = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=8, choices=Status.choices)
    http_status = models.PositiveIntegerField(null=True, blank=True)
    detail = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    posted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "posted_at", "id"]

    def __str__(self) -> str:
        return f"{self.session_id} cycle {self.cycle} {self.kind}: {self.score} ({self.status})"
