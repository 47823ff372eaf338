"""Reads for authoring. Authorization lives in the queryset: other people's drafts are absent."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db.models import Count, QuerySet
from django.utils import timezone

from accounts.models import Requester, User
from authoring.models import DraftPackage
from authoring.presence import PresenceEntry, presence_read


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
