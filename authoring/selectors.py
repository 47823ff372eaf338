"""Reads for authoring. Authorization lives in the queryset: other people's drafts are absent."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from accounts.models import Requester, User
from authoring.bank_insert import ExtractedNode
from authoring.models import DraftPackage, DraftReview, QuestionBankEntry, ReviewComment
from authoring.presence import PresenceEntry, presence_read
from authoring.question_templates import QuestionTemplate, question_templates


def draft_list(*, user: Requester) -> QuerySet[DraftPackage]:
    return (
        DraftPackage.objects.editable_by(user)
        .select_related("owner")
        .annotate(version_count=Count("versions", distinct=True))
        .order_by("-updated_at")
    )


def draft_get(*, user: Requester, draft_id: uuid.UUID | str) -> DraftPackage:
    """The draft, or DraftPackage.DoesNotExist when it does not exist or is not the user's."""
    return DraftPackage.objects.editable_by(user).select_related("owner").get(pk=draft_id)


def draft_presence_others(
    *, draft: DraftPackage, user: User, now: datetime | None = None
) -> list[PresenceEntry]:
    """The people other than ``user`` who have ``draft`` open in the studio now (a heartbeat
    within ``presence.EXPIRY_SECONDS``), most recently seen first. The caller has already
    checked that ``user`` may edit the draft (``draft_get``)."""
    seen = presence_read(draft_id=draft.pk, now=now or timezone.now())
    return [entry for entry in seen if entry.user_id != user.pk]


def bank_entry_list(
    *, user: Requester, query: str = "", tag: str = ""
) -> QuerySet[QuestionBankEntry]:
    """The bank entries ``user`` may see (``QuestionBankEntry.objects.visible_to``), newest
    first; ``query`` keeps those whose title, tags or node text hold every one of its words
    (case-insensitive), ``tag`` those with exactly that tag."""
    entries = QuestionBankEntry.objects.visible_to(user).select_related("owner")
    for word in query.split():
        entries = entries.filter(
            Q(title__icontains=word) | Q(tag_index__icontains=word) | Q(node_text__icontains=word)
        )
    if tag.strip():
        entries = entries.filter(tag_index__contains="," + tag.strip().lower() + ",")
    return entries.order_by("-created_at")


def bank_entry_get(*, user: Requester, entry_id: uuid.UUID | str) -> QuestionBankEntry:
    """The entry, or QuestionBankEntry.DoesNotExist when it does not exist or ``user`` may not
    see it (another author's private entry)."""
    return QuestionBankEntry.objects.visible_to(user).select_related("owner").get(pk=entry_id)


def bank_entry_extracted(entry: QuestionBankEntry) -> ExtractedNode:
    """What inserting ``entry`` adds: its node and learning outcomes."""
    return ExtractedNode(node=entry.node, learning_outcomes=list(entry.learning_outcomes or []))


def bank_templates(*, language: str | None) -> list[QuestionTemplate]:
    """The built-in question templates in the package language ``language`` (English when
    there are none in it)."""
    return question_templates(language)


def bank_template_get(*, template_id: str, language: str | None) -> QuestionTemplate:
    """The template ``template_id`` in ``language``; KeyError when there is none."""
    for template in question_templates(language):
        if template.id == template_id:
            return template
    raise KeyError(template_id)


def template_extracted(template: QuestionTemplate) -> ExtractedNode:
    """What inserting ``template`` adds: its node (it names no learning outcome)."""
    return ExtractedNode(node=template.node, learning_outcomes=[])


def _node_ids(draft: DraftPackage) -> set[str]:
    try:
        document = draft.document
    except ValueError:
        return set()
    nodes = document.get("nodes") if isinstance(document, dict) else None
    if not isinstance(nodes, list):
        return set()
    return {str(node.get("id")) for node in nodes if isinstance(node, dict)}


def comment_list(*, user: Requester, draft: DraftPackage) -> list[ReviewComment]:
    """The draft's comments ``user`` may see (``ReviewComment.objects.visible_to``), oldest
    first, each with ``node_removed`` set when its node is no longer in the document."""
    comments = list(
        ReviewComment.objects.visible_to(user)
        .filter(draft=draft)
        .select_related("author", "resolved_by")
        .order_by("created_at")
    )
    present = _node_ids(draft)
    for comment in comments:
        comment.node_removed = bool(comment.node_id) and comment.node_id not in present
    return comments


def comment_get(
    *, user: Requester, draft: DraftPackage, comment_id: uuid.UUID | str
) -> ReviewComment:
    """The comment, or ReviewComment.DoesNotExist when it is not on ``draft`` or hidden."""
    return (
        ReviewComment.objects.visible_to(user)
        .select_related("draft")
        .get(pk=comment_id, draft=draft)
    )


@dataclass(frozen=True)
class ReviewState:
    """Where a draft's review stands at its current revision."""

    approval_required: bool
    approved_by: User | None
    approved_revision: int | None
    approval_current: bool
    unresolved_comments: int

    def missing_for(self, publisher: User) -> list[str]:
        """What stops ``publisher`` from publishing: nothing unless an approval is required;
        then an approval of the current revision by someone other than the publisher, and no
        unresolved comment."""
        if not self.approval_required:
            return []
        missing: list[str] = []
        if self.approved_by is None:
            missing.append(gettext("an approval by a co-author"))
        elif not self.approval_current:
            missing.append(
                gettext(
                    "a fresh approval (the approval of revision %(revision)s is stale: "
                    "the package was saved since)"
                )
                % {"revision": self.approved_revision}
            )
        elif self.approved_by.pk == publisher.pk:
            missing.append(gettext("an approval by someone other than the person who publishes"))
        if self.unresolved_comments:
            missing.append(
                ngettext(
                    "%(count)s unresolved comment to be resolved",
                    "%(count)s unresolved comments to be resolved",
                    self.unresolved_comments,
                )
                % {"count": self.unresolved_comments}
            )
        return missing


def review_state(*, draft: DraftPackage) -> ReviewState:
    """The draft's review at its current revision (the caller checked the user may see it)."""
    review = DraftReview.objects.select_related("approved_by").filter(draft=draft).first()
    open_count = ReviewComment.objects.filter(draft=draft, resolved_at__isnull=True).count()
    if review is None:
        return ReviewState(False, None, None, False, open_count)
    return ReviewState(
        approval_required=review.approval_required,
        approved_by=review.approved_by,
        approved_revision=review.approved_revision,
        approval_current=review.approval_is_current(draft.revision),
        unresolved_comments=open_count,
    )
