"""Anchors of each session's chain head, outside the event table.

The hash chain (``ioa.events.hashchain``) shows that stored events were not edited, dropped in
the middle or reordered, but alone it cannot show that the *last* events were not deleted with
the session's ``last_seq``/``head_hash`` rewound to match. So after every append commits,
:func:`anchor_head` appends one line to the session's anchor file::

    {"session": ..., "seq": N, "head": "sha256:...", "at": "...Z", "mac": "hmac-sha256:..."}

* the file lives outside the database (``VIVA_CHAIN_ANCHOR_DIR``, one ``<session>.jsonl`` per
  session, opened ``O_APPEND``); in production put it on append-only storage (``chattr +a``,
  WORM or shipped logs) that the database's users cannot rewrite;
* ``mac`` is an HMAC-SHA256 of ``session|seq|head`` under ``VIVA_CHAIN_KEY``, a key that is not
  in the database, so nobody with only database access can forge an anchor.

:func:`check_anchors` (run by ``verify_session_log`` through ``sessions.selectors.verify_log``)
reports a session whose stored log ends before an anchored seq, or whose event at an anchored
seq is not the anchored head (``truncated``), an anchor whose MAC does not verify
(``anchor_forged``), and a session with events but no anchor file (``unanchored``).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

from ioa.events import ChainProblem
from sessions.anchor_queue import AnchorQueue, QueuedHead, append_to

logger = logging.getLogger(__name__)


def chain_key() -> bytes:
    """``VIVA_CHAIN_KEY``; in development, derived from ``SECRET_KEY`` (never from the database)."""
    return _chain_key(str(getattr(settings, "VIVA_CHAIN_KEY", "") or ""), settings.SECRET_KEY)


def seal_key() -> bytes:
    """The key of the personal-field seals of chain version 2 (``ioa.events.personal``): derived
    from :func:`chain_key`, so it is kept out of the database in the same way."""
    return _seal_key(chain_key())


@functools.lru_cache(maxsize=4)
def _chain_key(configured: str, secret_key: str) -> bytes:
    """Derived once per setting values (every append needs it; settings may change in tests)."""
    if configured:
        return configured.encode("utf-8")
    return hmac.new(secret_key.encode(), b"viva-chain-anchor", hashlib.sha256).digest()


@functools.lru_cache(maxsize=4)
def _seal_key(chain: bytes) -> bytes:
    return hmac.new(chain, b"viva-personal-data-seal", hashlib.sha256).digest()


def head_mac(session_id: uuid.UUID | str, seq: int, head: str) -> str:
    return _head_mac(chain_key(), str(session_id), seq, head)


def _head_mac(key: bytes, session: str, seq: int, head: str) -> str:
    message = f"{session}|{seq}|{head}".encode()
    return "hmac-sha256:" + hmac.digest(key, message, "sha256").hex()


def anchor_file(session_id: uuid.UUID | str) -> Path:
    return Path(settings.VIVA_CHAIN_ANCHOR_DIR) / f"{uuid.UUID(str(session_id))}.jsonl"


def anchor_head(*, session_id: uuid.UUID | str, seq: int, head: str) -> None:
    """Queue the session's head for its anchor file (``sessions.anchor_queue``: written by
    this process's ``chain-anchor`` thread within ``ANCHOR_INTERVAL``, the newest head of each
    session per batch), under the anchor directory and key in force now.

    A failure to write is logged as an error, never raised: the event is stored already, and
    ``verify_session_log`` then reports the missing anchor."""
    ANCHORS.submit(
        QueuedHead(
            directory=str(settings.VIVA_CHAIN_ANCHOR_DIR),
            session=str(session_id),
            seq=seq,
            head=head,
            key=chain_key(),
        )
    )


def anchor_line(queued: QueuedHead) -> tuple[Path, bytes]:
    """The anchor file of a queued head and its line (written by the queue's thread)."""
    session = str(uuid.UUID(queued.session))
    line = json.dumps(
        {
            "session": session,
            "seq": queued.seq,
            "head": queued.head,
            "at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "mac": _head_mac(queued.key, session, queued.seq, queued.head),
        },
        separators=(",", ":"),
    )
    return Path(queued.directory) / f"{session}.jsonl", (line + "\n").encode()


ANCHORS = AnchorQueue(anchor_line)
"""This process's queued heads (:func:`anchor_head`)."""


def flush(timeout: float = 5.0) -> bool:
    """Write the heads this process has queued; returns once they are in their files."""
    return ANCHORS.flush(timeout)


def erasure_file(session_id: uuid.UUID | str) -> Path:
    return Path(settings.VIVA_CHAIN_ANCHOR_DIR) / f"{uuid.UUID(str(session_id))}.erasures.jsonl"


def erasure_mac(
    session_id: uuid.UUID | str, erasure_id: str, seq: int, digest: str, redacted: str
) -> str:
    message = f"erasure|{session_id}|{erasure_id}|{seq}|{digest}|{redacted}".encode()
    return "hmac-sha256:" + hmac.new(chain_key(), message, hashlib.sha256).hexdigest()


def anchor_erasure(
    *, session_id: uuid.UUID | str, erasure_id: str, digests: Mapping[int, tuple[str, str]]
) -> None:
    """Record, outside the database, the erasure of chain version 1 events (``sessions.erasure``):
    one MAC'd line per event with the body digest the chain links (``digest``) and the digest of
    the body as erased (``redacted``), appended to ``<session>.erasures.jsonl`` beside the head
    anchors. Raises ``OSError`` (the erasure then rolls back): unlike a head anchor, an erasure
    without its record would read as tampering."""
    lines = "".join(
        json.dumps(
            {
                "session": str(session_id),
                "erasure": erasure_id,
                "seq": seq,
                "digest": digest,
                "redacted": redacted,
                "mac": erasure_mac(session_id, erasure_id, seq, digest, redacted),
            },
            separators=(",", ":"),
        )
        + "\n"
        for seq, (digest, redacted) in sorted(digests.items())
    )
    append_to(erasure_file(session_id), lines.encode())


def anchored_erasures(session_id: uuid.UUID | str) -> dict[int, tuple[str, str, str]]:
    """seq → (erasure id, digest, redacted) of every erasure line whose MAC verifies."""
    try:
        text = erasure_file(session_id).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    found: dict[int, tuple[str, str, str]] = {}
    for line in text.splitlines():
        try:
            item = json.loads(line)
            seq, erasure = int(item["seq"]), str(item["erasure"])
            digest, redacted = str(item["digest"]), str(item["redacted"])
        except (ValueError, KeyError, TypeError):
            continue
        mac = erasure_mac(session_id, erasure, seq, digest, redacted)
        if hmac.compare_digest(str(item.get("mac", "")), mac):
            found[seq] = (erasure, digest, redacted)
    return found


def read_anchors(session_id: uuid.UUID | str) -> list[dict[str, object]] | None:
    """The session's anchors, oldest first (once this process's queued heads are written);
    ``None`` when it has no anchor file."""
    flush()
    path = anchor_file(session_id)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    anchors: list[dict[str, object]] = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            item = {"unreadable": line}
        anchors.append(item if isinstance(item, dict) else {"unreadable": line})
    return anchors


def check_anchors(
    *, session_id: uuid.UUID | str, last_seq: int, hashes: Mapping[int, str]
) -> list[ChainProblem]:
    """Compare the stored log (``hashes``: seq → stored hash) with the session's anchors."""
    anchors = read_anchors(session_id)
    if anchors is None:
        if last_seq > 0:
            return [ChainProblem("unanchored", None, "no anchor file: the head was never anchored")]
        return []
    problems: list[ChainProblem] = []
    for anchor in anchors:
        seq, head = anchor.get("seq"), anchor.get("head")
        if not isinstance(seq, int) or not isinstance(head, str):
            problems.append(ChainProblem("anchor_forged", None, "an unreadable anchor line"))
            continue
        if not hmac.compare_digest(str(anchor.get("mac", "")), head_mac(session_id, seq, head)):
            problems.append(ChainProblem("anchor_forged", seq, "anchor MAC does not verify"))
        elif seq > last_seq or seq not in hashes:
            problems.append(
                ChainProblem(
                    "truncated", seq, f"seq {seq} was anchored but the log ends at {last_seq}"
                )
            )
        elif hashes[seq] != head:
            problems.append(
                ChainProblem("truncated", seq, "the event at this seq is not the anchored head")
            )
    return problems
