"""Reads for authoring. Authorization lives in the queryset: other people's drafts are absent."""

from __future__ import annotations

import uuid

from django.db.models import Count, QuerySet

from accounts.models import Requester
from authoring.models import DraftPackage


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
