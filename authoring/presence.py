"""Who has a draft open in the studio now (issue #34, "working together"), kept in Django's cache.

The cache is Redis in production and local memory in the embedded default; nothing here is
stored in the database. While the editor page is open and visible it sends a heartbeat every
``HEARTBEAT_SECONDS`` (and at once when the author opens another node); each person's entry,
``studio-presence:<draft>:<user id>`` (their display name, when they were last seen and the node
their editor has open), expires ``EXPIRY_SECONDS`` after their last heartbeat, or
is removed at once when their page says it is leaving.

A per-draft index lists the user ids whose entries may exist, so a read is two cache round
trips. The index is a hint that each heartbeat rewrites (adding its own id, dropping ids whose
entry has expired): an id lost to two heartbeats written at the same instant is added again by
that person's next heartbeat, well inside the expiry.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.cache import cache

HEARTBEAT_SECONDS = 20
"""How often an open editor page says it is still open, while nobody else has the draft open."""

SHARED_HEARTBEAT_SECONDS = 5
"""How often it does while someone else has the draft open too: each answer carries the draft's
saved revision, so another author's save reaches this page within this time."""

EXPIRY_SECONDS = 60
"""How long after their last heartbeat someone still counts as having the draft open."""


NODE_ID_MAX = 200
"""The longest node id a heartbeat may name (longer ones are refused by the API)."""


@dataclass(frozen=True)
class PresenceEntry:
    """One person with the draft open: their user id, display name, last heartbeat and the node
    their editor has open (``None``: the package settings, a pool, or nothing selected)."""

    user_id: int
    name: str
    last_seen: datetime
    node_id: str | None = None


def _index_key(draft_id: uuid.UUID) -> str:
    return f"studio-presence:{draft_id}"


def _entry_key(draft_id: uuid.UUID, user_id: int) -> str:
    return f"studio-presence:{draft_id}:{user_id}"


def _indexed_entries(draft_id: uuid.UUID) -> dict[int, PresenceEntry]:
    """The entries of the ids in the draft's index that have not expired from the cache."""
    index = cache.get(_index_key(draft_id))
    ids = [i for i in index if isinstance(i, int)] if isinstance(index, list) else []
    found = cache.get_many([_entry_key(draft_id, i) for i in ids])
    entries: dict[int, PresenceEntry] = {}
    for user_id in ids:
        stored = found.get(_entry_key(draft_id, user_id))
        if isinstance(stored, dict):
            node = stored.get("node_id")
            entries[user_id] = PresenceEntry(
                user_id=user_id,
                name=str(stored["name"]),
                last_seen=stored["last_seen"],
                node_id=node if isinstance(node, str) else None,
            )
    return entries


def presence_note(
    *, draft_id: uuid.UUID, user_id: int, name: str, now: datetime, node_id: str | None = None
) -> None:
    """Record that ``user_id`` (shown as ``name``) has the draft open at ``now``, at node
    ``node_id``; the entry expires ``EXPIRY_SECONDS`` later unless a newer heartbeat replaces it."""
    cache.set(
        _entry_key(draft_id, user_id),
        {"name": name, "last_seen": now, "node_id": node_id or None},
        timeout=EXPIRY_SECONDS,
    )
    ids = sorted({*_indexed_entries(draft_id), user_id})
    cache.set(_index_key(draft_id), ids, timeout=EXPIRY_SECONDS)


def presence_drop(*, draft_id: uuid.UUID, user_id: int) -> None:
    """Forget ``user_id``'s entry at once (their page is leaving)."""
    cache.delete(_entry_key(draft_id, user_id))


def presence_read(*, draft_id: uuid.UUID, now: datetime) -> list[PresenceEntry]:
    """Everyone seen within ``EXPIRY_SECONDS`` before ``now``, most recently seen first."""
    oldest = now - timedelta(seconds=EXPIRY_SECONDS)
    current = [e for e in _indexed_entries(draft_id).values() if e.last_seen >= oldest]
    return sorted(current, key=lambda e: (-e.last_seen.timestamp(), e.name))
