"""The test processes keep serving however much they log.

A server started for a whole test package (the browser tests' daphne) logs for half an hour.
Its output once went to a pipe nobody read: when the pipe's 64 KiB filled, the server's next
log line blocked it, and a page late in the package timed out.
"""

from __future__ import annotations

import time

import httpx
import pytest

from tests.support.processes import asgi_server

pytestmark = pytest.mark.django_db(transaction=True)

LONG_PATH = "/no-such-page/" + "x" * 4000


def _status(url: str) -> int:
    return httpx.get(url, timeout=10).status_code


def test_a_server_that_logged_far_more_than_a_pipe_holds_still_answers() -> None:
    with asgi_server() as address:
        # Each 404 logs a warning naming the 4 KB path: 40 of them log well over 64 KiB.
        for _ in range(40):
            assert _status(f"http://{address}{LONG_PATH}") == 404
        started = time.monotonic()
        assert _status(f"http://{address}/healthz") == 200
        assert time.monotonic() - started < 5
