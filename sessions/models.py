"""Sittings, exam sessions and the session event store.

* :class:`Sitting` — a published version scheduled for candidates, with its proctors.
* :class:`ExamSession` — one candidate's exam. ``last_seq``, ``head_hash`` (and
  ``prev_head_hash``, the hash before it) are the head of the session's event log and change
  only through ``sessions.event_store``; ``state`` is the exam state (spec-notes §2), projected
  from ``exam_state_changed`` events by the same service.
* :class:`SessionEvent` — one stored event (append-only, immutable). Unique per session on
  ``event_id`` (idempotency, chapter 05 §6.2) and on ``seq`` (ordering, §6.1); ``hash`` /
  ``prev_hash`` form the tamper-evident chain of ``ioa.events.hashchain``.
* :class:`ProcessedCommand` — the command deduplication record (``sessions.commands``).
* :class:`CandidateInput` — the durable inbox (``sessions.inbox``): every candidate input,
  stored under its client-generated id before the bot sees it.

Visibility lives in :meth:`ExamSessionQuerySet.visible_to`.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Now
from django.utils import timezone

from accounts.models import Requester, User
from ioa.events import GENESIS_HASH, ExamState, uuid7
from ioa.events.personal import CHAIN_V2


class ImmutableEventError(Exception):
    """Raised by any attempt to change or delete a stored event through the ORM."""


class SittingQuerySet(models.QuerySet["Sitting"]):
    def visible_to(self, user: Requester) -> SittingQuerySet:
        """Sittings ``user`` may see and steer, by the rule of
        :meth:`ExamSessionQuerySet.visible_to`: a proctor those they proctor; an author those of
        versions of drafts they own or collaborate on; an admin all. Candidates and anonymous
        users none (a candidate sees their own sessions, never a sitting)."""
        if not isinstance(user, User) or not user.is_active:
            return self.none()
        role = user.role
        if role == "admin":
            return self.filter(is_preview=False)
        if role == "proctor":
            return self.filter(pk__in=Sitting.objects.filter(proctors=user).values("pk"))
        if role == "author":
            drafts = models.Q(version__draft__owner=user) | models.Q(
                version__draft__collaborators=user
            )
            return self.filter(pk__in=Sitting.objects.filter(drafts, is_preview=False).values("pk"))
        return self.none()


class Sitting(models.Model):
    """A published version scheduled for a group of candidates, supervised by proctors."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    version = models.ForeignKey(
        "publishing.PublishedVersion", on_delete=models.PROTECT, related_name="sittings"
    )
    title = models.CharField(max_length=300)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="sittings_created"
    )
    proctors = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="proctored_sittings", blank=True
    )
    created_at = models.DateTimeField(default=timezone.now)
    scheduled_for = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The start window opens: no candidate may start before (empty: open now).",
    )
    start_cutoff_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Late-start cut-off: no candidate may start after (empty: no cut-off).",
    )
    proctor_authorises_start = models.BooleanField(
        default=False,
        help_text="A candidate who is ready waits until a proctor authorises the start.",
    )
    is_preview = models.BooleanField(default=False, editable=False, db_index=True)
    """The sandbox sitting of an author's exam-room preview (``sessions.previews``): never
    listed, never proctored, never exported."""
    is_practice = models.BooleanField(
        default=False,
        help_text=(
            "Practice: unlimited attempts within the start window, feedback after each attempt, "
            "never marked for the record or sent to the LMS."
        ),
    )
    """A practice sitting (docs/spec/practice-sittings.md, ``sessions.practice``): set when the
    sitting is created; its attempts get formative feedback and are never marked."""

    objects = SittingQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title


class ExamSessionQuerySet(models.QuerySet["ExamSession"]):
    def visible_to(self, user: Requester) -> ExamSessionQuerySet:
        """Sessions ``user`` may see: a candidate their own; a proctor those of sittings they
        proctor; an author those of sittings of versions of drafts they own or collaborate
        on; an admin all. Anonymous users none."""
        if not isinstance(user, User) or not user.is_active:
            return self.none()
        role = user.role
        if role == "admin":
            return self.filter(is_preview=False)
        if role == "candidate":
            return self.filter(candidate=user, is_preview=False)
        if role == "proctor":
            return self.filter(sitting__in=Sitting.objects.filter(proctors=user).values("pk"))
        if role == "author":
            drafts = models.Q(version__draft__owner=user) | models.Q(
                version__draft__collaborators=user
            )
            return self.filter(
                sitting__in=Sitting.objects.filter(drafts, is_preview=False).values("pk")
            )
        return self.none()

    def previews_of(self, user: Requester) -> ExamSessionQuerySet:
        """``user``'s own preview sessions (``sessions.previews``): an author or admin taking
        their draft in the exam room. Nobody else sees them (they are left out of
        :meth:`visible_to`, so of rosters, dashboards, exports, marking lists and the API)."""
        if not isinstance(user, User) or not user.is_active:
            return self.none()
        if user.role not in {"author", "admin"}:
            return self.none()
        return self.filter(candidate=user, is_preview=True)


class ExamSession(models.Model):
    """One candidate's exam in a sitting, and the head of its event log."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    sitting = models.ForeignKey(Sitting, on_delete=models.PROTECT, related_name="sessions")
    candidate = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="exam_sessions"
    )
    state = models.CharField(
        max_length=16,
        choices=[(s.value, s.value.replace("_", " ")) for s in ExamState],
        default=ExamState.SCHEDULED.value,
    )
    last_seq = models.PositiveBigIntegerField(default=0)
    head_hash = models.CharField(max_length=71, default=GENESIS_HASH)
    prev_head_hash = models.CharField(max_length=71, default=GENESIS_HASH)
    """The hash before ``head_hash`` (the last event's ``prev_hash``)."""
    chain_version = models.PositiveSmallIntegerField(default=CHAIN_V2, editable=False)
    """How the chain hashes personal fields (``ioa.events.personal``): 2, as seals, so they can
    be erased later; 1, in clear (sessions created before chain version 2)."""
    erased_at = models.DateTimeField(null=True, blank=True, editable=False)
    """When the session's personal data was pseudonymised (``sessions.erasure``)."""
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    # Accommodations, set by staff (``sessions.exam_room.accommodations_set``, the admin).
    extra_time_multiplier = models.DecimalField(
        max_digits=3,
        decimal_places=2,
        default=Decimal("1.00"),
        validators=[MinValueValidator(Decimal("1.00")), MaxValueValidator(Decimal("3.00"))],
        help_text="Extra time: every time budget of the exam is multiplied by this (1.00-3.00).",
    )
    text_mode_required = models.BooleanField(
        default=False, help_text="The candidate answers by typing (no microphone needed)."
    )
    slower_speech = models.BooleanField(
        default=False, help_text="The examiner speaks more slowly (voice mode)."
    )
    # The candidate's way into the exam (``sessions.exam_room``): written once per step.
    identity_confirmed_at = models.DateTimeField(null=True, blank=True, editable=False)
    consent_given_at = models.DateTimeField(null=True, blank=True, editable=False)
    consent_version = models.CharField(max_length=32, blank=True, editable=False)
    briefing_seen_at = models.DateTimeField(null=True, blank=True, editable=False)
    exam_mode = models.CharField(
        max_length=8, blank=True, editable=False, choices=[("voice", "voice"), ("text", "text")]
    )
    audio_checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The latest invitation link sent for this exam (``sessions.scheduling.invitations_send``).
    invitation = models.ForeignKey(
        "accounts.Invitation",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
    )
    invited_at = models.DateTimeField(null=True, blank=True, editable=False)
    is_preview = models.BooleanField(default=False, editable=False, db_index=True)
    """An author's preview in the exam room (``sessions.previews``): a sandbox that never
    counts: not marked, not listed, not exported, no grade passback."""
    attempt = models.PositiveIntegerField(default=1, editable=False)
    """The candidate's attempt number in the sitting: always 1 outside practice sittings."""
    follows = models.OneToOneField(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        editable=False,
        related_name="followed_by",
    )
    """The practice attempt this one repeats (``sessions.practice.practice_again``): at most one
    attempt follows another, so a repeated "Practise again" makes one attempt."""

    objects = ExamSessionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["candidate", "-created_at"])]

    def __str__(self) -> str:
        return f"Session {self.id} ({self.state})"


class WindowOverride(models.Model):
    """A per-candidate start window that replaces the sitting's (``sessions.windows``): set by
    staff with a reason, never edited (a later override supersedes it; the latest counts)."""

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        ExamSession, on_delete=models.PROTECT, related_name="window_overrides"
    )
    opens_at = models.DateTimeField(null=True, blank=True)
    start_cutoff_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"Window override for {self.session_id} ({self.reason[:40]})"


class SessionEventQuerySet(models.QuerySet["SessionEvent"]):
    def update(self, **kwargs: Any) -> int:  # Any: QuerySet.update's type
        raise ImmutableEventError("stored events are immutable; append a correcting event")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ImmutableEventError("stored events cannot be deleted")


class SessionEvent(models.Model):
    """One stored event. Written only by ``sessions.event_store``; never updated."""

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        ExamSession, on_delete=models.PROTECT, related_name="events", db_index=False
    )
    seq = models.PositiveBigIntegerField()
    event_id = models.UUIDField()
    type = models.CharField(max_length=64)
    timestamp = models.DateTimeField()
    source = models.CharField(max_length=32)
    correlation_id = models.CharField(max_length=200, blank=True, default="")
    """Empty when the event has none (``correlationId`` is never an empty string)."""
    payload = models.JSONField()
    schema_version = models.CharField(max_length=8)
    hash = models.CharField(max_length=71)
    prev_hash = models.CharField(max_length=71)
    recorded_at = models.DateTimeField(db_default=Now())
    erased = models.JSONField(null=True, blank=True, editable=False)
    """Set once, by erasure only (``sessions.erasure``; the triggers refuse anything else):
    ``{"erasure": <PersonalDataErasure id>, "seals": {field: seal}}``, the seals the chain
    keeps for the personal fields whose values were pseudonymised."""

    objects = SessionEventQuerySet.as_manager()

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            # Also the index of after_seq reads: (session, seq) range scans.
            models.UniqueConstraint(fields=["session", "seq"], name="session_event_unique_seq"),
            models.UniqueConstraint(
                fields=["session", "event_id"], name="session_event_unique_event_id"
            ),
        ]
        indexes = [
            # The metrics' recent turns and replies (sessions.reply_latency): a scrape reads the
            # last minutes of two event types, not the whole log. Partial: ~2 of ~10 events
            # per turn are in it.
            models.Index(
                fields=["timestamp"],
                name="session_event_turn_time",
                condition=models.Q(type__in=["transcript_final", "examiner_utterance_started"]),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id} #{self.seq} {self.type}"

    def save(self, *args: Any, **kwargs: Any) -> None:  # Any: Model.save's type
        if not self._state.adding:
            raise ImmutableEventError(f"stored event {self.pk} is immutable")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    # Any: Model.delete's type
    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ImmutableEventError("stored events cannot be deleted")


class ProcessedCommand(models.Model):
    """A command the session has seen: deduplication by ``(session, command_id)``."""

    class Outcome(models.TextChoices):
        ACCEPTED = "accepted"
        REFUSED = "refused"
        INVALID = "invalid"
        FAILED = "failed"

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        ExamSession, on_delete=models.PROTECT, related_name="commands", db_index=False
    )
    command_id = models.CharField(max_length=200)
    command_type = models.CharField(max_length=64, blank=True)
    received_at = models.DateTimeField(default=timezone.now)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    reason = models.TextField(blank=True)
    event_ids = models.JSONField(default=list)

    class Meta:
        ordering = ["session", "received_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "command_id"], name="processed_command_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.command_type or 'command'} {self.command_id}: {self.outcome}"


class ProctorActionRequest(models.Model):
    """One proctor action asked for through the dashboard or the API
    (``proctoring.actions.action_perform``), whatever became of it.

    The session's event log holds what was carried out (``proctor_action``,
    ``proctor_instruction``: the controller's facts); this row holds the request itself, so a
    refused, unanswered or ignored request is on record too, and an ``Idempotency-Key``
    repeated by the same proctor for the same session returns this row instead of acting
    twice. Its id is the command id the bot receives, and so the ``correlationId`` of the
    events it caused.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        """Sent to the bot; no answer yet."""
        APPLIED = "applied"
        """Carried out: its events are stored (``event_ids``)."""
        RECORDED = "recorded"
        """No bot was running; the irregularity report was stored directly."""
        IGNORED = "ignored"
        """The bot answered that it does not apply now (``message`` says why)."""
        REFUSED = "refused"
        """Not sent or refused as invalid (``message`` says why)."""
        UNCONFIRMED = "unconfirmed"
        """Sent, but the bot did not answer in time; check the timeline."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    session = models.ForeignKey(
        ExamSession, on_delete=models.PROTECT, related_name="proctor_requests"
    )
    proctor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="proctor_requests"
    )
    action = models.CharField(max_length=32)
    params = models.JSONField(default=dict)
    reason = models.TextField()
    idempotency_key = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    code = models.CharField(max_length=32, blank=True)
    """Why it was not carried out, as a code (``bot_unavailable``, ``not_applicable``...)."""
    message = models.TextField(blank=True)
    event_ids = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "proctor", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="proctor_request_unique_idempotency_key",
            ),
        ]
        indexes = [models.Index(fields=["session", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.action} on {self.session_id}: {self.status}"


class CandidateInput(models.Model):
    """One candidate input (typed answer, command, "ready"), stored before it is delivered to
    the bot (``sessions.inbox``). Unique per session on the client's ``input_id``; ``processed_at``
    is set by the bot in the transaction that stores what the input caused."""

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(
        ExamSession, on_delete=models.PROTECT, related_name="inputs", db_index=False
    )
    input_id = models.CharField(max_length=100)
    kind = models.CharField(max_length=32)
    payload = models.JSONField(default=dict)
    received_at = models.DateTimeField(default=timezone.now)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session", "id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "input_id"], name="candidate_input_unique"),
        ]
        indexes = [
            models.Index(
                fields=["session", "id"],
                condition=models.Q(processed_at__isnull=True),
                name="candidate_input_pending",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.input_id}"


class PersonalDataErasure(models.Model):
    """The record of one session's personal data being pseudonymised (``sessions.erasure``):
    who asked, when, why, and what was done. Never edited or deleted; the event-log triggers
    let an event's personal fields be swapped only under one of these rows."""

    class Kind(models.TextChoices):
        REQUEST = "request", "on request"
        RETENTION = "retention", "retention period over"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(ExamSession, on_delete=models.PROTECT, related_name="erasures")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    """The staff member who asked (empty: the retention command)."""
    reason = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    counts = models.JSONField(default=dict)
    """What was pseudonymised: events, fields, inputs, account."""

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Erasure of {self.session_id} ({self.kind}, {self.created_at:%Y-%m-%d})"


class OutboxMessage(models.Model):
    """One consequence of a stored fact, written in the fact's transaction and carried out by
    the relay (``sessions.outbox``): marking an exam, a grade post, a webhook. Unique per
    ``(topic, key)``, the consequence's idempotency key."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        DEAD = "dead", "dead (attempts used up)"

    id = models.BigAutoField(primary_key=True)
    topic = models.CharField(max_length=64)
    key = models.CharField(max_length=200)
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "key"], name="outbox_message_unique"),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at", "id"],
                condition=models.Q(status="pending"),
                name="outbox_message_due",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.topic} {self.key} ({self.status})"


class CandidateMaterialQuerySet(models.QuerySet["CandidateMaterial"]):
    def visible_to(self, user: Requester) -> CandidateMaterialQuerySet:
        """Materials ``user`` may see: those of the sessions :meth:`ExamSessionQuerySet.visible_to`
        lets them see (a candidate only their own; never another candidate's) and of their own
        previews (:meth:`ExamSessionQuerySet.previews_of`)."""
        sessions = ExamSession.objects.visible_to(user) | ExamSession.objects.previews_of(user)
        return self.filter(session__in=sessions.values("pk"))


class CandidateMaterial(models.Model):
    """A candidate's own material for a session (issue #35, docs/spec/candidate-materials.md):
    the uploaded file as received (kept in the database, so an erasure or a backup covers it
    in one place), the text read from it (``sessions.material_text``), who uploaded it and
    how. One per session and kind; a new upload before the exam replaces it (a new row, so the
    runtime's material id is new). The bot hands ``text`` to the runtime under
    :attr:`material_id`. An erasure empties ``original``, ``text`` and ``filename``."""

    class Kind(models.TextChoices):
        SUBMISSION = "submission", "submission"
        REPORT = "report", "report"

    class Source(models.TextChoices):
        CANDIDATE = "candidate", "uploaded by the candidate"
        STAFF_BULK = "staff_bulk", "staff bulk upload"
        API = "api", "API upload"

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    session = models.ForeignKey(ExamSession, on_delete=models.PROTECT, related_name="materials")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    file_type = models.CharField(max_length=16)
    """The type read from the content: pdf, docx, text or archive."""
    filename = models.CharField(max_length=255, blank=True)
    original = models.BinaryField(editable=False)
    size = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)
    """Of the original bytes."""
    text = models.TextField(blank=True)
    text_sha256 = models.CharField(max_length=64)
    """Of the extracted text."""
    source = models.CharField(max_length=16, choices=Source.choices)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = CandidateMaterialQuerySet.as_manager()

    class Meta:
        ordering = ["session", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "kind"], name="candidate_material_one_per_kind"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} of {self.session_id}"

    @property
    def material_id(self) -> str:
        """The id the runtime knows the material by (``^[a-zA-Z0-9_-]{1,128}$``)."""
        return f"{self.kind}-{self.pk.hex}"
