"""Writes for drafts: create, save (validated on every save), share. Keyword-only, atomic."""

from __future__ import annotations

import copy
import uuid
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from accounts.roles import Area
from authoring import presence
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


def _title_of(document: object, fallback: str) -> str:
    if isinstance(document, dict) and isinstance(document.get("metadata"), dict):
        title = document["metadata"].get("title")
        if isinstance(title, str) and title.strip():
            return title.strip()[:300]
    return fallback


def draft_create(*, owner: User, document: object, title: str = "") -> DraftPackage:
    """Creates a draft from any JSON document and stores its validation report."""
    if not owner.may_enter(Area.STUDIO):
        raise PermissionError("only authors and admins create packages")
    now = timezone.now()
    draft = DraftPackage(
        owner=owner,
        title=title or _title_of(document, "Untitled package"),
        last_report=validate_package(document, now=now).to_dict(),
        created_at=now,
        updated_at=now,
    )
    draft.document = document
    draft.save(force_insert=True)
    return draft


def empty_document(*, title: str = "Untitled package") -> dict[str, object]:
    """The smallest start for a package built in the studio: metadata and no nodes yet (it
    does not pass validation until it has an initial node and an end)."""
    return {
        "irVersion": "ioa-orm/0.2",
        "metadata": {
            "packageId": str(uuid.uuid4()),
            "title": title,
            "createdAt": timezone.now().replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            "language": "en",
            "structureLevel": "semi-structured",
        },
        "initialNodeId": "",
        "nodes": [],
    }


def draft_create_empty(*, owner: User, title: str = "") -> DraftPackage:
    """A new draft with :func:`empty_document`."""
    return draft_create(owner=owner, document=empty_document(title=title or "Untitled package"))


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
    *, draft: DraftPackage, document: object, expected_revision: int | None
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
    """Make exactly ``usernames`` (authors or admins, never the owner) the co-authors."""
    usernames = [name for name in dict.fromkeys(usernames) if name != draft.owner.username]
    users = list(User.objects.filter(username__in=usernames))
    missing = sorted(set(usernames) - {u.username for u in users})
    if missing:
        raise ValueError(f"no such user: {', '.join(missing)}")
    not_authors = [u.username for u in users if not u.may_enter(Area.STUDIO)]
    if not_authors:
        raise ValueError(f"only authors can collaborate: {', '.join(not_authors)}")
    draft.collaborators.set(users)
    return draft


class CollaboratorsRefused(PermissionError):
    """Only the owner (or an admin) chooses a package's co-authors."""


@transaction.atomic
def draft_change_collaborator(
    *, draft: DraftPackage, actor: User, username: str, add: bool
) -> DraftPackage:
    """Add (``add``) or remove one co-author. Only the owner or an admin may; adding someone
    who is already a co-author, or removing someone who is not, changes nothing. Raises
    :class:`CollaboratorsRefused` or ``ValueError`` (no such user, not an author)."""
    locked = DraftPackage.objects.select_for_update().get(pk=draft.pk)
    if actor.pk != locked.owner_id and actor.role != "admin":
        raise CollaboratorsRefused("only the package's owner can change its co-authors")
    current = set(locked.collaborators.values_list("username", flat=True))
    username = username.strip()
    wanted = current | {username} if add else current - {username}
    return draft_set_collaborators(draft=locked, usernames=sorted(wanted))


def draft_presence_note(
    *, draft: DraftPackage, user: User, node_id: str | None = None, now: datetime | None = None
) -> None:
    """Record that ``user`` has ``draft`` open in the studio now (a heartbeat of the editor
    page), at node ``node_id`` if their editor has one open. Kept in the cache, under the
    user's display name, for ``presence.EXPIRY_SECONDS``."""
    presence.presence_note(
        draft_id=draft.pk,
        user_id=user.pk,
        name=user.name,
        now=now or timezone.now(),
        node_id=node_id,
    )


def draft_presence_leave(*, draft: DraftPackage, user: User) -> None:
    """Forget at once that ``user`` has ``draft`` open (their editor page is being left)."""
    presence.presence_drop(draft_id=draft.pk, user_id=user.pk)
