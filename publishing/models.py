"""Published versions: immutable, checksummed snapshots of a package with their compiled flow.

Immutability is enforced in the model layer: ``save`` refuses to update an existing row, ``delete``
refuses, and the queryset's ``update``/``delete`` refuse. Republishing creates a new version.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import Requester


class ImmutableVersionError(Exception):
    """Raised by any attempt to change or delete a published version."""


class PublishedVersionQuerySet(models.QuerySet["PublishedVersion"]):
    def update(self, **kwargs: object) -> int:
        raise ImmutableVersionError("published versions cannot be updated; publish a new version")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ImmutableVersionError("published versions cannot be deleted")

    def visible_to(self, user: Requester) -> PublishedVersionQuerySet:
        """Versions of packages the user owns or collaborates on; admins and proctors see all."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        published = self.filter(is_preview=False)
        if getattr(user, "role", None) in {"admin", "proctor"}:
            return published
        return published.filter(
            models.Q(draft__owner=user) | models.Q(draft__collaborators=user)
        ).distinct()


class PublishedVersion(models.Model):
    """One publication of a draft: canonical JSON, checksum, compiled flow and report."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    draft = models.ForeignKey(
        "authoring.DraftPackage", on_delete=models.PROTECT, related_name="versions"
    )
    number = models.PositiveIntegerField()
    package_id = models.CharField(max_length=64, db_index=True)  # metadata.packageId
    title = models.CharField(max_length=300)
    ir_version = models.CharField(max_length=40)
    adapter_version = models.CharField(max_length=40)
    canonical_json = models.TextField()
    checksum = models.CharField(max_length=80)  # "sha256:<hex>" of canonical_json
    compiled_json = models.TextField()  # serialised CompiledFlow, byte-stable
    validation_report = models.JSONField()
    dry_run_report = models.JSONField(default=dict, blank=True)
    """The dry run of the version at publication (``ioa.dry_run``); ``{}`` for versions
    published before dry runs existed."""
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    published_at = models.DateTimeField(default=timezone.now)
    is_preview = models.BooleanField(default=False, editable=False, db_index=True)
    """A preview build of a draft (``sessions.previews``): compiled by the same gate, numbered
    0, never listed with the versions, never scheduled; real publications keep 1, 2, 3..."""

    objects = PublishedVersionQuerySet.as_manager()

    class Meta:
        ordering = ["draft", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["draft", "number"],
                condition=models.Q(is_preview=False),
                name="unique_version_number",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} preview" if self.is_preview else f"{self.title} v{self.number}"

    # Any: django-stubs types Model.save's arguments, forwarded here, as Any.
    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ImmutableVersionError(
                f"published version {self.pk} is immutable; publish a new version instead"
            )
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise ImmutableVersionError("published versions cannot be deleted")
