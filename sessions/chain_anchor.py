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
import os
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

from ioa.events import ChainProblem

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
    message = f"{session_id}|{seq}|{head}".encode()
    return "hmac-sha256:" + hmac.digest(chain_key(), message, "sha256").hex()


def anchor_file(session_id: uuid.UUID | str) -> Path:
    return Path(settings.VIVA_CHAIN_ANCHOR_DIR) / f"{uuid.UUID(str(session_id))}.jsonl"


def anchor_head(*, session_id: uuid.UUID | str, seq: int, head: str) -> None:
    """Append the session's head to its anchor file (one ``write`` of one line, O_APPEND).

    A failure to write is logged as an error, never raised: the event is stored already, and
    ``verify_session_log`` then reports the missing anchor."""
    line = json.dumps(
        {
            "session": str(session_id),
            "seq": seq,
            "head": head,
            "at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "mac": head_mac(session_id, seq, head),
        },
        separators=(",", ":"),
    )
    path = anchor_file(session_id)
    try:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        except FileNotFoundError:  # the directory's first anchor: create it, once
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    except OSError:
        logger.exception("could not anchor session %s at seq %s", session_id, seq)


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
    path = erasure_file(session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    try:
        os.write(fd, lines.encode())
    finally:
        os.close(fd)


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
    """The session's anchors, oldest first; ``None`` when it has no anchor file."""
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
