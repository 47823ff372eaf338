"""Reads for published versions; authorization inside the queryset."""

from __future__ import annotations

import difflib
import json
import uuid

from django.db.models import QuerySet

from accounts.models import Requester
from ioa.package_diff import semantic_diff
from publishing.models import PublishedVersion


def version_list(
    *, user: Requester, draft_id: uuid.UUID | str | None = None
) -> QuerySet[PublishedVersion]:
    qs = PublishedVersion.objects.visible_to(user).select_related("published_by", "draft")
    if draft_id is not None:
        qs = qs.filter(draft__pk=draft_id)
    return qs.order_by("draft_id", "-number")


def version_get(*, user: Requester, version_id: uuid.UUID | str) -> PublishedVersion:
    return PublishedVersion.objects.visible_to(user).select_related("draft").get(pk=version_id)


def pretty_document(version: PublishedVersion) -> str:
    document: object = json.loads(version.canonical_json)
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True)


def version_diff(*, old: PublishedVersion, new: PublishedVersion, context: int = 3) -> list[str]:
    """Unified diff lines between two versions' documents (keys sorted, two-space indent)."""
    return list(
        difflib.unified_diff(
            pretty_document(old).splitlines(),
            pretty_document(new).splitlines(),
            fromfile=f"v{old.number}",
            tofile=f"v{new.number}",
            n=context,
            lineterm="",
        )
    )


def version_changes(*, old: PublishedVersion, new: PublishedVersion) -> list[dict[str, object]]:
    """The differences by meaning between two versions (``ioa.package_diff``)."""
    return [
        change.to_dict()
        for change in semantic_diff(json.loads(old.canonical_json), json.loads(new.canonical_json))
    ]
