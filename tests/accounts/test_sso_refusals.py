"""Single sign-on refusals (accounts.sso): a callback whose ``state`` is forged, replayed or
missing is the clear refusal page with a logged reason and no session; and every call to the
provider (token, JWKS, userinfo) passes the outbound address guard (a real server on 127.0.0.1
stands in for a provider inside the network)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.sessions.models import Session
from django.test import Client, override_settings

from accounts.sso import StaffOIDCBackend
from tests.support.http_peer import Peer, http_peer
from web.outbound import AddressRefused

pytestmark = pytest.mark.django_db


def provider_settings(peer: Peer) -> dict[str, Any]:
    return {
        "VIVA_OIDC_ISSUER": peer.base,
        "OIDC_RP_CLIENT_ID": "viva",
        "OIDC_RP_CLIENT_SECRET": "secret",
        "OIDC_OP_AUTHORIZATION_ENDPOINT": peer.url("/authorize"),
        "OIDC_OP_TOKEN_ENDPOINT": peer.url("/token"),
        "OIDC_OP_USER_ENDPOINT": peer.url("/userinfo"),
        "OIDC_OP_JWKS_ENDPOINT": peer.url("/jwks"),
        "VIVA_OUTBOUND_ALLOWED_NETWORKS": [],
    }


@pytest.fixture
def provider() -> Iterator[Peer]:
    routes: dict[str, tuple[int, Any]] = {
        "/token": (200, {"id_token": "x.y.z", "access_token": "a"}),
        "/jwks": (200, {"keys": []}),
        "/userinfo": (200, {"sub": "1"}),
    }
    with http_peer(routes) as peer, override_settings(**provider_settings(peer)):
        yield peer


@pytest.mark.parametrize(
    "query",
    [
        {"code": "c", "state": "forged"},
        {"code": "c"},
        {"state": "forged"},
    ],
)
def test_a_callback_without_our_state_is_the_refusal_page(
    provider: Peer, caplog: pytest.LogCaptureFixture, query: dict[str, str]
) -> None:
    caplog.set_level(logging.WARNING, logger="accounts.sso")
    response = Client().get("/accounts/sso/callback/", query)
    assert response.status_code == 400
    assert "Sign-in could not be completed" in response.content.decode()
    assert "OIDC sign-in refused: callback" in caplog.text
    assert django_settings.SESSION_COOKIE_NAME not in response.cookies
    assert not Session.objects.exists()
    assert provider.hits == []


def test_a_forged_state_beside_a_real_one_is_refused(
    provider: Peer, caplog: pytest.LogCaptureFixture
) -> None:
    client = Client()
    assert client.get("/accounts/sso/").status_code == 302  # a sign-in started: state stored
    response = client.get("/accounts/sso/callback/", {"code": "c", "state": "forged"})
    assert response.status_code == 400
    assert "Sign-in could not be completed" in response.content.decode()
    assert provider.hits == []


def test_the_provider_is_never_reached_inside_the_network(
    provider: Peer, caplog: pytest.LogCaptureFixture
) -> None:
    """The code exchange of a genuine callback goes to the token endpoint on 127.0.0.1:
    refused by the guard, logged, and the person lands on the sign-in page's message."""
    caplog.set_level(logging.WARNING, logger="accounts.sso")
    client = Client()
    start = client.get("/accounts/sso/")
    state = start["Location"].split("state=", 1)[1].split("&", 1)[0]
    response = client.get("/accounts/sso/callback/", {"code": "c", "state": state})
    assert response.status_code == 302 and "sso=failed" in response["Location"]
    assert "OIDC sign-in failed: AddressRefused" in caplog.text
    assert provider.hits == []


def test_jwks_and_userinfo_are_guarded(provider: Peer) -> None:
    backend = StaffOIDCBackend()
    token = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.e30.c2ln"
    with pytest.raises(AddressRefused):
        backend.retrieve_matching_jwk(token)
    with pytest.raises(AddressRefused):
        backend.get_userinfo("access", "id", {})
    with pytest.raises(AddressRefused):
        backend.get_token({"code": "c"})
    assert provider.hits == []


def test_an_allowed_provider_is_reached(provider: Peer, settings: Any) -> None:
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    assert StaffOIDCBackend().get_userinfo("access", "id", {}) == {"sub": "1"}
    assert provider.hits == ["/userinfo"]
