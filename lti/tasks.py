"""Grade sync off the request path (eager in the embedded default): one attempt per run per
course line item, a refused one scheduled again with back-off (``lti.grades``)."""

from __future__ import annotations

from celery import shared_task

from lti.grades import MAX_ATTEMPTS, grade_post, retry_delay
from lti.models import GradePassback


@shared_task(name="lti.tasks.post_grade", acks_late=True)
def post_grade(session_id: str, link_id: int | None = None, attempt: int = 1) -> list[str]:
    """Send the gradebook state of ``session_id`` (``lti.grades.grade_post``) to each course
    it belongs to (or ``link_id``'s); a refused attempt is tried again after
    ``retry_delay(attempt)`` until :data:`~lti.grades.MAX_ATTEMPTS`. Each attempt computes
    what to send afresh (a release in between sends the score). Returns the statuses."""
    rows = grade_post(session_id=session_id, link_id=link_id, attempt=attempt)
    for row in rows:
        if row.status == GradePassback.Status.FAILED and attempt < MAX_ATTEMPTS:
            post_grade.apply_async(
                (session_id, row.link_id, attempt + 1), countdown=retry_delay(attempt)
            )
    return [row.status for row in rows]
