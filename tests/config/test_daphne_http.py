"""Over a real daphne, every request body reaches Django (config/daphne_http.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from accounts.services import api_token_issue
from tests.factories import AuthorFactory
from tests.support.processes import asgi_server

BOUNDARY = "c637e12e2b1a998d80d1b087531af51c"


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), asgi_server() as address:
        yield address


@pytest.mark.services("postgres", "redis")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "body",
    [
        f"--{BOUNDARY}--\r\n",  # a multipart body with no part at all
        f"--{BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nx",  # never closed
        "not multipart",
    ],
)
def test_a_malformed_multipart_post_is_answered_by_the_api(server: str, body: str) -> None:
    # Twisted used to answer these itself: an empty 400 with no content type.
    key = api_token_issue(user=AuthorFactory(), name="test").key
    response = httpx.post(
        f"http://{server}/api/v1/packages/",
        content=body.encode(),
        headers={
            "Authorization": f"Token {key}",
            "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        },
        timeout=60,
    )
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert set(response.json()["error"]) == {"code", "message", "details"}
