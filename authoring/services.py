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
from authoring.bank_insert import ExtractedNode, InsertResult, node_extract, node_insert
from authoring.example_packages import example_documents
from authoring.models import DraftPackage, DraftReview, QuestionBankEntry, ReviewComment
from ioa.compiler.types import JSONObject
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


# --- Question bank ----------------------------------------------------------------------------

MAX_TAGS = 20


def bank_tags_clean(tags: list[str]) -> list[str]:
    """Tags as stored: trimmed, lower case, inner spaces as hyphens, no commas, each at most 40
    characters, no repeats, at most :data:`MAX_TAGS`, in the order given."""
    cleaned = ("-".join(tag.replace(",", " ").split()).lower()[:40] for tag in tags)
    return list(dict.fromkeys(tag for tag in cleaned if tag))[:MAX_TAGS]


@transaction.atomic
def bank_entry_save(
    *,
    owner: User,
    draft: DraftPackage,
    node_id: str,
    title: str = "",
    tags: list[str] | None = None,
    shared: bool = False,
) -> QuestionBankEntry:
    """Save node ``node_id`` of ``draft``'s saved document to ``owner``'s question bank: the
    node with its evidence targets and rubric (not its transitions), the learning outcomes it
    names, and where it came from (the draft, its revision, its latest published version
    number, the package id and title). The caller has checked that ``owner`` may edit the draft.
    Raises :class:`authoring.bank_insert.NodeNotFound` for a missing or end node."""
    if not owner.may_enter(Area.STUDIO):
        raise PermissionError("only authors and admins keep a question bank")
    document = draft.document
    extracted = node_extract(document, node_id)
    metadata = document.get("metadata") if isinstance(document, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}
    latest = draft.versions.filter(is_preview=False).order_by("-number").first()
    node_title = extracted.node.get("title")
    entry = QuestionBankEntry(
        owner=owner,
        title=(title.strip() or (node_title if isinstance(node_title, str) else "") or node_id)[
            :200
        ],
        shared=shared,
        language=str(metadata.get("language") or "")[:35],
        learning_outcomes=extracted.learning_outcomes,
        source_draft=draft,
        source_revision=draft.revision,
        source_version_number=latest.number if latest else None,
        source_package_id=str(metadata.get("packageId") or "")[:64],
        source_package_title=draft.title[:300],
        source_node_id=node_id[:128],
    )
    entry.node = extracted.node
    entry.tags = bank_tags_clean(tags or [])
    entry.save(force_insert=True)
    return entry


class BankEntryRefused(PermissionError):
    """Only an entry's owner (or an admin) may change or delete it."""


@transaction.atomic
def bank_entry_update(
    *,
    entry: QuestionBankEntry,
    actor: User,
    title: str | None = None,
    tags: list[str] | None = None,
    shared: bool | None = None,
) -> QuestionBankEntry:
    """Change an entry's title, tags or sharing (what is None stays); the node and its
    provenance never change. Raises :class:`BankEntryRefused` unless ``actor`` may edit it
    (``QuestionBankEntry.objects.editable_by``: its owner or an admin), ``ValueError`` for a
    blank title."""
    locked = QuestionBankEntry.objects.editable_by(actor).select_for_update().filter(pk=entry.pk)
    current = locked.first()
    if current is None:
        raise BankEntryRefused("only the entry's owner can change it")
    if title is not None:
        if not title.strip():
            raise ValueError("a bank entry needs a title")
        current.title = title.strip()[:200]
    if tags is not None:
        current.tags = bank_tags_clean(tags)
    if shared is not None:
        current.shared = shared
    current.save(update_fields=["title", "tag_index", "shared"])
    return current


@transaction.atomic
def bank_entry_delete(*, entry: QuestionBankEntry, actor: User) -> None:
    """Delete ``entry``; raises :class:`BankEntryRefused` unless ``actor`` may edit it (its
    owner or an admin: a shared entry stays the owner's)."""
    deleted, _ = QuestionBankEntry.objects.editable_by(actor).filter(pk=entry.pk).delete()
    if not deleted:
        raise BankEntryRefused("only the entry's owner can delete it")


class InsertRefused(ValueError):
    """The insertion would add validation errors to the draft; ``errors`` lists them."""

    def __init__(self, errors: list[dict[str, object]]) -> None:
        super().__init__(
            "Not inserted: the question would add errors to the package: "
            + "; ".join(f"{e.get('ruleId')} {e.get('message')}" for e in errors)
        )
        self.errors = errors


def _error_keys(report: JSONObject) -> set[tuple[object, object, object]]:
    return {(e.get("ruleId"), e.get("path"), e.get("nodeId")) for e in report.get("errors", [])}


def bank_insert_into(
    *, document: object, extracted: ExtractedNode, after: str | None = None
) -> tuple[InsertResult, JSONObject]:
    """``document`` with the bank entry's or template's node inserted (see
    :func:`authoring.bank_insert.node_insert`) and the new document's validation report.
    Nothing is saved. Raises :class:`InsertRefused` when the new document has an error the old
    one did not (so a passing draft still passes), ``NodeNotFound`` for an unknown ``after``,
    and ``ValueError`` when ``document`` is not a JSON object."""
    if not isinstance(document, dict):
        raise ValueError("the package is not a JSON object; fix its JSON first")
    result = node_insert(document, extracted, after=after)
    now = timezone.now()
    before = validate_package(document, now=now).to_dict()
    report = validate_package(result.document, now=now).to_dict()
    new = [
        e
        for e in report["errors"]
        if (e.get("ruleId"), e.get("path"), e.get("nodeId")) not in _error_keys(before)
    ]
    if new:
        raise InsertRefused(new)
    return result, report


class ReviewRefused(PermissionError):
    """A review step the user may not take (only the owner requires approval; an approval
    must name the draft's current revision)."""


def _may_edit(*, draft: DraftPackage, user: User) -> bool:
    return DraftPackage.objects.editable_by(user).filter(pk=draft.pk).exists()


@transaction.atomic
def comment_create(*, draft: DraftPackage, author: User, node_id: str, text: str) -> ReviewComment:
    """Adds an open comment by ``author`` (who may edit the draft) on node ``node_id`` (empty:
    the package as a whole), recording the draft's current revision. ``ValueError`` when the
    text is empty."""
    if not _may_edit(draft=draft, user=author):
        raise ReviewRefused("only the package's authors comment on it")
    if not text.strip():
        raise ValueError("a comment needs some text")
    locked = DraftPackage.objects.select_for_update().get(pk=draft.pk)
    comment = ReviewComment(
        draft=locked,
        author=author,
        node_id=node_id.strip()[:128],
        revision=locked.revision,
        text=text.strip()[:4000],
    )
    comment.save(force_insert=True)
    return comment


@transaction.atomic
def comment_set_resolved(*, comment: ReviewComment, user: User, resolved: bool) -> ReviewComment:
    """Resolves (``resolved``) or reopens the comment; any author of its draft may. Resolving
    a resolved comment keeps who resolved it first."""
    if not _may_edit(draft=comment.draft, user=user):
        raise ReviewRefused("only the package's authors resolve its comments")
    locked = ReviewComment.objects.select_for_update().get(pk=comment.pk)
    if resolved and locked.resolved_at is None:
        locked.resolved_at, locked.resolved_by = timezone.now(), user
    elif not resolved:
        locked.resolved_at, locked.resolved_by = None, None
    locked.save(update_fields=["resolved_at", "resolved_by"])
    return locked


@transaction.atomic
def draft_set_approval_required(*, draft: DraftPackage, user: User, required: bool) -> DraftReview:
    """The owner (or an admin) says whether publishing the draft needs an approval."""
    if user.pk != draft.owner_id and user.role != "admin":
        raise ReviewRefused("only the package's owner decides whether it needs an approval")
    review, _ = DraftReview.objects.select_for_update().get_or_create(draft=draft)
    review.approval_required = required
    review.save(update_fields=["approval_required"])
    return review


@transaction.atomic
def draft_approve(*, draft: DraftPackage, user: User, revision: int) -> DraftReview:
    """``user`` (an author of the draft) approves ``revision``, which must be the current one
    (else :class:`DraftConflict`). The approval lasts until the next save. Whoever approves
    may not then publish that revision themselves (``publishing.services``)."""
    if not _may_edit(draft=draft, user=user):
        raise ReviewRefused("only the package's authors approve it")
    locked = DraftPackage.objects.select_for_update().get(pk=draft.pk)
    if revision != locked.revision:
        raise DraftConflict(locked.revision)
    review, _ = DraftReview.objects.get_or_create(draft=locked)
    review.approved_by, review.approved_revision = user, locked.revision
    review.approved_at = timezone.now()
    review.save(update_fields=["approved_by", "approved_revision", "approved_at"])
    return review
