from django.contrib import admin

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


class ReadOnlyAdmin(admin.ModelAdmin):
    """Marks change only through the marking workspace (services keep the history)."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(MarkingRequest)
class MarkingRequestAdmin(ReadOnlyAdmin):
    list_display = ("session", "status", "requested_at", "completed_seq", "deliveries", "marked_at")
    list_filter = ("status",)


@admin.register(MarkingScheme)
class MarkingSchemeAdmin(ReadOnlyAdmin):
    list_display = ("version", "compiler_version", "checksum", "created_at")


@admin.register(SessionMark)
class SessionMarkAdmin(ReadOnlyAdmin):
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
class TargetDecisionAdmin(ReadOnlyAdmin):
    list_display = ("mark", "target_key", "number", "level", "source", "author", "created_at")
    list_filter = ("source", "level")


@admin.register(PanelRun)
class PanelRunAdmin(ReadOnlyAdmin):
    list_display = ("mark", "status", "alpha_round1", "alpha_round2", "created_at")


@admin.register(Appeal)
class AppealAdmin(ReadOnlyAdmin):
    list_display = ("mark", "opened_by", "opened_at", "closed_at")


@admin.register(MarkingAuditEntry)
class MarkingAuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("mark", "action", "actor", "created_at")
    list_filter = ("action",)


@admin.register(PostMarkingIrregularity)
class PostMarkingIrregularityAdmin(ReadOnlyAdmin):
    list_display = ("mark", "category", "actor", "reported_at", "after_lock", "created_at")
    list_filter = ("category", "after_lock")
