"""When a session's marks are locked (first time, or again after moderation or an appeal), post
them to the LMS after commit (``lti.tasks.post_grade``). Marking knows nothing of LTI."""

from __future__ import annotations

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from lti.models import SittingLink
from lti.tasks import post_grade
from marking.models import MarkingAuditEntry


@receiver(post_save, sender=MarkingAuditEntry, dispatch_uid="lti-grade-passback")
def marks_locked(
    sender: object, instance: MarkingAuditEntry, created: bool, **kwargs: object
) -> None:
    if not created or instance.action != MarkingAuditEntry.Action.LOCKED:
        return
    session_id = instance.mark.session_id
    sitting_id = instance.mark.session.sitting_id
    if not SittingLink.objects.filter(sitting_id=sitting_id).exists():
        return
    transaction.on_commit(lambda: post_grade.delay(str(session_id)))
