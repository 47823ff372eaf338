"""Start windows: when a candidate may start an exam (docs/proctoring.md, "Start windows").

A sitting's start window opens at ``Sitting.scheduled_for`` and closes at the late-start
cut-off ``Sitting.start_cutoff_at``; either may be empty (open from now on; no cut-off). Staff
may give one candidate their own window with a reason (:func:`window_override`, a
:class:`~sessions.models.WindowOverride` row; the latest counts, earlier ones stay on record).

Outside the window a candidate who has not started cannot: the journey pages show when the
exam opens (or that the start window closed) instead of the next step, the page starts no
bot, and the session socket refuses ``candidate_ready``. An exam already started (or over) is
never stopped by its window closing: its own time budgets govern it.

* :func:`window_for` — the effective window of a session (its override, else its sitting's).
* :func:`window_status` — ``open``, ``not_yet`` or ``closed`` at a given moment.
* :func:`may_start` — whether the candidate may start now (True once the exam has started).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Final

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from sessions.models import ExamSession, WindowOverride

logger = logging.getLogger(__name__)

NOT_STARTED: Final = frozenset({"scheduled", "ready"})
"""Exam states in which the window still applies (the candidate has not started)."""
MIN_REASON_CHARS: Final = 5


class WindowStatus(StrEnum):
    OPEN = "open"
    NOT_YET = "not_yet"
    """The window has not opened yet."""
    CLOSED = "closed"
    """The late-start cut-off has passed."""


@dataclass(frozen=True, slots=True)
class Window:
    """A start window: ``opens_at`` (``None``: open already) to ``closes_at`` (``None``: no
    late-start cut-off). ``override`` is the per-candidate override it comes from, if any."""

    opens_at: datetime | None
    closes_at: datetime | None
    override: WindowOverride | None = None

    def status(self, now: datetime) -> WindowStatus:
        if self.opens_at is not None and now < self.opens_at:
            return WindowStatus.NOT_YET
        if self.closes_at is not None and now >= self.closes_at:
            return WindowStatus.CLOSED
        return WindowStatus.OPEN


def window_for(session: ExamSession) -> Window:
    """The session's effective start window (module docstring). A candidate's override counts
    for all their attempts in the sitting (practice sittings: ``sessions.practice``)."""
    override = (
        WindowOverride.objects.filter(
            session__sitting_id=session.sitting_id, session__candidate_id=session.candidate_id
        )
        .order_by("-created_at", "-id")
        .first()
    )
    if override is not None:
        return Window(override.opens_at, override.start_cutoff_at, override)
    sitting = session.sitting
    return Window(sitting.scheduled_for, sitting.start_cutoff_at)


def window_status(session: ExamSession, now: datetime | None = None) -> WindowStatus:
    """Where ``now`` (default: the current time) falls in the session's window."""
    return window_for(session).status(now or timezone.now())


def may_start(session: ExamSession, now: datetime | None = None) -> bool:
    """Whether the candidate may go on towards the exam now: always once it has started or is
    over; before that, only inside the window."""
    if session.state not in NOT_STARTED:
        return True
    return window_status(session, now) is WindowStatus.OPEN


def _check_order(opens_at: datetime | None, closes_at: datetime | None) -> None:
    if opens_at is not None and closes_at is not None and closes_at <= opens_at:
        raise ValidationError("The late-start cut-off must be after the window opens.")


def check_window(*, opens_at: datetime | None, closes_at: datetime | None) -> None:
    """Refuse a window whose cut-off is not after its opening (``ValidationError``)."""
    _check_order(opens_at, closes_at)


@transaction.atomic
def window_override(
    *,
    session: ExamSession,
    user: User,
    opens_at: datetime | None,
    closes_at: datetime | None,
    reason: str,
) -> WindowOverride:
    """Give one candidate their own start window (a reason of at least
    :data:`MIN_REASON_CHARS` characters is required). Refused once the exam has started."""
    text = (reason or "").strip()
    if len(text) < MIN_REASON_CHARS:
        raise ValidationError(
            f"Give a reason of at least {MIN_REASON_CHARS} characters for the override."
        )
    _check_order(opens_at, closes_at)
    row = ExamSession.objects.select_for_update().get(pk=session.pk)
    if row.state not in NOT_STARTED:
        raise ValidationError("The exam has already started; its start window no longer applies.")
    override = WindowOverride.objects.create(
        session=row, opens_at=opens_at, start_cutoff_at=closes_at, reason=text, created_by=user
    )
    logger.info(
        "start window of session %s overridden by %s: %s to %s (%s)",
        row.pk,
        getattr(user, "pk", None),
        opens_at,
        closes_at,
        text,
    )
    return override
