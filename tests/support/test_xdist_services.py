"""Each parallel test process gets its own Redis database (tests/support/xdist_services.py)."""

from __future__ import annotations

import os

import pytest
from django.conf import settings
from django.db import connection

from tests.support.xdist_services import BASE_REDIS_URL, redis_url_for_worker, worker_number


@pytest.mark.parametrize(
    ("url", "number", "expected"),
    [
        ("redis://127.0.0.1:6379/15", 0, "redis://127.0.0.1:6379/15"),
        ("redis://127.0.0.1:6379/15", 2, "redis://127.0.0.1:6379/13"),
        ("redis://:secret@cache:6380/3", 2, "redis://:secret@cache:6380/1"),
        ("redis://127.0.0.1:6379", 1, "redis://127.0.0.1:6379/1"),
        ("redis://127.0.0.1:6379/", 0, "redis://127.0.0.1:6379/0"),
        ("redis://127.0.0.1:6379/1", 4, "redis://127.0.0.1:6379/5"),
    ],
)
def test_a_worker_gets_the_base_database_minus_its_number(
    url: str, number: int, expected: str
) -> None:
    assert redis_url_for_worker(url, number) == expected


@pytest.mark.django_db
def test_this_process_uses_its_own_redis_database_and_test_database() -> None:
    number = worker_number()
    if number is None:
        assert os.environ.get("PYTEST_XDIST_WORKER") is None
        return
    name = str(connection.settings_dict["NAME"])
    assert name.endswith(f"_gw{number}") or "memory" in name, name
    if BASE_REDIS_URL:
        assert redis_url_for_worker(BASE_REDIS_URL, number) == settings.REDIS_URL
