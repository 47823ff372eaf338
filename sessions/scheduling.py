"""Scheduling a sitting: the sitting itself, its candidates (one by one or from CSV), their
accommodations and their invitation links (docs/proctoring.md). Writes only; keyword-only
arguments; each write is atomic.

* :func:`sitting_create` — a proctor or an author schedules a published version they may see
  (``PublishedVersion.objects.visible_to``). A proctor who creates a sitting proctors it.
* :func:`candidate_add` — one candidate by email (the account is created on first use, as
  ``accounts.services.candidate_get_or_create`` does), with optional accommodations. A
  candidate is in a sitting once.
* :func:`candidates_import` — a CSV with a header row: ``email`` (required), ``name``,
  ``extra_time`` (1.00-3.00), ``text_mode``, ``slower_speech`` (yes/no, true/false, 1/0).
  Each row is added on its own (a bad row does not stop the others) and reported:
  :class:`ImportRow` with its line number, ``added``/``skipped``/``error`` and the messages.
* :func:`invitations_send` — a signed, single-use invitation link per candidate
  (``accounts.services.invitation_create``) that lands on ``/exam/<session id>/``; the previous
  unused link of the session is revoked. With ``VIVA_INVITATION_EMAIL_FROM`` set, the link is
  also emailed (``django.core.mail``); the links are always returned, to be shown or exported.
* Accommodations: ``sessions.exam_room.accommodations_set`` (refused once the exam started).

Every change to a sitting's roster tells its overview sockets after commit
(:func:`notify_sitting_changed`).
"""

from __future__ import annotations

import csv
import io
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Final

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from accounts.invitation_tokens import make_token
from accounts.models import Invitation, User
from accounts.services import (
    IssuedInvitation,
    candidate_get_or_create,
    invitation_create,
    invitation_revoke,
)
from publishing.models import PublishedVersion
from sessions.exam_room import accommodations_set
from sessions.models import ExamSession, Sitting

logger = logging.getLogger(__name__)

MAX_CSV_BYTES: Final = 1_000_000
MAX_CSV_ROWS: Final = 2000
TRUE: Final = frozenset({"yes", "y", "true", "1", "x"})
FALSE: Final = frozenset({"no", "n", "false", "0", ""})
TERMINAL: Final = frozenset({"completed", "aborted", "expired"})


def sitting_group(sitting_id: uuid.UUID | str) -> str:
    """The Channels group of a sitting's overview sockets."""
    return f"proctor-sitting.{uuid.UUID(str(sitting_id)).hex}"


def notify_sitting_changed(sitting_id: uuid.UUID | str) -> None:
    """After commit, tell the sitting's overview sockets that its roster changed."""

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(sitting_group(sitting_id), {"type": "sitting.changed"})
        except Exception:  # best effort: the sockets re-read the roster periodically anyway
            logger.exception("could not notify the overview of sitting %s", sitting_id)

    transaction.on_commit(send)


# --- the sitting ----------------------------------------------------------------------------------


@transaction.atomic
def sitting_create(
    *,
    user: User,
    version: PublishedVersion,
    title: str,
    proctor_authorises_start: bool = False,
    scheduled_for: datetime | None = None,
    start_cutoff_at: datetime | None = None,
    is_practice: bool = False,
) -> Sitting:
    """Schedule ``version`` (which ``user`` must be able to see) as a new sitting. Its start
    window (``sessions.windows``) opens at ``scheduled_for`` and closes at the late-start
    cut-off ``start_cutoff_at``, which must come after it. A practice sitting
    (``is_practice``, ``sessions.practice``) never waits for a proctor to authorise a start."""
    if is_practice and proctor_authorises_start:
        raise ValidationError(
            {"proctor_authorises_start": ["A practice sitting starts without a proctor."]}
        )
    if not PublishedVersion.objects.visible_to(user).filter(pk=version.pk).exists():
        raise ValidationError({"version": ["No such published assessment."]})
    title = (title or "").strip() or version.title
    if len(title) > 300:
        raise ValidationError({"title": ["At most 300 characters."]})
    if scheduled_for and start_cutoff_at and start_cutoff_at <= scheduled_for:
        raise ValidationError(
            {"start_cutoff_at": ["The late-start cut-off must follow the start."]}
        )
    sitting = Sitting.objects.create(
        version=version,
        title=title,
        created_by=user,
        proctor_authorises_start=proctor_authorises_start,
        scheduled_for=scheduled_for,
        start_cutoff_at=start_cutoff_at,
        is_practice=is_practice,
    )
    if getattr(user, "role", None) == "proctor":
        sitting.proctors.add(user)
    return sitting


# --- candidates -----------------------------------------------------------------------------------


def _flag(value: object, column: str) -> bool | None:
    """A yes/no cell (``None`` when the column is absent)."""
    if value is None:
        return None
    text = str(value).strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise ValidationError(f"{column}: write yes or no, not {value!r}")


def candidate_add(
    *,
    sitting: Sitting,
    email: str,
    display_name: str = "",
    extra_time_multiplier: Decimal | float | str | None = None,
    text_mode_required: bool | None = None,
    slower_speech: bool | None = None,
) -> ExamSession:
    """Add one candidate (module docstring); ``ValidationError`` with the reason otherwise."""
    session = _add(
        sitting=sitting,
        email=email,
        display_name=display_name,
        extra_time_multiplier=extra_time_multiplier,
        text_mode_required=text_mode_required,
        slower_speech=slower_speech,
    )
    notify_sitting_changed(sitting.pk)
    return session


@transaction.atomic
def _add(
    *,
    sitting: Sitting,
    email: str,
    display_name: str,
    extra_time_multiplier: Decimal | float | str | None,
    text_mode_required: bool | None,
    slower_speech: bool | None,
) -> ExamSession:
    address = (email or "").strip().lower()
    try:
        validate_email(address)
    except ValidationError:
        raise ValidationError({"email": [f"{email!r} is not an email address."]}) from None
    try:
        candidate = candidate_get_or_create(email=address, display_name=display_name.strip())
    except ValueError as exc:
        raise ValidationError({"email": [str(exc)]}) from None
    if ExamSession.objects.filter(sitting=sitting, candidate=candidate).exists():
        raise ValidationError({"email": [f"{address} is already in this sitting."]})
    if display_name.strip() and not candidate.display_name:
        candidate.display_name = display_name.strip()[:150]
        candidate.save(update_fields=["display_name"])
    session = ExamSession.objects.create(sitting=sitting, candidate=candidate)
    if any(v is not None for v in (extra_time_multiplier, text_mode_required, slower_speech)):
        session = accommodations_set(
            session=session,
            extra_time_multiplier=extra_time_multiplier,
            text_mode_required=text_mode_required,
            slower_speech=slower_speech,
        )
    return session


@dataclass
class ImportRow:
    """One CSV row's outcome: ``added``, ``skipped`` (already in the sitting) or ``error``."""

    line: int
    email: str
    outcome: str
    messages: list[str] = field(default_factory=list)
    session_id: str | None = None


@dataclass
class ImportReport:
    """What a CSV import did, row by row (``problems``: a file-level error, nothing done)."""

    rows: list[ImportRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for r in self.rows if r.outcome == outcome)


def _messages(error: ValidationError) -> list[str]:
    if hasattr(error, "error_dict"):
        return [m for messages in error.message_dict.values() for m in messages]
    return list(error.messages)


def candidates_import(*, sitting: Sitting, data: bytes | str) -> ImportReport:
    """Add the candidates of a CSV file (module docstring). Rows are independent."""
    report = ImportReport()
    raw = data.encode() if isinstance(data, str) else data
    if len(raw) > MAX_CSV_BYTES:
        report.problems.append(f"The file is larger than {MAX_CSV_BYTES // 1000} kB.")
        return report
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        report.problems.append("The file is not UTF-8 text. Save it as CSV (UTF-8).")
        return report
    reader = csv.DictReader(io.StringIO(text))
    columns = {(c or "").strip().lower() for c in reader.fieldnames or []}
    if "email" not in columns:
        report.problems.append("The first row must name the columns, with an 'email' column.")
        return report
    known = {"email", "name", "extra_time", "text_mode", "slower_speech"}
    unknown = sorted(columns - known)
    if unknown:
        report.problems.append(f"Unknown column(s): {', '.join(unknown)}.")
        return report
    for index, record in enumerate(reader):
        line = index + 2
        if index >= MAX_CSV_ROWS:
            report.problems.append(f"Only the first {MAX_CSV_ROWS} rows were read.")
            break
        cells = {(k or "").strip().lower(): (v or "").strip() for k, v in record.items() if k}
        email = cells.get("email", "")
        if not any(cells.values()):
            continue  # a blank line
        try:
            extra = cells.get("extra_time") or None
            session = _add(
                sitting=sitting,
                email=email,
                display_name=cells.get("name", ""),
                extra_time_multiplier=extra,
                text_mode_required=_flag(cells.get("text_mode"), "text_mode")
                if "text_mode" in cells
                else None,
                slower_speech=_flag(cells.get("slower_speech"), "slower_speech")
                if "slower_speech" in cells
                else None,
            )
        except ValidationError as error:
            messages = _messages(error)
            duplicate = any("already in this sitting" in m for m in messages)
            report.rows.append(
                ImportRow(line, email, "skipped" if duplicate else "error", messages)
            )
            continue
        report.rows.append(ImportRow(line, email, "added", [], str(session.pk)))
    if report.count("added"):
        notify_sitting_changed(sitting.pk)
    return report


# --- invitations ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SentInvitation:
    """A link issued for one session (``emailed``: also sent by email)."""

    session: ExamSession
    url: str
    expires_at: datetime
    emailed: bool


def exam_path(session: ExamSession) -> str:
    """Where an exam's invitation lands: the candidate's way into it."""
    return f"/exam/{session.pk}/"


def invitation_url(invitation: Invitation) -> str:
    """The link of an invitation (tokens are derived from the invitation's id)."""
    return IssuedInvitation(invitation=invitation, token=make_token(invitation.id)).url


def invitations_send(
    *,
    sitting: Sitting,
    user: User,
    sessions: Iterable[ExamSession] | None = None,
    ttl: timedelta | None = None,
) -> list[SentInvitation]:
    """Issue (and, when configured, email) an invitation link per session of ``sitting`` —
    ``sessions`` or every session not over yet. Sessions that are over are skipped."""
    chosen = list(sessions) if sessions is not None else list(sitting.sessions.all())
    sent: list[SentInvitation] = []
    for session in chosen:
        if session.sitting_id != sitting.pk:
            raise ValidationError("That session is not in this sitting.")
        if session.state in TERMINAL:
            continue
        sent.append(_invite(session=session, user=user, ttl=ttl))
    if sent:
        notify_sitting_changed(sitting.pk)
    return sent


@transaction.atomic
def _invite(*, session: ExamSession, user: User, ttl: timedelta | None) -> SentInvitation:
    row = (
        ExamSession.objects.select_for_update()
        .select_related("candidate", "sitting")
        .get(pk=session.pk)
    )
    if row.invitation is not None:
        invitation_revoke(invitation=row.invitation)
    issued = invitation_create(
        candidate=row.candidate,
        created_by=user,
        ttl=ttl,
        next_path=exam_path(row),
        note=f"sitting {row.sitting_id}"[:200],
    )
    row.invitation = issued.invitation
    row.invited_at = timezone.now()
    row.save(update_fields=["invitation", "invited_at"])
    emailed = _email(row, issued.url, issued.invitation.expires_at)
    return SentInvitation(row, issued.url, issued.invitation.expires_at, emailed)


def _email(session: ExamSession, url: str, expires_at: datetime) -> bool:
    """Email the link when ``VIVA_INVITATION_EMAIL_FROM`` is set (after commit); ``False``
    when email is not configured."""
    sender = getattr(settings, "VIVA_INVITATION_EMAIL_FROM", "")
    address = session.candidate.email
    if not sender or not address:
        return False
    subject = f"Your oral examination: {session.sitting.title}"
    body = (
        f"Hello {session.candidate.name},\n\n"
        f'This is your personal link to the oral examination "{session.sitting.title}":\n\n'
        f"{url}\n\nIt works once and expires on {expires_at:%d %B %Y, %H:%M} UTC. "
        "Do not share it.\n"
    )

    def deliver() -> None:
        try:
            send_mail(subject, body, sender, [address])
        except Exception:
            logger.exception("the invitation email to %s could not be sent", address)

    transaction.on_commit(deliver)
    return True


def invitation_state(session: ExamSession) -> str:
    """``none``, or the state of the session's latest invitation (usable, used, expired...)."""
    return session.invitation.state if session.invitation is not None else "none"
