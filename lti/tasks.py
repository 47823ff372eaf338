"""Grade passback off the request path (eager in the embedded default)."""

from __future__ import annotations

from celery import shared_task

from lti.services import grade_post


@shared_task(name="lti.tasks.post_grade", acks_late=True)
def post_grade(session_id: str) -> str | None:
    """Post the locked marks of ``session_id`` to its LMS (``lti.services.grade_post``)."""
    result = grade_post(session_id=session_id)
    return None if result is None else result.status
