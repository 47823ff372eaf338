"""Marking: the compiled marking scheme, marks, the decision history, moderation and appeals.

* :class:`MarkingScheme` — the IR's third compilation target (``ioa.marking.compile_marking``)
  stored with the published version it was compiled from (one per version and compiler
  version; immutable). Stored rather than recomputed so marks keep pointing at the exact scheme
  they used, even after the rules' defaults change (``docs/marking.md``).
* :class:`MarkingRequest` — a completed session awaiting marking; counts task deliveries.
* :class:`SessionMark` — one session's marks: the deterministic result (JSON, checksummed),
  the current (moderated) score and the moderation state. Mutable only through
  ``marking.services``.
* :class:`TargetDecision` — append-only history of levels per target: the marker's decision
  (number 1) and every override after it. Never updated or deleted: the current level is the
  latest decision, and every earlier one stays visible.
* :class:`SecondMark`, :class:`PanelRun`, :class:`Appeal`, :class:`MarkingAuditEntry` — the
  second marker's independent levels, the LLM panel's run, appeals, and the audit trail.
* :class:`PostMarkingIrregularity` — a proctor's irregularity report stored after the session
  was marked (the marks' result covers the log up to ``SessionMark.marked_seq`` only), and
  whether it arrived after the marks were locked. Append-only.
* :class:`PracticeFeedback` — the formative feedback of a practice attempt
  (docs/spec/practice-sittings.md): the marker's level per target, kept apart from marks, so no
  list, export, statistic, moderation, release, grade or webhook can see it. Append-only.

Visibility: :meth:`SessionMarkQuerySet.visible_to` (authors: sessions of versions of drafts
they own or collaborate on; admins: all; everyone else: none).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import Requester
from publishing.models import PublishedVersion

LEVEL_CHOICES = [
    ("excellent", "Excellent"),
    ("satisfactory", "Satisfactory"),
    ("partial", "Partial"),
    ("absent", "Absent"),
]


class ImmutableMarkingRecord(Exception):
    """Raised on an attempt to change or delete an append-only marking record."""


class AppendOnlyQuerySet[M: models.Model](models.QuerySet[M]):
    def update(self, **kwargs: object) -> int:
        raise ImmutableMarkingRecord(f"{self.model.__name__} rows are append-only")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ImmutableMarkingRecord(f"{self.model.__name__} rows are append-only")


class AppendOnly(models.Model):
    """Rows are inserted once and never changed."""

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    # Any: django-stubs types Model.save's arguments, forwarded here, as Any.
    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ImmutableMarkingRecord(f"{type(self).__name__} {self.pk} is append-only")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise ImmutableMarkingRecord(f"{type(self).__name__} rows are append-only")


class MarkingScheme(AppendOnly):
    """The marking configuration compiled from a published version."""

    id = models.BigAutoField(primary_key=True)
    version = models.ForeignKey(
        "publishing.PublishedVersion", on_delete=models.PROTECT, related_name="marking_schemes"
    )
    compiler_version = models.CharField(max_length=40)
    config_json = models.TextField()
    """Canonical JSON of ``MarkingConfig.to_dict()``."""
    checksum = models.CharField(max_length=80)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["version", "compiler_version"], name="marking_scheme_unique_version"
            )
        ]

    def __str__(self) -> str:
        return f"Marking scheme of {self.version_id} ({self.compiler_version})"


class MarkingRequest(models.Model):
    """A completed session waiting to be (or having been) marked."""

    class Status(models.TextChoices):
        REQUESTED = "requested"
        MARKED = "marked"
        FAILED = "failed"

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
    error = models.TextField(blank=True)
    marked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        return f"Marking request for {self.session_id} ({self.status})"


class SessionMarkQuerySet(models.QuerySet["SessionMark"]):
    def visible_to(self, user: Requester) -> SessionMarkQuerySet:
        """Marks a user may see: an author those of sessions of versions of drafts they own or
        collaborate on; an admin all; everyone else none (their requests answer 404). Never a
        practice attempt's (none is ever stored: ``PracticeFeedback`` holds its feedback)."""
        if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
            return self.none()
        role = getattr(user, "role", None)
        if role == "admin":
            return self.exclude(session__sitting__is_practice=True)
        if role == "author":
            versions = PublishedVersion.objects.filter(
                models.Q(draft__owner=user) | models.Q(draft__collaborators=user)
            ).values("pk")
            return self.filter(session__sitting__version__in=versions).exclude(
                session__sitting__is_practice=True
            )
        return self.none()


class SessionMark(models.Model):
    """One session's marks and their moderation state."""

    class State(models.TextChoices):
        PROPOSED = "proposed", "Proposed"
        NEEDS_REVIEW = "needs_review", "Needs review"
        LOCKED = "locked", "Locked"
        APPEALED = "appealed", "Reopened on appeal"

    id = models.BigAutoField(primary_key=True)
    session = models.OneToOneField(
        "exam_sessions.ExamSession", on_delete=models.PROTECT, related_name="mark"
    )
    scheme = models.ForeignKey(MarkingScheme, on_delete=models.PROTECT, related_name="marks")
    result_json = models.JSONField()
    """The deterministic marker's ``MarkingResult.to_dict()``."""
    result_checksum = models.CharField(max_length=80)
    marked_seq = models.PositiveBigIntegerField()
    """The last seq of the log the marks were computed from."""
    proposed_score = models.FloatField()
    """The deterministic exam score in [0, 1]."""
    final_score = models.FloatField()
    """The exam score with the current (moderated) levels, in [0, 1]."""
    state = models.CharField(max_length=16, choices=State.choices, default=State.PROPOSED)
    review_flags = models.PositiveIntegerField(default=0)
    second_marking_required = models.BooleanField(default=False)
    cycle = models.PositiveIntegerField(default=1)
    """1, then +1 for every appeal that reopens the lock (second marks belong to a cycle)."""
    locked_at = models.DateTimeField(null=True, blank=True)
    locked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = SessionMarkQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Marks of {self.session_id} ({self.state})"

    @property
    def locked(self) -> bool:
        return self.state == self.State.LOCKED


class TargetDecision(AppendOnly):
    """A level for one target: the marker's (number 1) or a moderator's override."""

    class Source(models.TextChoices):
        MARKER = "marker", "Deterministic marker"
        OVERRIDE = "override", "Moderator override"

    id = models.BigAutoField(primary_key=True)
    mark = models.ForeignKey(SessionMark, on_delete=models.PROTECT, related_name="decisions")
    target_key = models.CharField(max_length=200)
    number = models.PositiveIntegerField()
    level = models.CharField(max_length=16, choices=LEVEL_CHOICES)
    source = models.CharField(max_length=16, choices=Source.choices)
    rationale = models.TextField()
    evidence = models.JSONField(default=dict)
    """The marker's decision (rules, signals, turns) or, for an override, what it replaced."""
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["mark", "target_key", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["mark", "target_key", "number"], name="target_decision_unique_number"
            )
        ]

    def __str__(self) -> str:
        return f"{self.target_key} #{self.number}: {self.level} ({self.source})"


class SecondMark(AppendOnly):
    """A second marker's independent level for one target in one moderation cycle."""

    id = models.BigAutoField(primary_key=True)
    mark = models.ForeignKey(SessionMark, on_delete=models.PROTECT, related_name="second_marks")
    cycle = models.PositiveIntegerField()
    target_key = models.CharField(max_length=200)
    level = models.CharField(max_length=16, choices=LEVEL_CHOICES)
    rationale = models.TextField(blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["mark", "cycle", "target_key", "created_at"]

    def __str__(self) -> str:
        return f"Second mark {self.target_key}: {self.level}"


class PanelRun(models.Model):
    """The LLM marking panel's run for one session (or why it did not run)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        COMPLETED = "completed"
        SKIPPED = "skipped"
        FAILED = "failed"

    id = models.BigAutoField(primary_key=True)
    mark = models.OneToOneField(SessionMark, on_delete=models.PROTECT, related_name="panel")
    status = models.CharField(max_length=16, choices=Status.choices)
    notice = models.TextField(blank=True)
    result_json = models.JSONField(null=True, blank=True)
    alpha_round1 = models.FloatField(null=True, blank=True)
    alpha_round2 = models.FloatField(null=True, blank=True)
    routed = models.JSONField(default=list)
    """Target keys routed to human moderation."""
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Panel for {self.mark_id}: {self.status}"


class Appeal(models.Model):
    """An appeal that reopened a locked mark."""

    id = models.BigAutoField(primary_key=True)
    mark = models.ForeignKey(SessionMark, on_delete=models.PROTECT, related_name="appeals")
    reason = models.TextField()
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    opened_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    outcome = models.TextField(blank=True)

    class Meta:
        ordering = ["mark", "opened_at"]

    def __str__(self) -> str:
        return f"Appeal on {self.mark_id} ({'open' if self.closed_at is None else 'closed'})"

    @property
    def open(self) -> bool:
        return self.closed_at is None


class ResultRelease(AppendOnly):
    """Staff released a moderation cycle's locked marks to the candidate (a deliberate act;
    also a ``result_released`` session event and an audit entry). The candidate sees their
    result while the marks are locked and their current cycle has a release."""

    id = models.BigAutoField(primary_key=True)
    mark = models.ForeignKey(SessionMark, on_delete=models.PROTECT, related_name="releases")
    cycle = models.PositiveIntegerField()
    final_score = models.FloatField()
    feedback = models.CharField(max_length=16)
    """What the candidate is shown (``marking.feedback``), fixed at release."""
    released_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    released_at = models.DateTimeField(default=timezone.now)
    event_id = models.UUIDField()
    """The ``result_released`` event's id."""

    class Meta:
        ordering = ["mark", "cycle"]
        constraints = [
            models.UniqueConstraint(fields=["mark", "cycle"], name="result_release_once_per_cycle")
        ]

    def __str__(self) -> str:
        return f"Release of {self.mark_id} (cycle {self.cycle})"


class MarkingAuditEntry(AppendOnly):
    """Who did what to a session's marks, when and why."""

    class Action(models.TextChoices):
        MARKED = "marked"
        PANEL_COMPLETED = "panel_completed"
        PANEL_SKIPPED = "panel_skipped"
        PANEL_FAILED = "panel_failed"
        OVERRIDE = "override"
        SECOND_MARKING = "second_marking"
        SECOND_MARK = "second_mark"
        LOCKED = "locked"
        APPEAL_OPENED = "appeal_opened"
        RESULT_RELEASED = "result_released", "Result released to the candidate"
        IRREGULARITY_REPORTED = "irregularity_reported", "Irregularity reported after marking"
        IRREGULARITY_AFTER_LOCK = "irregularity_after_lock", "Irregularity reported after lock"
        PERSONAL_DATA_ERASED = "personal_data_erased", "Personal data erased"

    id = models.BigAutoField(primary_key=True)
    mark = models.ForeignKey(SessionMark, on_delete=models.PROTECT, related_name="audit")
    action = models.CharField(max_length=24, choices=Action.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.TextField(blank=True)
    details = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["mark", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.action} on {self.mark_id}"


class PostMarkingIrregularity(AppendOnly):
    """A proctor's irregularity report (``proctor_action`` / ``flag_irregularity``) stored in the
    session log after the session was marked.

    The stored result (``SessionMark.result_json``) is the marker's verdict on the log up to
    ``marked_seq`` and stays so (re-marking that log reproduces it); a later report is kept here
    with the marker's reading of it (``report``: ``ioa.marking.IrregularityReport.to_dict()``)
    and counted as a review flag. One row per stored event (``event_id`` is unique per mark):
    a re-delivered event or task records nothing twice.
    """

    id = models.BigAutoField(primary_key=True)
    mark = models.ForeignKey(
        SessionMark, on_delete=models.PROTECT, related_name="post_marking_irregularities"
    )
    event_id = models.CharField(max_length=64)
    """The ``eventId`` of the stored ``proctor_action`` event."""
    seq = models.PositiveBigIntegerField()
    category = models.CharField(max_length=16, blank=True)
    actor = models.CharField(max_length=200)
    """The proctor as the event names them (``user:<id>``)."""
    reason = models.TextField(blank=True)
    node_id = models.CharField(max_length=200, blank=True)
    reported_at = models.DateTimeField()
    """The event's timestamp."""
    report = models.JSONField()
    after_lock = models.BooleanField()
    """The marks were locked when it arrived: they were not changed (an appeal reopens them)."""
    cycle = models.PositiveIntegerField()
    """The moderation cycle it arrived in."""
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["mark", "seq"]
        constraints = [
            models.UniqueConstraint(
                fields=["mark", "event_id"], name="post_marking_irregularity_unique_event"
            )
        ]

    def __str__(self) -> str:
        return f"Irregularity {self.category or '-'} at seq {self.seq} on {self.mark_id}"


class PracticeFeedback(AppendOnly):
    """The formative feedback of one practice attempt (docs/spec/practice-sittings.md): the
    deterministic marker's level per evidence target, and nothing else of its result (no
    rationale, rule, signal, evidence or score). Not a mark: it is never moderated, released,
    exported, counted in a cohort, sent to an LMS or told to a webhook."""

    id = models.BigAutoField(primary_key=True)
    session = models.OneToOneField(
        "exam_sessions.ExamSession", on_delete=models.PROTECT, related_name="practice_feedback"
    )
    scheme = models.ForeignKey(MarkingScheme, on_delete=models.PROTECT, related_name="+")
    targets = models.JSONField(default=list)
    """``[{"key", "label", "level"}]`` in the scheme's target order."""
    marked_seq = models.PositiveBigIntegerField()
    """The last seq of the log the feedback was computed from."""
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"Practice feedback of {self.session_id}"
