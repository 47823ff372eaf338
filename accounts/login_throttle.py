"""Rate limiting of staff sign-in: failed attempts counted per (username, address) and per address.

Fixed windows in the cache (Redis in services mode, so every web process shares the counts). A
locked pair is refused before the password is even checked; a success clears the pair's count.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The client's address; X-Forwarded-For only when VIVA_TRUST_X_FORWARDED_FOR is set."""
    if settings.VIVA_TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
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
