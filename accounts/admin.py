from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.models import ApiToken, Invitation, User
from accounts.services import api_token_revoke


@admin.register(User)
class UserAdmin(DjangoUserAdmin[User]):
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
class InvitationAdmin(admin.ModelAdmin[Invitation]):
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

    def has_add_permission(self, request: HttpRequest) -> bool:
        # invitations carry a signed token: issue them via the API
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin[ApiToken]):
    """Tokens are issued by their owner on /accounts/tokens/ (the key is shown to them only);
    here an admin sees them all and may revoke any."""

    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at", "created_at")
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at")
    fields = (*readonly_fields, "revoked_by")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            api_token_revoke(token=token, by=request.user)  # type: ignore[arg-type]
