"""The identity provider's id token as ``accounts.sso.StaffOIDCBackend`` reads it, signed here
with a key of the test's own: what OpenID Connect Core §3.1.3.7 asks a client to check beyond
the signature. Refused (``SuspiciousOperation``, or PyJWT's error for an expired token; both
sign nobody in): another issuer, another client's audience, an ``azp`` naming another client,
no expiry."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from django.core.exceptions import SuspiciousOperation
from django.test import override_settings

from accounts.sso import StaffOIDCBackend

ISSUER = "https://idp.uni.example"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
SETTINGS = {
    "VIVA_OIDC_ISSUER": ISSUER,
    "OIDC_RP_CLIENT_ID": "viva",
    "OIDC_RP_CLIENT_SECRET": "secret",
    "OIDC_RP_SIGN_ALGO": "RS256",
    "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{ISSUER}/authorize",
    "OIDC_OP_TOKEN_ENDPOINT": f"{ISSUER}/token",
    "OIDC_OP_USER_ENDPOINT": f"{ISSUER}/userinfo",
    "OIDC_OP_JWKS_ENDPOINT": f"{ISSUER}/jwks",
}


def read(**claims: Any) -> dict[str, object]:
    now = int(time.time())
    body = {"iss": ISSUER, "sub": "lena", "aud": "viva", "iat": now, "exp": now + 300, **claims}
    body = {name: value for name, value in body.items() if value is not None}
    token = jwt.encode(body, KEY, algorithm="RS256")
    with override_settings(**SETTINGS):
        return StaffOIDCBackend().get_payload_data(token.encode(), KEY.public_key())


def test_a_token_for_us_is_read() -> None:
    assert read()["sub"] == "lena"
    assert read(aud=["viva", "other"], azp="viva")["sub"] == "lena"


@pytest.mark.parametrize(
    "claims",
    [
        {"iss": "https://other.example"},
        {"aud": "other-client"},
        {"aud": ["other-client", "viva"], "azp": "other-client"},  # obtained by another client
        {"exp": None},  # never expires
    ],
)
def test_a_token_we_must_not_trust_is_refused(claims: dict[str, Any]) -> None:
    with pytest.raises(SuspiciousOperation):
        read(**claims)


def test_an_expired_token_is_refused() -> None:
    with pytest.raises(jwt.ExpiredSignatureError):
        read(exp=int(time.time()) - 600)
