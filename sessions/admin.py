"""Admin registrations. Stored events, processed commands and proctor action requests are
read-only; a session's log
head (``last_seq``, ``head_hash``) is never edited by hand."""

from django.contrib import admin

from sessions.models import (
    ExamSession,
    ProcessedCommand,
    ProctorActionRequest,
    SessionEvent,
    Sitting,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Sitting)
class SittingAdmin(admin.ModelAdmin):
    list_display = ("title", "version", "created_by", "created_at")
    search_fields = ("title",)
    filter_horizontal = ("proctors",)
    list_select_related = ("version", "created_by")
    raw_id_fields = ("version", "created_by")


@admin.register(ExamSession)
class ExamSessionAdmin(admin.ModelAdmin):
    list_display = ("id", "sitting", "candidate", "state", "last_seq", "updated_at")
    list_filter = ("state",)
    search_fields = ("id", "candidate__username")
    list_select_related = ("sitting", "candidate")
    raw_id_fields = ("sitting", "candidate")
    readonly_fields = ("id", "state", "last_seq", "head_hash", "created_at", "updated_at")


@admin.register(SessionEvent)
class SessionEventAdmin(ReadOnlyAdmin):
    list_display = ("session", "seq", "type", "timestamp", "source", "correlation_id")
    list_filter = ("type", "source")
    search_fields = ("session__id", "event_id", "correlation_id")
    ordering = ("session", "seq")


@admin.register(ProcessedCommand)
class ProcessedCommandAdmin(ReadOnlyAdmin):
    list_display = ("session", "command_id", "command_type", "outcome", "received_at")
    list_filter = ("outcome", "command_type")
    search_fields = ("session__id", "command_id")


@admin.register(ProctorActionRequest)
class ProctorActionRequestAdmin(ReadOnlyAdmin):
    """Every proctor action as requested, with its outcome (the events are the record)."""

    list_display = ("created_at", "session", "proctor", "action", "status", "code")
    list_filter = ("action", "status")
    search_fields = ("session__id", "proctor__username", "reason", "idempotency_key")
    list_select_related = ("session", "proctor")
