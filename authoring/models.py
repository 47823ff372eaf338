"""Draft packages: the editable side of an assessment package."""

from __future__ import annotations

import json
import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import Requester


class DraftPackageQuerySet(models.QuerySet["DraftPackage"]):
    def editable_by(self, user: Requester) -> DraftPackageQuerySet:
        """Packages the user owns or collaborates on; admins see all."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        if getattr(user, "role", None) == "admin":
            return self.all()
        return self.filter(models.Q(owner=user) | models.Q(collaborators=user)).distinct()


class DraftPackage(models.Model):
    """An author's working copy of a package: any JSON, validated on every save."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_packages"
    )
    collaborators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="shared_packages", blank=True
    )
    title = models.CharField(max_length=300)
    # Arbitrary JSON (possibly invalid while being edited); the report says what is wrong.
    # Stored as text, not jsonb, so the author's key order survives a save.
    document_text = models.TextField()
    last_report = models.JSONField(null=True, blank=True)
    # Optimistic concurrency: a save must name the revision it edited.
    revision = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = DraftPackageQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title

    @property
    def document(self) -> object:
        """The document as parsed JSON (key order as the author wrote it)."""
        return json.loads(self.document_text)

    @document.setter
    def document(self, value: object) -> None:
        self.document_text = json.dumps(value, indent=2, ensure_ascii=False)

    @property
    def last_result(self) -> str | None:
        return (self.last_report or {}).get("result")


class QuestionBankEntryQuerySet(models.QuerySet["QuestionBankEntry"]):
    def visible_to(self, user: Requester) -> QuestionBankEntryQuerySet:
        """Entries ``user`` may see and insert: an author their own and every shared one (one
        institution per installation, so "shared" is every author here); an admin all; anyone
        else (candidates, proctors, anonymous) none."""
        return self._for_author(user, models.Q(owner=user) | models.Q(shared=True))

    def editable_by(self, user: Requester) -> QuestionBankEntryQuerySet:
        """Entries ``user`` may change or delete: an author their own (a shared entry stays
        its owner's), an admin all; anyone else none."""
        return self._for_author(user, models.Q(owner=user))

    def _for_author(self, user: Requester, author_may: models.Q) -> QuestionBankEntryQuerySet:
        """All for an active admin, ``author_may`` for an active author, none for anyone else."""
        if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
            return self.none()
        role = getattr(user, "role", None)
        if role == "admin":
            return self.all()
        return self.filter(author_may) if role == "author" else self.none()


class QuestionBankEntry(models.Model):
    """One question node saved for reuse: the node as it was in the package it came from (its
    evidence targets and rubric inside it, its transitions left out), the learning outcomes its
    targets' marking criteria name, and where it came from (draft, revision, published version,
    node id). Private to its owner unless ``shared`` (then every author may find and insert it,
    only the owner or an admin may delete it)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="bank_entries"
    )
    title = models.CharField(max_length=200)
    # The tags, lower case, each between commas (",graphs,core,"): searchable on every database.
    tag_index = models.CharField(max_length=600, blank=True, default="")
    shared = models.BooleanField(default=False)
    language = models.CharField(max_length=35, blank=True, default="")
    # The node as text (like DraftPackage.document_text) so its key order survives.
    node_text = models.TextField()
    learning_outcomes = models.JSONField(default=list, blank=True)
    source_draft = models.ForeignKey(
        DraftPackage, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    source_revision = models.PositiveIntegerField(null=True, blank=True)
    source_version_number = models.PositiveIntegerField(null=True, blank=True)
    source_package_id = models.CharField(max_length=64, blank=True, default="")
    source_package_title = models.CharField(max_length=300, blank=True, default="")
    source_node_id = models.CharField(max_length=128)
    created_at = models.DateTimeField(default=timezone.now)

    objects = QuestionBankEntryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "question bank entries"

    def __str__(self) -> str:
        return self.title

    @property
    def node(self) -> dict[str, object]:
        """The saved node as parsed JSON (key order as saved)."""
        value = json.loads(self.node_text)
        return value if isinstance(value, dict) else {}

    @node.setter
    def node(self, value: dict[str, object]) -> None:
        self.node_text = json.dumps(value, indent=2, ensure_ascii=False)

    @property
    def tags(self) -> list[str]:
        return [tag for tag in self.tag_index.split(",") if tag]

    @tags.setter
    def tags(self, value: list[str]) -> None:
        self.tag_index = "," + ",".join(value) + "," if value else ""


class DraftReview(models.Model):
    """A draft's review settings: whether publishing needs an approval (the owner decides) and
    the latest approval. An approval is for one revision: any later save bumps the draft's
    revision and so leaves it stale (``is_current``)."""

    draft = models.OneToOneField(DraftPackage, on_delete=models.CASCADE, related_name="review")
    approval_required = models.BooleanField(default=False)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    approved_revision = models.PositiveIntegerField(null=True, blank=True)
    approved_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"review of {self.draft_id}"

    def approval_is_current(self, revision: int) -> bool:
        """True when someone approved exactly ``revision``."""
        return self.approved_by_id is not None and self.approved_revision == revision


class ReviewCommentQuerySet(models.QuerySet["ReviewComment"]):
    def visible_to(self, user: Requester) -> ReviewCommentQuerySet:
        """Comments on the drafts ``user`` may edit (owner, co-author, admin); none otherwise."""
        drafts = DraftPackage.objects.editable_by(user).values("pk")
        return self.filter(draft__in=drafts)


class ReviewComment(models.Model):
    """A reviewer's comment on one node of a draft (``node_id``) or on the whole package
    (``node_id`` empty), written at the draft's revision ``revision``; resolved or open. It
    stays when its node is deleted from the document."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    draft = models.ForeignKey(DraftPackage, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="review_comments"
    )
    node_id = models.CharField(max_length=128, blank=True, default="")
    revision = models.PositiveIntegerField()
    text = models.TextField(max_length=4000)
    created_at = models.DateTimeField(default=timezone.now)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    resolved_at = models.DateTimeField(null=True, blank=True)

    objects = ReviewCommentQuerySet.as_manager()
    # Set by authoring.selectors.comment_list: the node is no longer in the document.
    node_removed: bool = False

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"comment on {self.node_id or 'the package'}"

    @property
    def resolved(self) -> bool:
        return self.resolved_at is not None
