"""Staff single sign-on (accounts.sso) against a real OpenID Connect provider:
django-oauth-toolkit's, run as a separate process on 127.0.0.1 (tests/support/oidc_provider).

The person's browser is a ``requests`` session talking to the provider; our site is Django's test
client; our relying party talks to the provider over HTTP (code exchange, JWKS, userinfo)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests
from django.contrib.sessions.models import Session
from django.test import Client, override_settings

from accounts.models import User
from accounts.sso import role_from_claims, username_for
from tests.factories import PASSWORD, AdminFactory
from tests.support.oidc_provider import Provider, running_provider

pytestmark = pytest.mark.django_db

CALLBACK = "http://testserver/accounts/sso/callback/"
ROLE_MAP = "lecturers=author,invigilators=proctor,viva-admins=admin"
USERS = [
    {"username": "lena", "password": "pw-lena-1", "email": "lena@uni.example",
     "name": "Lena Lecturer", "groups": ["staff", "lecturers"]},
    {"username": "ivan", "password": "pw-ivan-1", "email": "ivan@uni.example",
     "name": "Ivan Invigilator", "groups": ["invigilators"]},
    {"username": "admin", "password": "pw-admin-1", "email": "it@uni.example",
     "name": "IT Admin", "groups": ["viva-admins", "lecturers"]},
    {"username": "sam", "password": "pw-sam-1", "email": "sam@uni.example",
     "name": "Sam Student", "groups": ["students"]},
]  # fmt: skip


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with running_provider(users=USERS, redirect_uri=CALLBACK) as running:
        yield running


def sign_in_at_provider(authorize_url: str, username: str, password: str) -> str:
    """What the person's browser does at the provider; returns the redirect back to us."""
    browser = requests.Session()
    response = browser.get(authorize_url, allow_redirects=False, timeout=10)
    assert response.status_code == 302, response.text
    login_url = urljoin(authorize_url, response.headers["Location"])
    page = browser.get(login_url, timeout=10)
    token = browser.cookies["csrftoken"]
    next_url = parse_qs(urlsplit(login_url).query)["next"][0]
    response = browser.post(
        login_url,
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": token,
            "next": next_url,
        },
        allow_redirects=False,
        timeout=10,
    )
    assert response.status_code == 302, page.text
    response = browser.get(
        urljoin(login_url, response.headers["Location"]), allow_redirects=False, timeout=10
    )
    assert response.status_code == 302, response.text
    back = response.headers["Location"]
    assert back.startswith(CALLBACK), back
    return back


def single_sign_on(client: Client, username: str, password: str) -> Any:
    start = client.get("/accounts/sso/")
    assert start.status_code == 302
    authorize = start["Location"]
    assert "nonce=" in authorize and "state=" in authorize
    back = sign_in_at_provider(authorize, username, password)
    return client.get(back.removeprefix("http://testserver"))


@pytest.mark.parametrize(
    ("username", "password", "role", "lands"),
    [
        ("lena", "pw-lena-1", "author", "/studio/"),
        ("ivan", "pw-ivan-1", "proctor", "/proctor/"),
        ("admin", "pw-admin-1", "admin", "/admin/"),
    ],
)
def test_staff_sign_in_through_the_provider_with_the_mapped_role(
    provider: Provider, client: Client, username: str, password: str, role: str, lands: str
) -> None:
    with override_settings(**provider.settings(), VIVA_OIDC_ROLE_MAP=ROLE_MAP):
        response = single_sign_on(client, username, password)
        assert response.status_code == 302
        home = client.get(response["Location"], follow=True)
    user = User.objects.get(email=f"{'it' if username == 'admin' else username}@uni.example")
    assert user.role == role and not user.has_usable_password()
    assert user.username.startswith("oidc-") and user.username != username
    assert home.request["PATH_INFO"].startswith(lands)
    assert home.status_code == 200
    assert int(client.session["_auth_user_id"]) == user.pk


def test_a_provider_admin_never_becomes_the_local_admin(provider: Provider, client: Client) -> None:
    local = AdminFactory(username="admin")
    with override_settings(**provider.settings(), VIVA_OIDC_ROLE_MAP="lecturers=author"):
        single_sign_on(client, "admin", "pw-admin-1")
    local.refresh_from_db()
    assert local.check_password(PASSWORD)
    sso_user = User.objects.get(email="it@uni.example")
    assert sso_user.pk != local.pk and sso_user.role == "author"


def test_no_staff_role_is_refused_with_a_clear_page(provider: Provider, client: Client) -> None:
    with override_settings(**provider.settings(), VIVA_OIDC_ROLE_MAP=ROLE_MAP):
        response = single_sign_on(client, "sam", "pw-sam-1")
        assert response["Location"] == "/accounts/login/?sso=failed"
        page = client.get(response["Location"])
    assert "has no staff role here" in page.content.decode()
    assert not User.objects.filter(email="sam@uni.example").exists()
    assert "_auth_user_id" not in client.session
    assert not Session.objects.exists()  # nothing of the refused attempt is kept


def test_a_token_from_another_issuer_is_refused(provider: Provider, client: Client) -> None:
    settings = {**provider.settings(), "VIVA_OIDC_ISSUER": "http://127.0.0.1:1/other"}
    # The endpoints stay the real provider's: only the expected issuer differs.
    with override_settings(**settings, VIVA_OIDC_ROLE_MAP=ROLE_MAP):
        response = single_sign_on(client, "lena", "pw-lena-1")
    assert response["Location"] == "/accounts/login/?sso=failed"
    assert "_auth_user_id" not in client.session
    assert not User.objects.filter(email="lena@uni.example").exists()


def test_a_replayed_callback_signs_nobody_in(provider: Provider, client: Client) -> None:
    with override_settings(**provider.settings(), VIVA_OIDC_ROLE_MAP=ROLE_MAP):
        start = client.get("/accounts/sso/")
        back = sign_in_at_provider(start["Location"], "lena", "pw-lena-1")
        path = back.removeprefix("http://testserver")
        assert client.get(path).status_code == 302
        client.logout()
        again = client.get(path)  # state and nonce were used up: the refusal page (issue #32)
    assert again.status_code == 400
    assert "Sign-in could not be completed" in again.content.decode()
    assert "_auth_user_id" not in client.session


def test_off_by_default_and_passwords_stay(client: Client) -> None:
    assert client.get("/accounts/sso/").status_code == 404
    assert client.get("/accounts/sso/callback/?code=x&state=y").status_code == 404
    page = client.get("/accounts/login/").content.decode()
    assert "Single sign-on" not in page and 'name="password"' in page
    AdminFactory(username="root")
    response = client.post("/accounts/login/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 302


def test_role_mapping_precedence_and_system_check() -> None:
    from django.core import checks

    with override_settings(VIVA_OIDC_ROLE_MAP=ROLE_MAP, VIVA_OIDC_ROLE_CLAIM="groups"):
        assert role_from_claims({"groups": ["lecturers", "viva-admins"]}) == "admin"
        assert role_from_claims({"groups": "invigilators"}) == "proctor"
        assert role_from_claims({"groups": ["students"]}) is None
        assert role_from_claims({}) is None
    with override_settings(VIVA_OIDC_ROLE_MAP="students=candidate"):
        errors = [m for m in checks.run_checks() if m.id == "accounts.E001"]
    assert errors and "candidate" in errors[0].msg
    assert username_for("https://a", "1") != username_for("https://b", "1")


def test_a_role_claim_of_another_shape_grants_no_role_and_does_not_crash() -> None:
    """A role claim that is neither a string nor a list (a number, a boolean) is a provider's
    malformed token: refused like no role, never a TypeError (a 500 on the callback)."""
    with override_settings(VIVA_OIDC_ROLE_MAP=ROLE_MAP, VIVA_OIDC_ROLE_CLAIM="groups"):
        assert role_from_claims({"groups": 5}) is None
        assert role_from_claims({"groups": True}) is None
        assert role_from_claims({"groups": ("lecturers",)}) == "author"
