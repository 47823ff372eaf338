"""The tamper-evident hash chain over a session's event log.

Each stored event gets::

    digest = sha256_hex(canonical_json(envelope without seq, hash, prevHash))
    hash   = "sha256:" + sha256_hex(prev_hash + "|" + str(seq) + "|" + digest)

where ``prev_hash`` is the previous event's ``hash`` (:data:`GENESIS_HASH` for seq 1) and the
canonical JSON is :func:`ioa.canonical.canonical_bytes` (sorted keys, no whitespace, UTF-8).
The link formula is deliberately simple so the database can compute it in the same statement
that assigns ``seq``; ``sessions.event_store`` does exactly that on Postgres. Changing any
field of any event, dropping one, or swapping two breaks every later check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ioa.canonical import canonical_bytes, plain_canonical_bytes

GENESIS_HASH: Final = "sha256:" + "0" * 64
"""``prev_hash`` of the first event of every session."""

HASH_FIELDS: Final = frozenset({"seq", "hash", "prevHash"})
"""Envelope keys left out of the digest (seq enters through the link instead)."""


def body_digest(wire: Mapping[str, Any], *, plain: bool = False) -> str:
    """Hex sha256 of the canonical JSON of an envelope without its seq and hash fields.

    ``plain``: the envelope is plain JSON by construction (``EventEnvelope.to_wire()``, or read
    back from JSON), so the canonical form skips its round-trip check
    (:func:`ioa.canonical.plain_canonical_bytes`); the digest is the same."""
    body = {key: value for key, value in wire.items() if key not in HASH_FIELDS}
    encode = plain_canonical_bytes if plain else canonical_bytes
    return hashlib.sha256(encode(body)).hexdigest()


def link_hash(prev_hash: str, seq: int, digest: str) -> str:
    """The chain hash of the event at ``seq`` with body ``digest`` after ``prev_hash``."""
    text = f"{prev_hash}|{seq}|{digest}"
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def event_hash(wire: Mapping[str, Any], *, prev_hash: str) -> str:
    """The chain hash of a stored envelope (its ``seq`` must be set)."""
    seq = wire.get("seq")
    if not isinstance(seq, int):
        raise ValueError("event_hash needs an envelope with its seq")
    return link_hash(prev_hash, seq, body_digest(wire))


@dataclass(frozen=True, slots=True)
class ChainRecord:
    """One stored event as the verifier sees it."""

    seq: int
    wire: Mapping[str, Any]
    hash: str
    prev_hash: str
    kept: Mapping[str, str] | None = None
    """The seals kept for erased personal fields (``ioa.events.personal``), if any."""


ProblemKind = Literal[
    "missing",
    "reordered",
    "altered",
    "broken_link",
    "head_mismatch",
    "truncated",
    "anchor_forged",
    "unanchored",
    "unrecorded_erasure",
    "erased_rewritten",
    "erasure_undone",
]
"""``truncated``, ``anchor_forged`` and ``unanchored`` come from the head anchors kept outside
the log (``sessions.chain_anchor``); ``unrecorded_erasure`` from the erasure records
(``sessions.erasure``); ``erased_rewritten`` from an erased event whose erased value is not
exactly the erasure marker (``ioa.events.personal.rewritten_fields``); ``erasure_undone`` from
an event of an erased session holding personal fields without an erasure mark."""


@dataclass(frozen=True, slots=True)
class ChainProblem:
    kind: ProblemKind
    seq: int | None
    message: str

    def __str__(self) -> str:
        where = f"seq {self.seq}: " if self.seq is not None else ""
        return f"{self.kind}: {where}{self.message}"


def verify_chain(
    records: Iterable[ChainRecord],
    *,
    last_seq: int | None = None,
    head_hash: str | None = None,
    digest: Callable[[ChainRecord], str] | None = None,
) -> list[ChainProblem]:
    """Check a session's records (in stored order) and, if given, the session's recorded head.

    Reports missing seqs (gaps, or events missing at the end when ``last_seq`` is larger),
    reordered ones (a seq not greater than the previous), altered ones (the content no longer
    matches the hash) and broken links (``prev_hash`` not the previous hash). An empty list
    means the log is intact. ``digest`` computes a record's body digest (default
    :func:`body_digest` of its envelope; chain version 2 passes
    ``ioa.events.personal.chain_digest``).
    """
    problems: list[ChainProblem] = []
    expected_seq = 1
    prev = GENESIS_HASH
    for record in records:
        if record.seq > expected_seq:
            first, last = expected_seq, record.seq - 1
            span = f"{first}" if first == last else f"{first}..{last}"
            problems.append(ChainProblem("missing", first, f"events {span} are missing"))
        elif record.seq < expected_seq:
            problems.append(
                ChainProblem("reordered", record.seq, f"seq {record.seq} after {expected_seq - 1}")
            )
        if record.prev_hash != prev:
            problems.append(
                ChainProblem("broken_link", record.seq, "prev_hash is not the previous hash")
            )
        content = digest(record) if digest is not None else body_digest(record.wire)
        recomputed = link_hash(record.prev_hash, record.seq, content)
        if recomputed != record.hash:
            problems.append(
                ChainProblem("altered", record.seq, "content does not match its stored hash")
            )
        prev = record.hash
        expected_seq = max(expected_seq, record.seq + 1)
    if last_seq is not None and last_seq >= expected_seq:
        problems.append(
            ChainProblem(
                "missing", expected_seq, f"events {expected_seq}..{last_seq} are missing at the end"
            )
        )
    if head_hash is not None and head_hash != prev:
        problems.append(
            ChainProblem("head_mismatch", None, "the session's head hash is not the last hash")
        )
    return problems
