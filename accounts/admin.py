from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from accounts.models import Invitation, User


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    list_display = ("username", "display_name", "email", "role", "is_active", "last_login")
    list_filter = ("role", "is_active")
    search_fields = ("username", "display_name", "email")
    fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Person", {"fields": ("display_name", "first_name", "last_name", "email")}),
        ("Role", {"fields": ("role", "is_active")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("username", "role", "password1", "password2")}),
    )
    readonly_fields = ("last_login", "date_joined")


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ("candidate", "created_by", "created_at", "expires_at", "state", "used_at")
    list_filter = ("created_at", "expires_at")
    search_fields = ("candidate__username", "candidate__email", "note")
    readonly_fields = ("id", "candidate", "created_by", "created_at", "used_at", "used_from")
    fields = (
        "id",
        "candidate",
        "created_by",
        "created_at",
        "expires_at",
        "used_at",
        "used_from",
        "revoked_at",
        "next_path",
        "note",
    )
    list_select_related = ("candidate", "created_by")

    def has_add_permission(
        self, request
    ):  # invitations carry a signed token: issue them via the API
        return False
