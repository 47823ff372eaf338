"""Staff sign-in: rate limiting of failures and session rotation."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from tests.factories import PASSWORD, AuthorFactory, CandidateFactory

pytestmark = pytest.mark.django_db
LOGIN = "/accounts/login/"


def attempt(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def test_correct_password_signs_in_and_lands_in_the_role_area() -> None:
    author = AuthorFactory()
    client = Client()
    response = attempt(client, author.username, PASSWORD)
    assert response.status_code == 302
    assert client.get(reverse("home")).url == reverse("authoring:package-list")


def test_failures_beyond_the_limit_are_refused_even_with_the_right_password() -> None:
    author = AuthorFactory()
    client = Client()
    for _ in range(settings.VIVA_LOGIN_MAX_FAILURES):
        assert attempt(client, author.username, "wrong").status_code == 200
    locked = attempt(client, author.username, PASSWORD)
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) > 0
    assert b"Too many failed sign-in attempts" in locked.content
    assert "_auth_user_id" not in client.session


def test_lockout_is_per_username_and_address() -> None:
    author, other = AuthorFactory(), AuthorFactory()
    client = Client()
    for _ in range(settings.VIVA_LOGIN_MAX_FAILURES):
        attempt(client, author.username, "wrong", address="10.0.0.1")
    # Same account from another address, and another account from the same address, still work.
    assert attempt(Client(), author.username, PASSWORD, address="10.0.0.2").status_code == 302
    assert attempt(Client(), other.username, PASSWORD, address="10.0.0.1").status_code == 302


def test_an_address_spraying_many_usernames_is_stopped() -> None:
    client = Client()
    limit = settings.VIVA_LOGIN_MAX_FAILURES_PER_ADDRESS
    for n in range(limit):
        attempt(client, f"guess{n}", "wrong", address="10.9.9.9")
    author = AuthorFactory()
    assert attempt(client, author.username, PASSWORD, address="10.9.9.9").status_code == 429


def test_success_clears_the_failure_count() -> None:
    author = AuthorFactory()
    for _ in range(settings.VIVA_LOGIN_MAX_FAILURES - 1):
        attempt(Client(), author.username, "wrong")
    assert attempt(Client(), author.username, PASSWORD).status_code == 302
    for _ in range(settings.VIVA_LOGIN_MAX_FAILURES - 1):
        attempt(Client(), author.username, "wrong")
    assert attempt(Client(), author.username, PASSWORD).status_code == 302


def test_session_key_is_rotated_on_sign_in() -> None:
    author = AuthorFactory()
    client = Client()
    client.get(LOGIN)
    session = client.session
    session["planted"] = "by an attacker"
    session.save()
    before = session.session_key
    assert attempt(client, author.username, PASSWORD).status_code == 302
    after = client.session.session_key
    assert after != before
    # The pre-login session id no longer authenticates anyone.
    attacker = Client()
    attacker.cookies[settings.SESSION_COOKIE_NAME] = before
    assert attacker.get(reverse("authoring:package-list")).status_code == 302


def test_candidates_cannot_sign_in_with_a_password() -> None:
    candidate = CandidateFactory()
    candidate.set_unusable_password()
    candidate.save()
    assert attempt(Client(), candidate.username, PASSWORD).status_code == 200


# --- every password form: the throttle sits at the authentication layer -------------------------

ADMIN_LOGIN = "/admin/login/"


def test_the_admin_sign_in_is_rate_limited_too() -> None:
    from tests.factories import AdminFactory

    admin = AdminFactory()
    client = Client()
    form = {"username": admin.username, "next": "/admin/"}
    for _ in range(settings.VIVA_LOGIN_MAX_FAILURES):
        wrong = client.post(ADMIN_LOGIN, {**form, "password": "wrong"}, REMOTE_ADDR="10.0.0.7")
        assert wrong.status_code == 200
    locked = client.post(ADMIN_LOGIN, {**form, "password": PASSWORD}, REMOTE_ADDR="10.0.0.7")
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) > 0
    assert b"Too many failed sign-in attempts" in locked.content
    assert "_auth_user_id" not in client.session
    # Another address is not locked out.
    assert (
        Client().post(ADMIN_LOGIN, {**form, "password": PASSWORD}, REMOTE_ADDR="10.0.0.8")
    ).status_code == 302


def test_failures_on_one_form_count_on_every_other() -> None:
    author = AuthorFactory()
    for n in range(settings.VIVA_LOGIN_MAX_FAILURES):
        url = LOGIN if n % 2 else ADMIN_LOGIN
        Client().post(url, {"username": author.username, "password": "x"}, REMOTE_ADDR="10.1.1.1")
    assert attempt(Client(), author.username, PASSWORD, address="10.1.1.1").status_code == 429


def test_authenticate_itself_refuses_a_locked_pair() -> None:
    """Any future password form calling ``authenticate(request, ...)`` is covered."""
    from django.contrib.auth import authenticate
    from django.test import RequestFactory

    author = AuthorFactory()
    request = RequestFactory().post("/any-form/", REMOTE_ADDR="10.2.2.2")
    for _ in range(settings.VIVA_LOGIN_MAX_FAILURES):
        assert authenticate(request, username=author.username, password="wrong") is None
    fresh = RequestFactory().post("/any-form/", REMOTE_ADDR="10.2.2.2")
    assert authenticate(fresh, username=author.username, password=PASSWORD) is None
    other = RequestFactory().post("/any-form/", REMOTE_ADDR="10.2.2.3")
    assert authenticate(other, username=author.username, password=PASSWORD) == author
