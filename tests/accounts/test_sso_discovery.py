"""OpenID Connect discovery and PKCE (accounts.sso_discovery, accounts.sso; issue #32).

Against the independent provider (django-oauth-toolkit's, a separate process on 127.0.0.1,
tests/support/oidc_provider): with only the issuer configured the endpoints are discovered, and
the token request carries the PKCE verifier of the challenge (the provider checks it: a wrong
verifier is refused). Against a small HTTP peer: a document naming another issuer, a discovery
URL on a refused address, a broken document: the refusal page with a logged reason and no
session."""

from __future__ import annotations

import base64
import hashlib
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings as django_settings
from django.contrib.sessions.models import Session
from django.core import checks
from django.core.cache import cache
from django.test import Client, override_settings

from accounts.models import User
from accounts.sso import StaffOIDCBackend
from accounts.sso_discovery import (
    DiscoveryFailed,
    cache_key,
    discovery,
    endpoints_of,
    forget,
    provider_endpoints,
)
from tests.accounts.test_sso import CALLBACK, ROLE_MAP, USERS, sign_in_at_provider
from tests.factories import PASSWORD, AdminFactory
from tests.support.http_peer import Peer, http_peer
from tests.support.oidc_provider import Provider, running_provider

pytestmark = pytest.mark.django_db

NO_ENDPOINTS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "",
    "OIDC_OP_TOKEN_ENDPOINT": "",
    "OIDC_OP_USER_ENDPOINT": "",
    "OIDC_OP_JWKS_ENDPOINT": "",
}
WELL_KNOWN = "/.well-known/openid-configuration"


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with running_provider(users=USERS, redirect_uri=CALLBACK) as running:
        yield running


def issuer_only(provider: Provider) -> dict[str, Any]:
    """The provider's settings with the endpoints left to discovery."""
    return {**provider.settings(), **NO_ENDPOINTS, "VIVA_OIDC_ROLE_MAP": ROLE_MAP}


def challenge_of(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def start(client: Client) -> tuple[str, dict[str, str]]:
    """Start a sign-in; the authorization URL and its query."""
    response = client.get("/accounts/sso/")
    assert response.status_code == 302, response.content
    location = response["Location"]
    return location, {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def test_sign_in_with_only_the_issuer_discovers_the_endpoints(
    provider: Provider, client: Client
) -> None:
    with override_settings(**issuer_only(provider)):
        authorize, query = start(client)
        assert authorize.startswith(f"{provider.issuer}/authorize/?")
        assert query["code_challenge_method"] == "S256" and query["code_challenge"]
        back = sign_in_at_provider(authorize, "lena", "pw-lena-1")
        response = client.get(back.removeprefix("http://testserver"))
        assert response.status_code == 302 and "sso=failed" not in response["Location"]
        kept = cache.get(cache_key(provider.issuer))
    assert kept == {
        "authorization": f"{provider.issuer}/authorize/",
        "token": f"{provider.issuer}/token/",
        "userinfo": f"{provider.issuer}/userinfo/",
        "jwks": f"{provider.issuer}/.well-known/jwks.json",
    }
    user = User.objects.get(email="lena@uni.example")
    assert user.role == "author" and int(client.session["_auth_user_id"]) == user.pk


def test_the_token_request_carries_the_verifier_of_the_challenge(
    provider: Provider, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[dict[str, Any]] = []
    original = StaffOIDCBackend.get_token

    def recording(self: StaffOIDCBackend, payload: dict[str, Any]) -> Any:
        sent.append(dict(payload))
        return original(self, payload)

    monkeypatch.setattr(StaffOIDCBackend, "get_token", recording)
    with override_settings(**issuer_only(provider)):
        authorize, query = start(client)
        stored = client.session["oidc_states"][query["state"]]["code_verifier"]
        back = sign_in_at_provider(authorize, "ivan", "pw-ivan-1")
        response = client.get(back.removeprefix("http://testserver"))
    assert response.status_code == 302 and "sso=failed" not in response["Location"]
    assert len(stored) >= 43 and challenge_of(stored) == query["code_challenge"]
    assert [payload["code_verifier"] for payload in sent] == [stored]
    assert User.objects.get(email="ivan@uni.example").role == "proctor"


def test_the_provider_refuses_a_wrong_verifier(
    provider: Provider, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """The provider checks PKCE: the code of this challenge is worth nothing without its
    verifier (here the stored verifier is replaced before the callback)."""
    caplog.set_level(logging.WARNING, logger="accounts.sso")
    with override_settings(**issuer_only(provider)):
        authorize, query = start(client)
        back = sign_in_at_provider(authorize, "lena", "pw-lena-1")
        session = client.session
        session["oidc_states"][query["state"]]["code_verifier"] = "w" * 64
        session.save()
        response = client.get(back.removeprefix("http://testserver"))
    assert response["Location"] == "/accounts/login/?sso=failed"
    assert "OIDC sign-in failed: HTTPError" in caplog.text
    assert "_auth_user_id" not in client.session
    assert not User.objects.filter(email="lena@uni.example").exists()


def document(issuer: str, base: str | None = None) -> dict[str, Any]:
    at = base or issuer
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{at}/authorize",
        "token_endpoint": f"{at}/token",
        "userinfo_endpoint": f"{at}/userinfo",
        "jwks_uri": f"{at}/jwks",
        "code_challenge_methods_supported": ["S256"],
    }


def peer_settings(issuer: str, allowed: list[str]) -> dict[str, Any]:
    return {
        **NO_ENDPOINTS,
        "VIVA_OIDC_ISSUER": issuer,
        "OIDC_RP_CLIENT_ID": "viva",
        "OIDC_RP_CLIENT_SECRET": "secret",
        "VIVA_OUTBOUND_ALLOWED_NETWORKS": allowed,
    }


def assert_refused_without_session(response: Any, caplog: pytest.LogCaptureFixture) -> None:
    assert response.status_code == 502
    page = response.content.decode()
    assert "Sign-in could not be completed" in page
    # The person is told the provider failed, not that their sign-in was forged or reused.
    assert "could not be reached" in page and "sso_discovery" in page
    assert "does not belong to a sign-in started here" not in page
    assert "OIDC sign-in refused: start: discovery" in caplog.text
    assert django_settings.SESSION_COOKIE_NAME not in response.cookies
    assert not Session.objects.exists()


@pytest.fixture
def served() -> Iterator[tuple[Peer, dict[str, tuple[int, Any]]]]:
    table: dict[str, tuple[int, Any]] = {}
    with http_peer(table) as running:
        yield running, table


def test_a_document_naming_another_issuer_is_refused(
    served: tuple[Peer, dict[str, tuple[int, Any]]], caplog: pytest.LogCaptureFixture
) -> None:
    peer, table = served
    table[WELL_KNOWN] = (200, document("https://idp.other.example", peer.base))
    caplog.set_level(logging.WARNING, logger="accounts.sso")
    with override_settings(**peer_settings(peer.base, ["127.0.0.0/8"])):
        response = Client().get("/accounts/sso/")
    assert_refused_without_session(response, caplog)
    assert "names issuer 'https://idp.other.example'" in caplog.text
    assert peer.hits == [WELL_KNOWN]
    assert cache.get(cache_key(peer.base)) is None


def test_a_discovery_url_on_a_refused_address_is_not_fetched(
    served: tuple[Peer, dict[str, tuple[int, Any]]], caplog: pytest.LogCaptureFixture
) -> None:
    """``localhost`` resolves to loopback: without the allow-list the guard refuses it."""
    peer, table = served
    issuer = f"https://localhost:{peer.port}"
    table[WELL_KNOWN] = (200, document(issuer))
    caplog.set_level(logging.WARNING, logger="accounts.sso")
    with override_settings(**peer_settings(issuer, [])):
        response = Client().get("/accounts/sso/")
    assert_refused_without_session(response, caplog)
    assert "AddressRefused" in caplog.text
    assert peer.hits == []


def test_plain_http_discovery_is_refused_off_the_allowed_networks(
    served: tuple[Peer, dict[str, tuple[int, Any]]], caplog: pytest.LogCaptureFixture
) -> None:
    peer, table = served
    table[WELL_KNOWN] = (200, document(peer.base))
    caplog.set_level(logging.WARNING, logger="accounts.sso")
    with override_settings(**peer_settings(peer.base, [])):
        response = Client().get("/accounts/sso/")
    assert_refused_without_session(response, caplog)
    assert "is not https" in caplog.text and peer.hits == []


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (200, ["not", "an", "object"], "not a JSON object"),
        (200, {"issuer": "x" * 300_000}, "over 262144 bytes"),
        (500, {"error": "down"}, "answered 500"),
        (302, "https://idp.example/elsewhere", "answered 302"),
    ],
)
def test_a_broken_discovery_is_the_refusal_page(
    served: tuple[Peer, dict[str, tuple[int, Any]]],
    caplog: pytest.LogCaptureFixture,
    status: int,
    body: Any,
    reason: str,
) -> None:
    peer, table = served
    table[WELL_KNOWN] = (status, body)
    caplog.set_level(logging.WARNING, logger="accounts.sso")
    with override_settings(**peer_settings(peer.base, ["127.0.0.0/8"])):
        response = Client().get("/accounts/sso/")
    assert_refused_without_session(response, caplog)
    assert reason in caplog.text


def test_a_failing_discovery_at_the_callback_is_the_refusal_page(
    served: tuple[Peer, dict[str, tuple[int, Any]]], caplog: pytest.LogCaptureFixture
) -> None:
    """The kept document expired and the provider now answers with another issuer: the
    callback is refused (no token request), and the session the start made is ended."""
    peer, table = served
    table[WELL_KNOWN] = (200, document(peer.base))
    caplog.set_level(logging.WARNING, logger="accounts.sso")
    client = Client()
    with override_settings(**peer_settings(peer.base, ["127.0.0.0/8"])):
        _, query = start(client)
        forget(peer.base)
        table[WELL_KNOWN] = (200, document("https://idp.other.example", peer.base))
        response = client.get("/accounts/sso/callback/", {"code": "c", "state": query["state"]})
    assert response.status_code == 502
    assert "OIDC sign-in refused: callback: discovery" in caplog.text
    assert not Session.objects.exists()
    assert peer.hits == [WELL_KNOWN, WELL_KNOWN]


def test_the_document_is_kept_and_explicit_endpoints_override_it(
    served: tuple[Peer, dict[str, tuple[int, Any]]],
) -> None:
    peer, table = served
    table[WELL_KNOWN] = (200, document(peer.base))
    explicit = {"OIDC_OP_TOKEN_ENDPOINT": "https://tokens.example/t"}
    trailing = {**peer_settings(peer.base + "/", ["127.0.0.0/8"]), **explicit}  # not "<base>"
    with override_settings(**trailing), pytest.raises(DiscoveryFailed, match="issuer"):
        provider_endpoints()
    with override_settings(**{**peer_settings(peer.base, ["127.0.0.0/8"]), **explicit}):
        first = provider_endpoints()
        assert provider_endpoints() == first
    assert first.token == "https://tokens.example/t"
    assert first.jwks == peer.url("/jwks") and first.authorization == peer.url("/authorize")
    assert peer.hits == [WELL_KNOWN, WELL_KNOWN]  # the refused one, then one fetch kept


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"code_challenge_methods_supported": ["plain"]}, "does not support PKCE S256"),
        ({"token_endpoint": "http://idp.example/token"}, "is not https"),
        ({"jwks_uri": ["https://idp.example/jwks"]}, "jwks_uri is not a URL"),
        ({"authorization_endpoint": "javascript:alert(1)"}, "only http and https"),
        ({"issuer": "https://IDP.example"}, "names issuer"),
    ],
)
def test_a_document_that_fails_a_check_is_refused(change: dict[str, Any], reason: str) -> None:
    with pytest.raises(DiscoveryFailed, match=reason):
        endpoints_of({**document("https://idp.example"), **change}, "https://idp.example")


def test_missing_endpoints_are_refused_unless_configured(
    served: tuple[Peer, dict[str, tuple[int, Any]]],
) -> None:
    peer, table = served
    table[WELL_KNOWN] = (200, {**document(peer.base), "userinfo_endpoint": None})
    with override_settings(**peer_settings(peer.base, ["127.0.0.0/8"])):
        with pytest.raises(DiscoveryFailed, match="names no userinfo_endpoint"):
            provider_endpoints()
        assert discovery(peer.base).get("userinfo") is None
    explicit = {"OIDC_OP_USER_ENDPOINT": "https://idp.example/me"}
    with override_settings(**{**peer_settings(peer.base, ["127.0.0.0/8"]), **explicit}):
        assert provider_endpoints().userinfo == "https://idp.example/me"


def test_system_check_warns_of_a_client_without_issuer() -> None:
    with override_settings(VIVA_OIDC_ISSUER="", OIDC_RP_CLIENT_ID="viva"):
        found = [m.id for m in checks.run_checks() if str(m.id).startswith("accounts.W")]
    assert found == ["accounts.W001"]
    with override_settings(VIVA_OIDC_ISSUER="https://idp.example", OIDC_RP_CLIENT_ID=""):
        found = [m.id for m in checks.run_checks() if str(m.id).startswith("accounts.W")]
    assert found == ["accounts.W002"]
    with override_settings(VIVA_OIDC_ISSUER="https://idp.example", OIDC_RP_CLIENT_ID="viva"):
        assert not [m for m in checks.run_checks() if str(m.id).startswith("accounts.W")]


def test_a_password_sign_in_does_not_fetch_the_document(
    served: tuple[Peer, dict[str, tuple[int, Any]]], client: Client
) -> None:
    """With single sign-on on, a local password sign-in passes the OIDC backend without
    discovery (and works while the provider is out of reach)."""
    peer, table = served
    table[WELL_KNOWN] = (500, {"error": "down"})
    AdminFactory(username="root")
    with override_settings(**peer_settings(peer.base, ["127.0.0.0/8"])):
        wrong = client.post("/accounts/login/", {"username": "root", "password": "nope"})
        right = client.post("/accounts/login/", {"username": "root", "password": PASSWORD})
    assert wrong.status_code == 200 and right.status_code == 302
    assert peer.hits == []


def test_a_failure_is_kept_briefly_and_not_fetched_per_visitor(
    served: tuple[Peer, dict[str, tuple[int, Any]]], caplog: pytest.LogCaptureFixture
) -> None:
    peer, table = served
    table[WELL_KNOWN] = (500, {"error": "down"})
    caplog.set_level(logging.WARNING, logger="accounts.sso")
    with override_settings(**peer_settings(peer.base, ["127.0.0.0/8"])):
        for _ in range(3):
            assert Client().get("/accounts/sso/").status_code == 502
        assert "not fetched again yet" in caplog.text
        assert peer.hits == [WELL_KNOWN]
        table[WELL_KNOWN] = (200, document(peer.base))
        forget(peer.base)  # (or FAILURE_HOLD seconds later)
        assert Client().get("/accounts/sso/").status_code == 302
    assert peer.hits == [WELL_KNOWN, WELL_KNOWN]
