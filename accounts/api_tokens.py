"""API keys: their format, their digest, and the REST framework authentication that reads them.

A key is ``viva_`` followed by 43 URL-safe characters (256 random bits). It is shown to its owner
once, when issued (``accounts.services.api_token_issue``); the database keeps its SHA-256 digest
and its first characters (``prefix``), so a stolen database yields no usable key. Requests send
``Authorization: Token <key>``; a revoked key, or the key of an inactive user, is refused with
401 like an unknown one.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from accounts.models import ApiToken, User

KEY_PREFIX = "viva_"
SHOWN_PREFIX_LENGTH = 12  # "viva_" and 7 characters of the secret part: 42 bits, not enough to use
# Writing last_used_at on every request would make each API call a write; once a minute is
# enough to tell a person which keys are in use.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def new_key() -> str:
    """A fresh, random API key."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def key_digest(key: str) -> str:
    """The hex SHA-256 digest the database stores instead of the key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class ApiTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>`` against :class:`accounts.models.ApiToken` digests."""

    keyword = "Token"

    def authenticate_credentials(self, key: str) -> tuple[User, ApiToken]:
        token = (
            ApiToken.objects.active()
            .select_related("user")
            .filter(key_hash=key_digest(key))
            .first()
        )
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid token.")
        now = timezone.now()
        ApiToken.objects.filter(pk=token.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
        ).update(last_used_at=now)
        return token.user, token
