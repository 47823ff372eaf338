"""Writes for drafts: create, save (validated on every save), share. Keyword-only, atomic."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from accounts.roles import Area
from authoring.example_packages import example_documents
from authoring.models import DraftPackage
from ioa.validation import validate_package


class DraftConflict(Exception):
    """The draft changed since the editor loaded it (someone else saved first)."""

    def __init__(self, current_revision: int) -> None:
        super().__init__(
            f"This package was saved by someone else (now at revision {current_revision}). "
            "Reload it, then reapply your change."
        )
        self.current_revision = current_revision


def _title_of(document: Any, fallback: str) -> str:
    if isinstance(document, dict) and isinstance(document.get("metadata"), dict):
        title = document["metadata"].get("title")
        if isinstance(title, str) and title.strip():
            return title.strip()[:300]
    return fallback


def draft_create(*, owner: User, document: Any, title: str = "") -> DraftPackage:
    """Creates a draft from any JSON document and stores its validation report."""
    if not owner.may_enter(Area.STUDIO):
        raise PermissionError("only authors and admins create packages")
    now = timezone.now()
    draft = DraftPackage.objects.create(
        owner=owner,
        title=title or _title_of(document, "Untitled package"),
        document=document,
        last_report=validate_package(document, now=now).to_dict(),
        created_at=now,
        updated_at=now,
    )
    return draft


def draft_create_from_example(*, owner: User, example: str) -> DraftPackage:
    """A new draft copied from an example package, with a fresh metadata.packageId."""
    examples = example_documents()
    if example not in examples:
        raise ValueError(f"no example named {example!r}; choose one of {', '.join(examples)}")
    document = copy.deepcopy(examples[example])
    document.setdefault("metadata", {})["packageId"] = str(uuid.uuid4())
    return draft_create(owner=owner, document=document)


@transaction.atomic
def draft_save(
    *, draft: DraftPackage, document: Any, expected_revision: int | None
) -> DraftPackage:
    """Saves a new document (any JSON), re-validates it and bumps the revision.

    ``expected_revision`` is the revision the editor loaded; a mismatch raises DraftConflict so a
    concurrent edit is never silently overwritten.
    """
    locked = DraftPackage.objects.select_for_update().get(pk=draft.pk)
    if expected_revision is not None and expected_revision != locked.revision:
        raise DraftConflict(locked.revision)
    now = timezone.now()
    locked.document = document
    locked.title = _title_of(document, locked.title)
    locked.last_report = validate_package(document, now=now).to_dict()
    locked.revision += 1
    locked.updated_at = now
    locked.save(update_fields=["document_text", "title", "last_report", "revision", "updated_at"])
    return locked


def draft_set_collaborators(*, draft: DraftPackage, usernames: list[str]) -> DraftPackage:
    users = list(User.objects.filter(username__in=usernames))
    missing = sorted(set(usernames) - {u.username for u in users})
    if missing:
        raise ValueError(f"no such user: {', '.join(missing)}")
    not_authors = [u.username for u in users if not u.may_enter(Area.STUDIO)]
    if not_authors:
        raise ValueError(f"only authors can collaborate: {', '.join(not_authors)}")
    draft.collaborators.set(users)
    return draft
