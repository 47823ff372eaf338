"""Grade sync with the course gradebook (docs/lms.md, "Grades"): Assignment and Grade Services.

What is sent follows the marking's deliberate steps, never ahead of them:

* marks **locked**, result not released yet: ``activityProgress: Completed``,
  ``gradingProgress: PendingManual`` and no score (the gradebook shows "needs grading");
* result **released** (``marking.services.result_release``): ``FullyGraded`` with the released
  score (``scoreGiven`` out of 100) and what the candidate is shown of it as the ``comment``
  (``marking.feedback``: the score, the outcomes, the levels; when the author shows no
  score, no score is sent either); released again after an appeal: the new score. Marks
  locked again after an appeal send nothing until that cycle is released: the released
  grade stands.

Each course the candidate came through (``lti.models.CandidateLink``: their own launch or
their course's roster) gets the grade at its own line item (``lti.selectors.grade_targets``);
the grade of a candidate of course A never goes to course B's line item. Every attempt is a
:class:`~lti.models.GradePassback` row; a refused one (the platform answered 4xx/5xx, or did
not answer) is tried again by ``lti.tasks.post_grade`` after :func:`retry_delay`, up to
:data:`MAX_ATTEMPTS`; ``manage.py lti_resync_grades`` and the admin action send again.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from django.utils import timezone
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from pylti1p3.service_connector import ServiceConnector

from lti.models import GradePassback, SittingLink
from lti.selectors import LINEITEM_SCOPE, SCORE_MAXIMUM, grade_targets
from marking.feedback import Feedback
from marking.models import SessionMark
from marking.selectors import candidate_result, current_release
from sessions.models import ExamSession

logger = logging.getLogger(__name__)

MAX_ATTEMPTS: Final = 6
"""Attempts per grade and course line item before it waits for a re-sync."""
FIRST_RETRY_SECONDS: Final = 60


def retry_delay(attempt: int) -> int:
    """Seconds before the attempt after ``attempt``: 1 min, 4 min, 16 min, 64 min, 4 h 16."""
    return int(FIRST_RETRY_SECONDS * 4 ** (attempt - 1))


@dataclass(frozen=True)
class PlannedGrade:
    """What the gradebook should show now for one session (module docstring)."""

    kind: str
    cycle: int
    score: float | None
    comment: str
    changed_at: datetime
    """When the tool changed the grade: the lock (pending) or the release (the score). It is
    the score's AGS ``timestamp``, so a post sent again (the relay's handler run again after a
    crash between the post and its record, a re-sync) is the same score, never a newer one."""

    def grade(self, user_id: str) -> Grade:
        grade = (
            Grade()
            .set_score_maximum(SCORE_MAXIMUM)
            .set_timestamp(self.changed_at.isoformat())
            .set_activity_progress("Completed")
            .set_user_id(user_id)
        )
        if self.kind == GradePassback.Kind.PENDING:
            return grade.set_grading_progress("PendingManual")
        grade = grade.set_grading_progress("FullyGraded").set_comment(self.comment)
        return grade if self.score is None else grade.set_score_given(self.score)


def _service(link: SittingLink) -> AssignmentsGradesService:
    registration = link.registration.to_registration()
    data = {
        "scope": link.ags_scopes,
        "lineitems": link.ags_lineitems,
        "lineitem": link.ags_lineitem or None,
    }
    return AssignmentsGradesService(ServiceConnector(registration), data)  # type: ignore[arg-type]


def lineitem_ensure(link: SittingLink) -> None:
    """Create the sitting's line item in the link's course when the platform sent none and
    allows it (tag ``viva-<sitting id>``; each course has its own line items)."""
    if link.ags_lineitem or not link.ags_lineitems or LINEITEM_SCOPE not in link.ags_scopes:
        return
    item = _service(link).find_or_create_lineitem(
        LineItem()
        .set_tag(f"viva-{link.sitting_id}")
        .set_label(link.sitting.title)
        .set_score_maximum(SCORE_MAXIMUM)
        .set_resource_link_id(link.resource_link.id_on_platform)
    )
    lineitem = item.get_id() or ""
    SittingLink.objects.filter(pk=link.pk).update(ags_lineitem=lineitem)
    link.ags_lineitem = lineitem


def _comment(session: ExamSession) -> str:
    """What the candidate is shown of their released result, as one line of text."""
    view = candidate_result(user=session.candidate, session_id=session.pk) or {}
    parts = ["Result released."]
    if view.get("score") is not None:
        parts.append(f"Score: {view['score']}%.")
    outcomes = [f"{o['text']}: {o['score']}%" for o in view.get("outcomes") or []]
    if outcomes:
        parts.append("Learning outcomes: " + "; ".join(outcomes) + ".")
    targets = [f"{t['label']}: {t['level']}" for t in view.get("targets") or []]
    if targets:
        parts.append("Evidence: " + "; ".join(targets) + ".")
    return " ".join(parts).replace("—%", "—")


def planned_grade(session: ExamSession) -> PlannedGrade | None:
    """What the gradebook should show for ``session`` now; ``None`` while there is nothing
    to send (not locked, a preview, a practice attempt, or locked again after an appeal but not
    yet released)."""
    if session.is_preview:  # never counts (sessions.previews)
        return None
    if session.sitting.is_practice:  # never sent to the LMS (docs/spec/practice-sittings.md)
        return None
    mark = SessionMark.objects.filter(session=session, locked_at__isnull=False).first()
    if mark is None or mark.locked_at is None:
        return None
    release = current_release(mark)
    if release is None:
        if mark.releases.exists():
            return None
        return PlannedGrade(GradePassback.Kind.PENDING, mark.cycle, None, "", mark.locked_at)
    shown = Feedback(release.feedback).shows_score
    score = round(float(release.final_score) * SCORE_MAXIMUM, 2) if shown else None
    return PlannedGrade(
        GradePassback.Kind.SCORE, mark.cycle, score, _comment(session), release.released_at
    )


def _attempt(
    session: ExamSession, link: SittingLink, user_id: str, planned: PlannedGrade, attempt: int
) -> GradePassback:
    row = GradePassback(
        session=session,
        link=link,
        cycle=planned.cycle,
        kind=planned.kind,
        score=planned.score,
        comment=planned.comment,
        attempt=attempt,
        status=GradePassback.Status.POSTED,
    )
    try:
        lineitem_ensure(link)
        _service(link).put_grade(planned.grade(user_id))
    except (LtiException, OSError, ValueError) as error:
        if isinstance(error, LtiServiceException):
            row.http_status = error.response.status_code
        row.status = GradePassback.Status.FAILED
        row.detail = str(error)[:2000]
        if attempt < MAX_ATTEMPTS:
            row.next_attempt_at = timezone.now() + timedelta(seconds=retry_delay(attempt))
        logger.warning("grade of session %s to %s refused: %s", session.pk, link, error)
    else:
        logger.info(
            "grade of session %s to %s: %s %s", session.pk, link, planned.kind, planned.score
        )
    row.save()
    return row


def grade_post(
    *, session_id: uuid.UUID | str, link_id: int | None = None, attempt: int = 1
) -> list[GradePassback]:
    """Send what the gradebook should show for the session (:func:`planned_grade`) to each
    course line item it belongs to (or only ``link_id``'s); one recorded attempt each."""
    session = ExamSession.objects.select_related("sitting", "candidate").get(pk=session_id)
    planned = planned_grade(session)
    if planned is None:
        return []
    return [
        _attempt(session, link, user_id, planned, attempt)
        for link, user_id in grade_targets(session=session)
        if link_id is None or link.pk == link_id
    ]
