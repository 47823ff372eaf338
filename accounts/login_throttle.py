"""Rate limiting of every password form: failed attempts counted per (username, address) and per
address.

Fixed windows in the cache (Redis in services mode, so every web process shares the counts).
Enforced at the authentication layer, so every form that checks a password through
``django.contrib.auth.authenticate`` (our sign-in, the admin's, any later one) is covered:

* :class:`ThrottledModelBackend` (``AUTHENTICATION_BACKENDS``' password backend) refuses a locked
  (username, address) before any password is checked (``PermissionDenied`` stops
  ``authenticate``), and marks the request;
* Django's ``user_login_failed`` signal counts a failure, ``user_logged_in`` clears the pair;
* :class:`LoginLockoutMiddleware` answers a marked request 429 with ``Retry-After``, whatever
  the view rendered.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from accounts.models import User


def client_address(request: HttpRequest) -> str:
    """The client's address; X-Forwarded-For only when VIVA_TRUST_X_FORWARDED_FOR is set."""
    if settings.VIVA_TRUST_X_FORWARDED_FOR:
        forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR", ""))
        if forwarded:
            return forwarded.split(",")[0].strip()
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def _key(kind: str, value: str) -> str:
    digest = hashlib.sha256(value.encode()).hexdigest()[:32]
    return f"login-fail:{kind}:{digest}"


@dataclass(frozen=True)
class Lockout:
    retry_after_seconds: int


def _counters(username: str, address: str) -> list[tuple[str, int]]:
    return [
        (_key("pair", f"{username.strip().lower()}|{address}"), settings.VIVA_LOGIN_MAX_FAILURES),
        (_key("addr", address), settings.VIVA_LOGIN_MAX_FAILURES_PER_ADDRESS),
    ]


def check(username: str, address: str) -> Lockout | None:
    """A Lockout when this username/address has used up its failures in the current window."""
    now = time.time()
    for key, limit in _counters(username, address):
        entry = cache.get(key)
        if entry and entry["count"] >= limit:
            return Lockout(max(1, int(entry["start"] + settings.VIVA_LOGIN_WINDOW_SECONDS - now)))
    return None


def record_failure(username: str, address: str) -> None:
    window = settings.VIVA_LOGIN_WINDOW_SECONDS
    now = time.time()
    for key, _limit in _counters(username, address):
        entry = cache.get(key) or {"count": 0, "start": now}
        entry["count"] += 1
        remaining = max(1, int(entry["start"] + window - now))
        cache.set(key, entry, timeout=remaining)


def record_success(username: str, address: str) -> None:
    cache.delete(_counters(username, address)[0][0])


LOCKOUT_ATTRIBUTE = "_viva_login_lockout"


def lockout_message(lockout: Lockout) -> str:
    minutes = max(1, round(lockout.retry_after_seconds / 60))
    return (
        "Too many failed sign-in attempts. For your security, sign-in is paused for this account "
        f"from your address; try again in about {minutes} minute{'s' if minutes != 1 else ''}."
    )


class ThrottledModelBackend(ModelBackend):
    """Django's username/password backend, refusing a locked (username, address) before the
    password is checked (so a right password after too many wrong ones is refused too)."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,  # Any: django-stubs types ModelBackend.authenticate's **kwargs as Any
    ) -> User | None:
        if request is not None and password is not None:
            lockout = check(username or "", client_address(request))
            if lockout is not None:
                setattr(request, LOCKOUT_ATTRIBUTE, lockout)
                raise PermissionDenied("sign-in locked")
        return super().authenticate(request, username=username, password=password, **kwargs)


def on_login_failed(
    sender: object,
    credentials: Mapping[str, object],
    request: HttpRequest | None = None,
    **kw: object,
) -> None:
    """``user_login_failed``: count the failure (not the refusals of a locked pair)."""
    if request is None or getattr(request, LOCKOUT_ATTRIBUTE, None) is not None:
        return
    if "password" not in credentials:
        return  # not a password form (e.g. a single sign-on backend)
    record_failure(str(credentials.get("username") or ""), client_address(request))


def on_logged_in(
    sender: object,
    request: HttpRequest | None = None,
    user: AbstractBaseUser | None = None,
    **kw: object,
) -> None:
    """``user_logged_in``: a success clears the (username, address) count."""
    if request is not None and user is not None:
        record_success(user.get_username(), client_address(request))


class LoginLockoutMiddleware:
    """Answers 429 (with ``Retry-After``) a request whose password check was refused."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response: HttpResponse = self.get_response(request)
        lockout: Lockout | None = getattr(request, LOCKOUT_ATTRIBUTE, None)
        if lockout is None or response.status_code == 429:
            return response
        locked = TemplateResponse(
            request,
            "accounts/login_locked.html",
            {"lockout_message": lockout_message(lockout)},
            status=429,
        )
        locked["Retry-After"] = str(lockout.retry_after_seconds)
        return locked.render()
