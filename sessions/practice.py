"""Practice sittings (docs/spec/practice-sittings.md): unlimited attempts within the sitting's
start window, formative feedback after each attempt, never marked for the record.

A candidate's attempts in a sitting are :class:`~sessions.models.ExamSession` rows numbered by
``attempt``; each attempt after the first ``follows`` the one it repeats. ``follows`` is
one-to-one, so it is the idempotency key of "Practise again": a second request to repeat the
same attempt (a double click, a resent form) finds the attempt the first one made.

* :func:`practice_again` — the next attempt (service).
* :func:`attempts_of` — the candidate's attempts in the session's sitting, oldest first.
* :func:`latest_attempt` — the candidate's newest attempt in a sitting.
* :func:`may_practise_again` — whether "Practise again" is offered on an attempt's pages.
* :func:`session_for_candidate` — the session a candidate enters a sitting through (an LMS
  launch): the newest attempt, else a new first one.

Feedback itself is marking's (``marking.services.practice_feedback_record``): sessions never
imports marking.
"""

from __future__ import annotations

import logging

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from accounts.models import User
from sessions.exam_room import is_over
from sessions.models import ExamSession, Sitting
from sessions.windows import WindowStatus, window_status

logger = logging.getLogger(__name__)


def attempts_of(session: ExamSession) -> list[ExamSession]:
    """The candidate's attempts in ``session``'s sitting, oldest first (one outside practice)."""
    return list(
        ExamSession.objects.filter(
            sitting_id=session.sitting_id, candidate_id=session.candidate_id, is_preview=False
        ).order_by("attempt", "created_at")
    )


def latest_attempt(*, sitting: Sitting, candidate: User) -> ExamSession | None:
    """The candidate's newest attempt in ``sitting`` (``None``: not in it)."""
    return (
        ExamSession.objects.filter(sitting=sitting, candidate=candidate, is_preview=False)
        .order_by("-attempt", "-created_at")
        .first()
    )


def may_practise_again(session: ExamSession) -> bool:
    """Whether the attempt's pages offer "Practise again": a practice sitting, the attempt is
    over and the newest one, and the start window is open now."""
    if not session.sitting.is_practice or not is_over(session):
        return False
    latest = latest_attempt(sitting=session.sitting, candidate=session.candidate)
    if latest is None or latest.pk != session.pk:
        return False
    return window_status(session) is WindowStatus.OPEN


def _refuse(session: ExamSession) -> None:
    if not session.sitting.is_practice:
        raise ValidationError(_("Only a practice sitting can be taken again."))
    if not is_over(session):
        raise ValidationError(_("Finish this attempt before you start another."))
    if window_status(session) is not WindowStatus.OPEN:
        raise ValidationError(_("This practice is not open now."))


@transaction.atomic
def practice_again(*, session: ExamSession) -> ExamSession:
    """The attempt that repeats ``session`` (a candidate's attempt in a practice sitting).

    Idempotent: when an attempt already follows ``session`` it is returned unchanged. Else
    ``session`` must be over and the start window open (``ValidationError`` otherwise) and a new
    attempt is created, numbered after the candidate's newest, with the same accommodations.
    Each attempt goes through the whole journey (identity and consent, briefing, answer mode):
    consent is given per recorded session.
    """
    row = ExamSession.objects.select_for_update().select_related("sitting").get(pk=session.pk)
    follower = ExamSession.objects.filter(follows=row).first()
    if follower is not None:
        return follower
    _refuse(row)
    newest = latest_attempt(sitting=row.sitting, candidate=row.candidate)
    number = (newest.attempt if newest is not None else row.attempt) + 1
    try:
        with transaction.atomic():
            attempt = ExamSession.objects.create(
                sitting=row.sitting,
                candidate=row.candidate,
                attempt=number,
                follows=row,
                extra_time_multiplier=row.extra_time_multiplier,
                text_mode_required=row.text_mode_required,
                slower_speech=row.slower_speech,
            )
    except IntegrityError:  # made concurrently under another lock order: the same attempt
        return ExamSession.objects.get(follows=row)
    logger.info("practice attempt %s of sitting %s: session %s", number, row.sitting_id, attempt.pk)
    return attempt


@transaction.atomic
def session_for_candidate(*, sitting: Sitting, candidate: User) -> tuple[ExamSession, bool]:
    """The session through which ``candidate`` enters ``sitting``: their newest attempt, else a
    new first attempt (``created`` True). Outside practice there is only ever one."""
    found = latest_attempt(sitting=sitting, candidate=candidate)
    if found is not None:
        return found, False
    return ExamSession.objects.create(sitting=sitting, candidate=candidate), True
