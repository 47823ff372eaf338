from django.contrib import admin

from authoring.models import DraftPackage


@admin.register(DraftPackage)
class DraftPackageAdmin(admin.ModelAdmin[DraftPackage]):
    list_display = ("title", "owner", "revision", "last_result", "updated_at")
    list_filter = ("updated_at",)
    search_fields = ("title", "owner__username", "id")
    filter_horizontal = ("collaborators",)
    readonly_fields = ("id", "revision", "last_report", "created_at", "updated_at")
    list_select_related = ("owner",)
