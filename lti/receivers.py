"""When a session's marks are locked (``PendingManual``, no score) and when its result is
released (the score and the released feedback), sync the course gradebooks after commit
(``lti.tasks.post_grade``, ``lti.grades``). Marking knows nothing of LTI: its audit entries
(``marking.models.MarkingAuditEntry``, ``locked`` and ``result_released``) are the events."""

from __future__ import annotations

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from lti.models import CandidateLink
from lti.tasks import post_grade
from marking.models import MarkingAuditEntry

GRADE_EVENTS = frozenset(
    {MarkingAuditEntry.Action.LOCKED, MarkingAuditEntry.Action.RESULT_RELEASED}
)


@receiver(post_save, sender=MarkingAuditEntry, dispatch_uid="lti-grade-passback")
def marks_locked_or_released(
    sender: object, instance: MarkingAuditEntry, created: bool, **kwargs: object
) -> None:
    if not created or instance.action not in GRADE_EVENTS:
        return
    session_id = instance.mark.session_id
    if not CandidateLink.objects.filter(session_id=session_id).exists():
        return
    transaction.on_commit(lambda: post_grade.delay(str(session_id)))
