from django.contrib import admin
from django.http import HttpRequest

from publishing.models import PublishedVersion


@admin.register(PublishedVersion)
class PublishedVersionAdmin(admin.ModelAdmin[PublishedVersion]):
    """Read-only: published versions are immutable (see publishing.models)."""

    list_display = (
        "title",
        "number",
        "ir_version",
        "adapter_version",
        "published_by",
        "published_at",
        "is_preview",
    )
    list_filter = ("is_preview", "ir_version", "adapter_version", "published_at")
    search_fields = ("title", "package_id", "checksum")
    list_select_related = ("published_by", "draft")

    def get_readonly_fields(
        self, request: HttpRequest, obj: PublishedVersion | None = None
    ) -> list[str]:
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: PublishedVersion | None = None
    ) -> bool:
        return False

    def has_delete_permission(
        self, request: HttpRequest, obj: PublishedVersion | None = None
    ) -> bool:
        return False
