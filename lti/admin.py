from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from lti.models import CandidateLink, GradePassback, Placement, SittingLink
from lti.tasks import post_grade


@admin.register(Placement)
class PlacementAdmin(admin.ModelAdmin[Placement]):
    list_display = ["sitting", "context", "how", "placed_by", "created_at"]
    list_filter = ["how"]
    raw_id_fields = ["sitting", "context", "placed_by", "copied_from"]


@admin.register(SittingLink)
class SittingLinkAdmin(admin.ModelAdmin[SittingLink]):
    list_display = ["resource_link", "sitting", "placement", "registration", "created_at"]
    raw_id_fields = ["resource_link", "sitting", "placement"]


@admin.register(CandidateLink)
class CandidateLinkAdmin(admin.ModelAdmin[CandidateLink]):
    list_display = ["session", "link", "seen_at"]
    raw_id_fields = ["session", "link"]


@admin.register(GradePassback)
class GradePassbackAdmin(admin.ModelAdmin[GradePassback]):
    list_display = [
        "session",
        "cycle",
        "kind",
        "score",
        "attempt",
        "status",
        "http_status",
        "next_attempt_at",
        "posted_at",
    ]
    list_filter = ["status", "kind"]
    readonly_fields = [
        "session",
        "link",
        "cycle",
        "kind",
        "score",
        "comment",
        "attempt",
        "status",
        "http_status",
        "detail",
        "next_attempt_at",
        "posted_at",
    ]
    actions = ["resync"]

    @admin.action(description="Send these sessions' grades to the LMS again")
    def resync(self, request: HttpRequest, queryset: QuerySet[GradePassback]) -> None:
        sessions = {str(s) for s in queryset.values_list("session_id", flat=True)}
        for session_id in sorted(sessions):
            post_grade.delay(session_id)
        self.message_user(
            request, f"Grades of {len(sessions)} session(s) sent again.", messages.SUCCESS
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
