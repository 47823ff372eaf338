from django.contrib import admin

from marking.models import MarkingRequest


@admin.register(MarkingRequest)
class MarkingRequestAdmin(admin.ModelAdmin):
    list_display = ("session", "status", "requested_at", "completed_seq", "deliveries")
    list_filter = ("status",)
    readonly_fields = ("session", "status", "requested_at", "completed_seq", "deliveries")

    def has_add_permission(self, request):
        return False
