"""Reads of sessions and their event logs. Authorization lives in the querysets
(``ExamSession.objects.visible_to``); nothing here writes.

Stored rows are turned back into wire envelopes by :func:`wire_from_row`, exactly as they were
hashed, so the same function serves the live catch-up, the timeline, the export and
verification.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Max

from accounts.models import Requester, User
from ioa.events import (
    REGISTRY,
    Audience,
    ChainProblem,
    ChainRecord,
    format_timestamp,
    project,
    verify_chain,
)
from ioa.events.personal import (
    CHAIN_V2,
    ERASED_TEXT,
    chain_digest,
    personal_fields,
    rewritten_fields,
)
from sessions import chain_anchor
from sessions.models import CandidateMaterial, ExamSession, PersonalDataErasure, SessionEvent

_ROW_FIELDS = (
    "session_id",
    "seq",
    "event_id",
    "type",
    "timestamp",
    "source",
    "correlation_id",
    "payload",
    "schema_version",
    "hash",
    "prev_hash",
    "erased",
    "recorded_at",
)

CHUNK = 500
"""Rows fetched per query when streaming a log."""


def wire_from_row(row: SessionEvent | Mapping[str, Any]) -> dict[str, object]:
    """The wire envelope (with ``seq``) of a stored event row or a ``values()`` dict."""
    # Any: Django types a values() dict's values (whatever the column holds) as Any.
    get: Callable[[str], Any] = row.get if isinstance(row, Mapping) else row.__getattribute__
    wire: dict[str, object] = {
        "eventId": str(get("event_id")),
        "sessionId": str(get("session_id")),
        "seq": get("seq"),
        "timestamp": format_timestamp(get("timestamp")),
        "source": get("source"),
        "type": get("type"),
        "payload": get("payload"),
        "schemaVersion": get("schema_version"),
    }
    correlation = get("correlation_id")
    if correlation:
        wire["correlationId"] = correlation
    return wire


def audience_for(user: Requester) -> Audience:
    """The live audience of a user who may see a session: candidates get the candidate
    projection, everyone else (proctors, authors, admins) the proctor view."""
    return Audience.CANDIDATE if getattr(user, "role", None) == "candidate" else Audience.PROCTOR


def session_for_user(*, user: Requester, session_id: uuid.UUID | str) -> ExamSession | None:
    """The session if ``user`` may see it, else ``None`` (callers answer 404)."""
    try:
        key = session_id if isinstance(session_id, uuid.UUID) else uuid.UUID(str(session_id))
    except ValueError:
        return None
    return ExamSession.objects.visible_to(user).filter(pk=key).first()


def candidate_invitable_by(*, user: Requester, candidate: User) -> bool:
    """Whether ``user`` may issue a sign-in link for ``candidate``: an admin always; other
    staff only for a candidate they can already see (one with a session ``user`` may see, per
    :meth:`ExamSessionQuerySet.visible_to`) or one they invited before (e.g. the account their
    own earlier invitation created). Everyone else's candidates do not exist for them (404)."""
    if getattr(user, "role", None) == "admin" and getattr(user, "is_active", False):
        return True
    if ExamSession.objects.visible_to(user).filter(candidate=candidate).exists():
        return True
    invitations = getattr(candidate, "invitations", None)
    return invitations is not None and invitations.filter(created_by=user).exists()


def types_for(audience: Audience | str) -> list[str]:
    """The persisted event types an audience receives."""
    audience = Audience(audience)
    return sorted(t.value for t, s in REGISTRY.items() if s.persisted and audience in s.audiences)


def iter_rows(
    *,
    session_id: uuid.UUID | str,
    after_seq: int = 0,
    until_seq: int | None = None,
    types: list[str] | None = None,
) -> Iterator[dict[str, Any]]:  # Any: Django types values() rows as dict[str, Any]
    """Stored rows (``values()`` dicts) of a session with ``after_seq < seq <= until_seq`` in seq
    order, fetched in chunks by keyset on the ``(session, seq)`` index."""
    cursor = after_seq
    while True:
        query = SessionEvent.objects.filter(session__pk=session_id, seq__gt=cursor)
        if until_seq is not None:
            query = query.filter(seq__lte=until_seq)
        if types is not None:
            query = query.filter(type__in=types)
        rows = list(query.order_by("seq").values(*_ROW_FIELDS)[:CHUNK])
        yield from rows
        if len(rows) < CHUNK:
            return
        cursor = rows[-1]["seq"]


def events_after(
    *,
    session_id: uuid.UUID | str,
    after_seq: int = 0,
    audience: Audience | str | None = None,
    until_seq: int | None = None,
) -> list[dict[str, object]]:
    """Stored envelopes after ``after_seq`` (and up to ``until_seq``) in seq order; projected
    for ``audience`` when given (events it may not see are left out)."""
    types = types_for(audience) if audience is not None else None
    rows = iter_rows(session_id=session_id, after_seq=after_seq, until_seq=until_seq, types=types)
    if audience is None:
        return [wire_from_row(row) for row in rows]
    projected = (project(wire_from_row(row), audience) for row in rows)
    return [wire for wire in projected if wire is not None]


@dataclass
class TimelineEntry:
    """Events that share a ``correlationId`` (or a single uncorrelated event), placed at the
    position of their first event."""

    correlation_id: str | None
    events: list[dict[str, object]] = field(default_factory=list)

    @property
    def first_seq(self) -> int:
        seq = self.events[0]["seq"]
        if not isinstance(seq, int):
            raise TypeError(f"a stored event's seq is an int, not {seq!r}")
        return seq


def session_timeline(
    *, session_id: uuid.UUID | str, audience: Audience | str | None = None
) -> list[TimelineEntry]:
    """The session's stored events in seq order, grouped by ``correlationId`` (chapter 05
    §6.4): each group sits where its first event is; uncorrelated events stand alone."""
    entries: list[TimelineEntry] = []
    groups: dict[str, TimelineEntry] = {}
    for wire in events_after(session_id=session_id, audience=audience):
        key = wire.get("correlationId")
        if not isinstance(key, str):  # none: a string when there is one
            entries.append(TimelineEntry(None, [wire]))
        elif key in groups:
            groups[key].events.append(wire)
        else:
            groups[key] = TimelineEntry(key, [wire])
            entries.append(groups[key])
    return entries


def export_lines(*, session_id: uuid.UUID | str) -> Iterator[str]:
    """The session's log as JSON Lines: one stored envelope per line with its ``hash`` and
    ``prevHash``, in seq order (keys sorted, UTF-8)."""
    for row in iter_rows(session_id=session_id):
        record = {**wire_from_row(row), "hash": row["hash"], "prevHash": row["prev_hash"]}
        yield json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _erasure_check(
    row: Mapping[str, Any],  # Any: a values() row (Django types its values as Any)
    *,
    version: int,
    erasures: set[str],
    anchored: Mapping[int, tuple[str, str, str]],
) -> tuple[Mapping[str, str] | None, list[ChainProblem]]:
    """What the verifier keeps for an erased row (version 2: its seals; version 1: the recorded
    digests; version 2: its seals, and the recorded digests when fields it hashed in clear were
    erased), and the problems of its erasure mark: no erasure of this session (and, for
    recorded digests, no MAC'd record outside the database) accounts for it, or an erased value is
    not exactly the erasure marker (``erased_rewritten``: the kept seal vouches for the marker
    only, never for text written over it)."""
    erased = row["erased"]
    if erased is None:
        return None, []
    erased = erased if isinstance(erased, Mapping) else {}
    problems = _rewritten(row, erased)
    if erased.get("erasure") not in erasures:
        problems.append(
            ChainProblem("unrecorded_erasure", row["seq"], "no erasure of this session")
        )
    recorded = version < CHAIN_V2 or "digest" in erased
    kept: dict[str, str] = {}
    if recorded:
        kept = {"digest": str(erased.get("digest", "")), "redacted": str(erased.get("redacted"))}
        outside = anchored.get(row["seq"])
        if outside != (erased.get("erasure"), kept["digest"], kept["redacted"]):
            problems.append(
                ChainProblem(
                    "unrecorded_erasure",
                    row["seq"],
                    "the erasure's record outside the database differs",
                )
            )
        if version < CHAIN_V2:
            return kept, problems
    seals = erased.get("seals")
    seals = (
        {k: v for k, v in seals.items() if isinstance(v, str)} if isinstance(seals, Mapping) else {}
    )
    return {**seals, **kept}, problems


def _rewritten(row: Mapping[str, Any], erased: Mapping[str, Any]) -> list[ChainProblem]:
    """``erased_rewritten`` when the erasure mark names no field, or an erased field's value is
    not exactly its marker (the message never repeats what the row now holds)."""
    seals = erased.get("seals")
    if not isinstance(seals, Mapping) or not seals:
        message = "the erasure mark names no erased field (its seals are missing)"
        return [ChainProblem("erased_rewritten", row["seq"], message)]
    fields = rewritten_fields(wire_from_row(row), seals)
    if not fields:
        return []
    message = (
        f"erased field(s) {', '.join(fields)} of a "
        f"{row['type']} event hold something other than the erasure marker "
        f"({ERASED_TEXT!r}): rewritten after the erasure"
    )
    return [ChainProblem("erased_rewritten", row["seq"], message)]


def _stored_before_erasure(session: ExamSession) -> Callable[[Mapping[str, Any]], bool]:
    """Whether a row was stored before the session's latest erasure: its seq is not above the
    last event an erasure marked (seqs are chained), or it was recorded before the erasure (an
    event stored later, such as a late irregularity report, was never erased)."""
    latest = PersonalDataErasure.objects.filter(session=session).aggregate(at=Max("created_at"))
    if latest["at"] is None:
        return lambda row: False
    marked = SessionEvent.objects.filter(session=session, erased__isnull=False).aggregate(
        seq=Max("seq")
    )
    last_marked = marked["seq"] or 0
    return lambda row: row["seq"] <= last_marked or row["recorded_at"] <= latest["at"]


def _undone(seq: int, fields: list[str]) -> ChainProblem:
    """An event of an erased session holding personal fields without an erasure mark: every
    erasure erases every sealed personal field of the session, so the mark was removed and the
    words put back (the chain cannot tell: they may be the very words it linked)."""
    message = (
        f"personal field(s) {', '.join(fields)} hold words without an erasure mark, though "
        "the session was erased: the erasure was undone in the database"
    )
    return ChainProblem("erasure_undone", seq, message)


def verify_log(*, session_id: uuid.UUID | str) -> list[ChainProblem]:
    """Check the session's stored log against its hash chain (under its ``chain_version``:
    erased personal fields count as what the erasure kept), its recorded head, the head anchors
    kept outside the database (``sessions.chain_anchor``) and its erasure records (every erased
    event must name an erasure of this session; under version 1 also match its MAC'd record
    outside the database: ``unrecorded_erasure``; every erased value must be exactly the
    erasure marker: ``erased_rewritten``; once the session was erased, no event may hold a
    sealed personal field without an erasure mark: ``erasure_undone``).

    Raises ``ExamSession.DoesNotExist`` for an unknown session. An empty list means intact.
    """
    session = ExamSession.objects.get(pk=session_id)
    hashes: dict[int, str] = {}
    erasures = {
        str(pk)
        for pk in PersonalDataErasure.objects.filter(session=session).values_list("pk", flat=True)
    }
    anchored = chain_anchor.anchored_erasures(session.pk) if erasures else {}
    unrecorded: list[ChainProblem] = []
    key = chain_anchor.seal_key()
    before_erasure = _stored_before_erasure(session)

    def records() -> Iterator[ChainRecord]:
        for row in iter_rows(session_id=session.pk):
            hashes[row["seq"]] = row["hash"]
            kept, found = _erasure_check(
                row, version=session.chain_version, erasures=erasures, anchored=anchored
            )
            wire = wire_from_row(row)
            if row["erased"] is None and before_erasure(row) and personal_fields(wire):
                found.append(_undone(row["seq"], personal_fields(wire)))
            unrecorded.extend(found)
            yield ChainRecord(row["seq"], wire, row["hash"], row["prev_hash"], kept)

    def digest(record: ChainRecord) -> str:
        return chain_digest(record.wire, version=session.chain_version, key=key, kept=record.kept)

    problems = verify_chain(
        records(), last_seq=session.last_seq, head_hash=session.head_hash, digest=digest
    )
    anchors = chain_anchor.check_anchors(
        session_id=session.pk, last_seq=session.last_seq, hashes=hashes
    )
    return problems + unrecorded + anchors


@dataclass(frozen=True, slots=True)
class MaterialForBot:
    """What the bot hands the runtime for one stored material (``AttachMaterial``)."""

    material_id: str
    kind: str
    text: str


def materials_for_bot(*, session_id: uuid.UUID | str) -> list[MaterialForBot]:
    """Every stored material of the session with text, oldest first (the bot attaches each;
    the runtime ignores an id it was given before). None once the session is erased."""
    rows = CandidateMaterial.objects.filter(
        session_id=uuid.UUID(str(session_id)), session__erased_at__isnull=True
    )
    return [
        MaterialForBot(material_id=row.material_id, kind=row.kind, text=row.text)
        for row in rows.exclude(text="").order_by("created_at").only("id", "kind", "text")
    ]


def materials_of(*, user: Requester, session: ExamSession) -> list[CandidateMaterial]:
    """The session's materials ``user`` may see (``CandidateMaterial.objects.visible_to``),
    without the original bytes."""
    rows = CandidateMaterial.objects.visible_to(user).filter(session=session)
    return list(rows.defer("original").order_by("kind"))
