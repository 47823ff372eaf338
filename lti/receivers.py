"""When a session's marks are locked (``PendingManual``, no score) and when its result is
released (the score and the released feedback), sync the course gradebooks (``lti.grades``).

Marking knows nothing of LTI: it announces both facts inside their transactions
(``marking.signals.marks_locked`` and ``result_released``), the same signals the webhooks hear.
For a session an LMS launched, each becomes an ``lti.post_grade`` outbox message in that
transaction (``sessions.outbox``, issue #33: a broker outage or a crash after the commit loses no
grade); the relay's handler runs the post (``lti.tasks.post_grade``: a refused post is tried
again with back-off, each attempt computing what to send afresh)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from lti.models import CandidateLink
from lti.tasks import post_grade
from marking import signals as marking_signals
from sessions import outbox

POST_GRADE = "lti.post_grade"


def _enqueue(session_id: uuid.UUID, fact: str, cycle: int) -> None:
    """The grade sync of a session an LMS launched; never of a practice attempt
    (docs/spec/practice-sittings.md: practice is never sent to the LMS)."""
    links = CandidateLink.objects.filter(session_id=session_id)
    if not links.exclude(session__sitting__is_practice=True).exists():
        return
    outbox.enqueue(
        topic=POST_GRADE,
        key=f"{session_id}:{fact}:{cycle}",
        payload={"sessionId": str(session_id)},
    )


def on_marks_locked(*, session_id: uuid.UUID, cycle: int, **_: object) -> None:
    """Marks locked: the gradebook learns the grade is pending (inside the lock's transaction)."""
    _enqueue(session_id, "locked", cycle)


def on_result_released(*, session_id: uuid.UUID, cycle: int, **_: object) -> None:
    """Result released: the gradebook gets the score (inside the release's transaction)."""
    _enqueue(session_id, "released", cycle)


def post_grade_message(payload: Mapping[str, object]) -> None:
    """The relay's handler: one grade sync of the session (``lti.tasks.post_grade``, run here)."""
    post_grade(str(payload["sessionId"]))


def connect() -> None:
    """Subscribe (idempotent: the dispatch uids and the topic keep one registration each)."""
    marking_signals.marks_locked.connect(on_marks_locked, dispatch_uid="lti.marks_locked")
    marking_signals.result_released.connect(on_result_released, dispatch_uid="lti.result_released")
    outbox.register(POST_GRADE, post_grade_message)
