from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from marking.models import (
    Appeal,
    MarkingAuditEntry,
    MarkingRequest,
    MarkingScheme,
    PanelRun,
    PostMarkingIrregularity,
    SessionMark,
    TargetDecision,
)


class ReadOnlyAdmin[M: Model](admin.ModelAdmin[M]):
    """Marks change only through the marking workspace (services keep the history)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False


@admin.register(MarkingRequest)
class MarkingRequestAdmin(ReadOnlyAdmin[MarkingRequest]):
    list_display = ("session", "status", "requested_at", "completed_seq", "deliveries", "marked_at")
    list_filter = ("status",)


@admin.register(MarkingScheme)
class MarkingSchemeAdmin(ReadOnlyAdmin[MarkingScheme]):
    list_display = ("version", "compiler_version", "checksum", "created_at")


@admin.register(SessionMark)
class SessionMarkAdmin(ReadOnlyAdmin[SessionMark]):
    list_display = (
        "session",
        "state",
        "final_score",
        "proposed_score",
        "review_flags",
        "locked_at",
    )
    list_filter = ("state", "second_marking_required")


@admin.register(TargetDecision)
class TargetDecisionAdmin(ReadOnlyAdmin[TargetDecision]):
    list_display = ("mark", "target_key", "number", "level", "source", "author", "created_at")
    list_filter = ("source", "level")


@admin.register(PanelRun)
class PanelRunAdmin(ReadOnlyAdmin[PanelRun]):
    list_display = ("mark", "status", "alpha_round1", "alpha_round2", "created_at")


@admin.register(Appeal)
class AppealAdmin(ReadOnlyAdmin[Appeal]):
    list_display = ("mark", "opened_by", "opened_at", "closed_at")


@admin.register(MarkingAuditEntry)
class MarkingAuditEntryAdmin(ReadOnlyAdmin[MarkingAuditEntry]):
    list_display = ("mark", "action", "actor", "created_at")
    list_filter = ("action",)


@admin.register(PostMarkingIrregularity)
class PostMarkingIrregularityAdmin(ReadOnlyAdmin[PostMarkingIrregularity]):
    list_display = ("mark", "category", "actor", "reported_at", "after_lock", "created_at")
    list_filter = ("category", "after_lock")
