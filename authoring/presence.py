"""Who has a draft open in the studio now (issue #34, "working together"), kept in Django's cache.

The cache is Redis in production and local memory in the embedded default; nothing here is
stored in the database. While the editor page is open and visible it sends a heartbeat every
``HEARTBEAT_SECONDS``; each person's entry, ``studio-presence:<draft>:<user id>`` (their display
name and when they were last seen), expires ``EXPIRY_SECONDS`` after their last heartbeat, or
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
"""How often an open editor page says it is still open."""

EXPIRY_SECONDS = 60
"""How long after their last heartbeat someone still counts as having the draft open."""


@dataclass(frozen=True)
class PresenceEntry:
    """One person with the draft open: their user id, display name and last heartbeat."""

    user_id: int
    name: str
    last_seen: datetime


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
            entries[user_id] = PresenceEntry(
                user_id=user_id, name=str(stored["name"]), last_seen=stored["last_seen"]
            )
    return entries


def presence_note(*, draft_id: uuid.UUID, user_id: int, name: str, now: datetime) -> None:
    """Record that ``user_id`` (shown as ``name``) has the draft open at ``now``; the entry
    expires ``EXPIRY_SECONDS`` later unless a newer heartbeat replaces it."""
    cache.set(
        _entry_key(draft_id, user_id), {"name": name, "last_seen": now}, timeout=EXPIRY_SECONDS
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
