"""Shared test configuration.

``@pytest.mark.services("postgres", "redis")`` marks a test that needs real services. It is skipped
with a reason when they are not configured, except under CI=true, where it fails instead: CI must
run every service-backed test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.utils import translation

from tests.support import database_flush

CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

database_flush.install()


def _available(service: str) -> bool:
    if service == "postgres":
        return settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    if service == "redis":
        return bool(settings.REDIS_URL)
    raise ValueError(f"unknown service {service!r}")


def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker("services")
    if marker is None:
        return
    wanted = marker.args or ("postgres", "redis")
    missing = [s for s in wanted if not _available(s)]
    if missing:
        message = f"needs {', '.join(missing)} (set DATABASE_URL / REDIS_URL)"
        if CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    """PBKDF2's deliberate slowness buys nothing in tests; the sign-in logic is unchanged."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _clear_cache() -> None:
    """Login counters and other cached state never leak between tests."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _no_language_left_active() -> Iterator[None]:
    """A request with Accept-Language leaves its language active in the thread (LocaleMiddleware
    does not undo it), and so does a test that activates one: undone after every test, so a
    later test in the same worker reads the default language whatever ran before it."""
    yield
    translation.deactivate()


LOOPBACK = ["127.0.0.0/8", "::1/128"]
"""What a test whose peers run on this machine allows (``VIVA_OUTBOUND_ALLOWED_NETWORKS``)."""


@pytest.fixture
def loopback_allowed(settings) -> None:
    """Let server-side fetches reach peers on 127.0.0.1 (web/outbound.py); off by default, as
    in production: the tests that talk to a local peer turn it on explicitly."""
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = LOOPBACK
