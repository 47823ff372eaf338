"""Pseudonymising a candidate's personal data while their sessions' chains still verify
(docs/privacy.md, docs/spec/audit-chain.md).

* :func:`session_plan` says what erasing a session would do (the dry run of
  ``manage.py erase_personal_data``), or why it cannot be erased.
* :func:`erase_session` does it, in one transaction with the session row locked: it records a
  :class:`~sessions.models.PersonalDataErasure` (who asked, when, why), swaps every personal
  field of the session's stored events (``ioa.events.personal``) for its pseudonym and keeps
  its seal beside the row (the only UPDATE the event-log triggers let through, and only under
  that record; a field chain version 2 hashes in clear keeps the linked digest instead,
  ``CLEAR_PERSONAL_FIELDS``), clears what the candidate typed into the inbox, their materials,
  the proctors' words in their action requests, staff's reasons for a start-window override, refused
  commands' reasons and the admin's log entries about the session's rows, tells the apps above
  (``sessions.signals.personal_data_erased``: marking, the bot, LTI and webhooks erase their
  copies in the same transaction), and stamps ``ExamSession.erased_at``. Marks, levels,
  states, times and the structure of the log stay; ``verify_session_log`` still passes.
* :func:`erase_candidate` erases each of a candidate's sessions and pseudonymises the account
  (:func:`account_pseudonymise`: name, email, username, sign-in, invitation notes and addresses,
  the LTI platform user's name, email and picture, the admin's log entries naming them, their
  signed-in sessions and API tokens).

Every column that can hold text is classified as erased here (or by a receiver) or kept, with
why: ``tests/test_personal_data_columns.py`` (docs/privacy.md).
* :func:`expired_sessions`: the sessions past ``VIVA_RETENTION_DAYS``.

A chain version 1 session (stored before version 2) linked its events' clear bodies: each erased
event keeps the body digest the chain linked and the digest of its erased body, both also
written, under a MAC, to ``<session>.erasures.jsonl`` beside the head anchors
(``sessions.chain_anchor.anchor_erasure``) before the transaction commits.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.contrib.sessions.models import Session
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import Q, QuerySet
from django.utils import timezone
from lti_tool.models import LtiUser

from accounts.models import ApiToken, User
from ioa.events import TERMINAL_STATES, ExamState, body_digest
from ioa.events.personal import (
    CHAIN_V2,
    ERASABLE_TYPES,
    ERASED_TEXT,
    chain_digest,
    clear_fields,
    erase,
)
from sessions import chain_anchor, signals, sqlite_guard
from sessions.models import (
    CandidateInput,
    CandidateMaterial,
    ExamSession,
    PersonalDataErasure,
    ProcessedCommand,
    ProctorActionRequest,
    SessionEvent,
    WindowOverride,
)
from sessions.selectors import wire_from_row

ERASABLE_STATES = frozenset({*(s.value for s in TERMINAL_STATES), ExamState.SCHEDULED.value})
"""A running exam is never erased under the bot's feet; end it first."""


class ErasureRefused(Exception):
    """The session cannot be erased (the message says why); nothing was changed."""


@dataclass(frozen=True, slots=True)
class ErasurePlan:
    """What erasing one session does: events and fields pseudonymised, inputs cleared."""

    session_id: uuid.UUID
    events: int
    fields: int
    inputs: int
    proctor_requests: int


def _personal_rows(session: ExamSession) -> QuerySet[SessionEvent]:
    return SessionEvent.objects.filter(
        session=session, erased__isnull=True, type__in=sorted(ERASABLE_TYPES)
    ).order_by("seq")


def _check_erasable(session: ExamSession) -> None:
    if session.is_preview:
        raise ErasureRefused(f"session {session.pk} is an author's preview")
    if session.erased_at is not None:
        raise ErasureRefused(f"session {session.pk} was erased already ({session.erased_at:%F})")
    if session.state not in ERASABLE_STATES:
        raise ErasureRefused(f"session {session.pk} is running ({session.state}); end it first")


def session_plan(session: ExamSession) -> ErasurePlan:
    """What :func:`erase_session` would change; raises :class:`ErasureRefused` if it would not."""
    _check_erasable(session)
    return _plan(session)


def _plan(session: ExamSession) -> ErasurePlan:
    events = fields = 0
    for row in _personal_rows(session):
        wire = wire_from_row(row)
        _, seals = erase(wire, key=chain_anchor.seal_key())
        count = len(seals) + len(clear_fields(wire))
        events, fields = events + bool(count), fields + count
    return ErasurePlan(
        session_id=session.pk,
        events=events,
        fields=fields,
        inputs=CandidateInput.objects.filter(session=session).exclude(payload={}).count(),
        proctor_requests=ProctorActionRequest.objects.filter(session=session)
        .exclude(reason=ERASED_TEXT)
        .count(),
    )


@contextmanager
def _erasing(erasure_id: str) -> Iterator[CursorWrapper]:
    """Open the event-log triggers' one exemption for this erasure, in this transaction."""
    db = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        if db.vendor == "postgresql":
            cursor.execute("SELECT set_config('viva.erasure', %s, true)", [erasure_id])
            try:
                yield cursor
            finally:
                cursor.execute("SELECT set_config('viva.erasure', '', true)")
        else:
            with sqlite_guard.erasing(db, erasure_id):
                yield cursor


_SWAP_POSTGRES = (
    "UPDATE exam_sessions_sessionevent SET payload = %s::jsonb, erased = %s::jsonb WHERE id = %s"
)
_SWAP_SQLITE = "UPDATE exam_sessions_sessionevent SET payload = %s, erased = %s WHERE id = %s"


def _swap_personal_fields(session: ExamSession, erasure: PersonalDataErasure) -> None:
    postgres = connections[DEFAULT_DB_ALIAS].vendor == "postgresql"
    sql = _SWAP_POSTGRES if postgres else _SWAP_SQLITE
    erasure_id = str(erasure.pk)
    recorded: dict[int, tuple[str, str]] = {}
    with _erasing(erasure_id) as cursor:
        for row in _personal_rows(session):
            swap = _erased_row(wire_from_row(row), session.chain_version, erasure_id)
            if swap is None:
                continue
            payload, erased = swap
            if "digest" in erased:
                recorded[row.seq] = (str(erased["digest"]), str(erased["redacted"]))
            cursor.execute(sql, [_json(payload), _json(erased), row.pk])
    if recorded:
        chain_anchor.anchor_erasure(session_id=session.pk, erasure_id=erasure_id, digests=recorded)


def _erased_row(
    wire: dict[str, object], version: int, erasure_id: str
) -> tuple[dict[str, object], dict[str, object]] | None:
    """The erased payload of one event and its erasure mark (None: nothing personal). The mark
    keeps each sealed field's seal; when the chain linked clear text that the swap changes (a
    version 1 chain, or a field version 2 hashes in clear: ``CLEAR_PERSONAL_FIELDS``) it also
    keeps the digest the chain linked and the digest of the erased body (both recorded outside
    the database too, by the caller)."""
    key = chain_anchor.seal_key()
    payload, seals = erase(wire, key=key)
    cleared = clear_fields(wire)
    if not seals and not cleared:
        return None
    erased: dict[str, object] = {
        "erasure": erasure_id,
        "seals": {**seals, **dict.fromkeys(cleared)},
    }
    if version < CHAIN_V2:  # the chain linked the clear body
        erased["seals"] = dict.fromkeys([*seals, *cleared])
        erased["digest"] = body_digest(wire)
        erased["redacted"] = body_digest({**wire, "payload": payload})
    elif cleared:  # the sealed form the chain linked still holds these fields in clear
        erased["digest"] = chain_digest(wire, version=version, key=key)
        erased["redacted"] = chain_digest(
            {**wire, "payload": payload}, version=version, key=key, kept=seals
        )
    return payload, erased


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


COVERAGE = 2
"""What an erasure covers, recorded in its ``counts`` (``coverage``): 2 is every column
``tests/test_personal_data_columns.py`` lists as erased and the event fields chain version 2
hashes in clear (issue #32); an erasure without it (1) left those as they were, and
:func:`erasure_complete` completes it."""


def _counts(plan: ErasurePlan) -> dict[str, int]:
    return {
        "events": plan.events,
        "fields": plan.fields,
        "inputs": plan.inputs,
        "proctorRequests": plan.proctor_requests,
        "coverage": COVERAGE,
    }


def _erase_locked(
    locked: ExamSession, *, kind: str, requested_by: User | None, reason: str, plan: ErasurePlan
) -> PersonalDataErasure:
    """Record the erasure and erase what is not erased yet (the caller holds the row lock)."""
    erasure = PersonalDataErasure.objects.create(
        session=locked, kind=kind, requested_by=requested_by, reason=reason, counts=_counts(plan)
    )
    _swap_personal_fields(locked, erasure)
    signals.personal_data_erased.send(sender=signals.SENDER, session_id=locked.pk, erasure=erasure)
    _session_rows_erased(locked)
    return erasure


def erase_session(
    *, session: ExamSession, kind: str, requested_by: User | None, reason: str
) -> PersonalDataErasure:
    """Pseudonymise one session's personal data (see the module docstring); raises
    :class:`ErasureRefused` (nothing changed) when it cannot be erased."""
    if not reason.strip():
        raise ErasureRefused("an erasure needs a reason")
    with transaction.atomic():
        locked = ExamSession.objects.select_for_update().get(pk=session.pk)
        plan = session_plan(locked)
        erasure = _erase_locked(
            locked, kind=kind, requested_by=requested_by, reason=reason.strip(), plan=plan
        )
        ExamSession.objects.filter(pk=locked.pk).update(erased_at=erasure.created_at)
    session.erased_at = erasure.created_at
    return erasure


def incomplete_erasures() -> list[ExamSession]:
    """Erased sessions whose latest erasure predates :data:`COVERAGE` (see there)."""
    latest: dict[uuid.UUID, dict[str, object]] = {}
    rows = PersonalDataErasure.objects.order_by("session_id", "created_at")
    for session_id, counts in rows.values_list("session_id", "counts"):
        latest[session_id] = counts if isinstance(counts, dict) else {}
    stale = [pk for pk, counts in latest.items() if counts.get("coverage", 1) != COVERAGE]
    return list(
        ExamSession.objects.filter(pk__in=stale, erased_at__isnull=False).order_by("erased_at")
    )


def erasure_plan_complete(session: ExamSession) -> ErasurePlan:
    """What :func:`erasure_complete` would erase in the session's log and rows."""
    return _plan(session)


def erasure_complete(
    *, session: ExamSession, requested_by: User | None, reason: str
) -> PersonalDataErasure:
    """Complete an earlier erasure of ``session`` with what it did not cover (:data:`COVERAGE`):
    the events not erased then (their types had no personal field then), every row beside the
    log and the apps' copies; an erased candidate's account is pseudonymised again (the admin's
    log about it, signed-in sessions, tokens). A new erasure record (same kind, its reason says
    which erasure it completes) accounts for the events erased now; events erased before stay
    as they are (the triggers let an event be erased once)."""
    if not reason.strip():
        raise ErasureRefused("completing an erasure needs a reason")
    with transaction.atomic():
        locked = ExamSession.objects.select_for_update().get(pk=session.pk)
        first = locked.erasures.order_by("created_at").first()
        if locked.erased_at is None or first is None:
            raise ErasureRefused(f"session {locked.pk} was never erased: erase it")
        text = f"completing the erasure of {first.created_at:%F} ({first.pk}): {reason.strip()}"
        erasure = _erase_locked(
            locked, kind=first.kind, requested_by=requested_by, reason=text, plan=_plan(locked)
        )
        if locked.candidate.username.startswith("erased-"):  # the account was erased too
            account_pseudonymise(locked.candidate)
    return erasure


def _session_rows_erased(session: ExamSession) -> None:
    """The session's own rows beside the log: what the candidate typed into the inbox, the
    proctors' words in their action requests (reason, an instruction's text, the answer they
    got), the candidate's materials (the file, its text and its name; the checksums stay),
    staff's reasons for a start window of the candidate's own (often health or family
    circumstances), the runtime's reasons for refused commands, and the admin's log entries
    about any of the session's objects (their names quote these texts)."""
    CandidateInput.objects.filter(session=session).update(payload={})
    CandidateMaterial.objects.filter(session=session).update(
        original=b"", text="", filename=ERASED_TEXT, size=0
    )
    for request in ProctorActionRequest.objects.filter(session=session):
        params = {
            key: ERASED_TEXT if key in _FREE_PARAMS and value else value
            for key, value in request.params.items()
        }
        ProctorActionRequest.objects.filter(pk=request.pk).update(
            reason=ERASED_TEXT, params=params, message=ERASED_TEXT if request.message else ""
        )
    WindowOverride.objects.filter(session=session).update(reason=ERASED_TEXT)
    ProcessedCommand.objects.filter(session=session).exclude(reason="").update(reason=ERASED_TEXT)
    LogEntry.objects.filter(object_repr__contains=str(session.pk)).update(
        object_repr=ERASED_TEXT, change_message=ERASED_TEXT
    )


_FREE_PARAMS = frozenset({"text", "reason", "note", "message"})
"""The free-text parameters of a proctor's request (an instruction's words); the others are
modes, seconds, scopes and categories."""


def _identifiers(user: User) -> list[str]:
    """The strings that name the person: username, email, names (what the admin's log quotes)."""
    names = [user.username, user.email, user.display_name]
    names += [f"{user.first_name} {user.last_name}".strip(), user.last_name]
    return sorted(n for n in {*names} if len(n) >= 4)  # a short name alone matches others


def _admin_log_erased(user: User, identifiers: list[str]) -> None:
    """The admin's log keeps who changed which object when; the object's name and the change
    message become the marker wherever they concern the person (their account, or any text
    naming them)."""
    account = ContentType.objects.get_for_model(User)
    naming = Q(content_type=account, object_id=str(user.pk))
    for name in identifiers:
        naming |= Q(object_repr__icontains=name) | Q(change_message__icontains=name)
    LogEntry.objects.filter(naming).update(object_repr=ERASED_TEXT, change_message=ERASED_TEXT)


def _signed_in_sessions_ended(user: User) -> None:
    """Delete the person's signed-in sessions (their data names the account)."""
    ended = [
        row.pk
        for row in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if str(row.get_decoded().get("_auth_user_id")) == str(user.pk)
    ]
    Session.objects.filter(pk__in=ended).delete()


def account_pseudonymise(user: User) -> None:
    """Replace a candidate's name, email and username by a pseudonym, end their sign-in, and
    clear what their invitations, LTI platform user and the admin's log say about them; their
    signed-in sessions end and their API tokens are deleted."""
    with transaction.atomic():
        _admin_log_erased(user, _identifiers(user))
        _signed_in_sessions_ended(user)
        ApiToken.objects.filter(user=user).delete()
        user.username = f"erased-{uuid.uuid4().hex[:12]}"
        user.first_name = user.last_name = user.display_name = user.email = ""
        user.is_active = False
        user.set_unusable_password()
        user.save()
        user.invitations.update(note="", used_from=None, next_path="")
        LtiUser.objects.filter(auth_user=user).update(
            given_name="", family_name="", name="", email="", picture_url=""
        )


def erase_candidate(
    *, candidate: User, requested_by: User | None, reason: str
) -> list[PersonalDataErasure]:
    """Erase every session of ``candidate`` not erased yet, then pseudonymise the account.
    All or nothing: one session that cannot be erased refuses the whole request."""
    if candidate.role != "candidate":
        raise ErasureRefused(f"{candidate.username} is not a candidate")
    with transaction.atomic():
        pending = ExamSession.objects.filter(
            candidate=candidate, is_preview=False, erased_at__isnull=True
        ).order_by("created_at")
        done = [
            erase_session(
                session=s,
                kind=PersonalDataErasure.Kind.REQUEST,
                requested_by=requested_by,
                reason=reason,
            )
            for s in pending
        ]
        account_pseudonymise(candidate)
    return done


def expired_sessions(*, now: datetime | None = None) -> QuerySet[ExamSession]:
    """Sessions over for more than ``VIVA_RETENTION_DAYS`` days and not erased yet (none when
    the setting is 0: personal data is kept until erased on request)."""
    days = int(getattr(settings, "VIVA_RETENTION_DAYS", 0) or 0)
    if days <= 0:
        return ExamSession.objects.none()
    cutoff = (now or timezone.now()) - timedelta(days=days)
    return ExamSession.objects.filter(
        is_preview=False,
        erased_at__isnull=True,
        state__in=sorted(s.value for s in TERMINAL_STATES),
        updated_at__lt=cutoff,
    ).order_by("updated_at")
