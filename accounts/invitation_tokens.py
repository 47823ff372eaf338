"""Signed invitation tokens.

A token is ``django.core.signing`` over the invitation id with a dedicated salt, so it cannot be
forged or altered without SECRET_KEY; expiry and single use are decided by the database row.
"""

from __future__ import annotations

import uuid

from django.core import signing

SALT = "viva.accounts.invitation"


class TokenInvalid(Exception):
    """The token was altered, truncated, or not made by this site."""


def make_token(invitation_id: uuid.UUID) -> str:
    return signing.dumps(invitation_id.hex, salt=SALT, compress=False)


def read_token(token: str) -> uuid.UUID:
    """Returns the invitation id a token names; raises TokenInvalid on any tampering."""
    try:
        value = signing.loads(token, salt=SALT)
        return uuid.UUID(hex=str(value))
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise TokenInvalid(str(exc)) from exc
