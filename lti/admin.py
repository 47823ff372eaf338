from django.contrib import admin

from lti.models import GradePassback, SittingLink


@admin.register(SittingLink)
class SittingLinkAdmin(admin.ModelAdmin[SittingLink]):
    list_display = ["resource_link", "sitting", "registration", "created_at"]
    raw_id_fields = ["resource_link", "sitting"]


@admin.register(GradePassback)
class GradePassbackAdmin(admin.ModelAdmin[GradePassback]):
    list_display = ["session", "cycle", "score", "status", "posted_at"]
    readonly_fields = ["session", "link", "cycle", "score", "status", "detail", "posted_at"]
