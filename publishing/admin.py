from django.contrib import admin

from publishing.models import PublishedVersion


@admin.register(PublishedVersion)
class PublishedVersionAdmin(admin.ModelAdmin):
    """Read-only: published versions are immutable (see publishing.models)."""

    list_display = (
        "title",
        "number",
        "ir_version",
        "adapter_version",
        "published_by",
        "published_at",
    )
    list_filter = ("ir_version", "adapter_version", "published_at")
    search_fields = ("title", "package_id", "checksum")
    list_select_related = ("published_by", "draft")

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
