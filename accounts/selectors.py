"""Reads for accounts: which API tokens a person may see and revoke."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts.models import ApiToken, User
from accounts.roles import Role


def api_tokens_visible_to(user: User) -> QuerySet[ApiToken]:
    """The tokens ``user`` may list and revoke: their own; an admin's are everyone's."""
    tokens = ApiToken.objects.select_related("user", "revoked_by")
    if not user.is_active:
        return tokens.none()
    if user.role == Role.ADMIN:
        return tokens.all()
    return tokens.filter(user=user)
