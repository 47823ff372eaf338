"""``web.no_session.forget_session``: a refusal keeps only a session the browser brought and
that still holds something; anything this request created, replaced or emptied is gone."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.http import HttpRequest
from django.test import RequestFactory

from web.no_session import forget_session

pytestmark = pytest.mark.django_db

Store = import_module(settings.SESSION_ENGINE).SessionStore


def request_with(session_key: str | None) -> HttpRequest:
    request = RequestFactory().get("/")
    if session_key is not None:
        request.COOKIES[settings.SESSION_COOKIE_NAME] = session_key
    request.session = Store(session_key)
    return request


def stored(data: dict[str, str]) -> str:
    session = Store()
    session.update(data)
    session.save()
    return str(session.session_key)


def test_a_session_this_request_started_is_not_created() -> None:
    request = request_with(None)
    request.session["lti-launch"] = "x"
    forget_session(request)
    assert request.session.is_empty()
    assert not Session.objects.exists()


def test_the_browsers_own_session_is_kept() -> None:
    key = stored({"_auth_user_id": "1"})
    request = request_with(key)
    forget_session(request)
    assert request.session.session_key == key and Session.objects.filter(pk=key).exists()


def test_an_emptied_or_replaced_session_is_deleted() -> None:
    emptied = stored({"_auth_user_id": "1"})
    request = request_with(emptied)
    request.session.clear()  # what an LTI launch does first
    forget_session(request)
    assert not Session.objects.filter(pk=emptied).exists()

    replaced = stored({"_auth_user_id": "1"})
    request = request_with(replaced)
    request.session.cycle_key()  # what a sign-in during the request does
    forget_session(request)
    assert not Session.objects.exists()


def test_a_cookie_naming_no_session_creates_none() -> None:
    request = request_with("no-such-session-key-000000000000")
    request.session["x"] = "y"
    forget_session(request)
    assert not Session.objects.exists()
