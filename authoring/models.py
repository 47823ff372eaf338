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
