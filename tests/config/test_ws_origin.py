"""The WebSocket origin check is exact: scheme, host and port (``config.ws_origin``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.test import override_settings

from config.ws_origin import ExactOriginValidator, origin_allowed


def scope(origin: str | None, host: str = "127.0.0.1:8000", scheme: str = "ws") -> dict[str, Any]:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    return {"type": "websocket", "scheme": scheme, "headers": headers, "path": "/ws/x/"}


SERVED = {"ALLOWED_HOSTS": ["127.0.0.1", "viva.example.edu"]}


@pytest.mark.parametrize(
    ("origin", "host", "scheme", "allowed"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", "ws", True),  # same origin
        ("http://127.0.0.1:9999", "127.0.0.1:8000", "ws", False),  # another port
        ("https://127.0.0.1:8000", "127.0.0.1:8000", "ws", False),  # another scheme
        ("http://127.0.0.1", "127.0.0.1:8000", "ws", False),  # default port 80 is not 8000
        ("http://evil.example:8000", "127.0.0.1:8000", "ws", False),
        ("https://viva.example.edu", "internal:8000", "ws", True),  # VIVA_PUBLIC_URL
        ("https://viva.example.edu:443", "internal:8000", "ws", True),
        ("https://viva.example.edu:8443", "internal:8000", "ws", False),
        ("http://viva.example.edu", "internal:8000", "ws", False),
        ("https://viva.example.edu", "viva.example.edu", "wss", True),
        ("null", "127.0.0.1:8000", "ws", False),
        (None, "127.0.0.1:8000", "ws", False),
    ],
)
def test_origins(origin: str | None, host: str, scheme: str, allowed: bool) -> None:
    with override_settings(**SERVED, VIVA_PUBLIC_URL="https://viva.example.edu"):
        assert origin_allowed(scope(origin, host, scheme)) is allowed


def test_a_wildcard_host_no_longer_admits_every_origin() -> None:
    with override_settings(ALLOWED_HOSTS=["*"], VIVA_PUBLIC_URL="https://viva.example.edu"):
        assert not origin_allowed(scope("http://evil.example:8000", "evil.example:8000"))
        assert origin_allowed(scope("https://viva.example.edu", "anything"))


def test_a_refused_handshake_never_reaches_the_consumer() -> None:
    reached: list[Any] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope)

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with override_settings(**SERVED, VIVA_PUBLIC_URL="https://viva.example.edu"):
        asyncio.run(ExactOriginValidator(inner)(scope("http://127.0.0.1:1"), receive, send))
        assert reached == [] and sent == [{"type": "websocket.close", "code": 403}]
        asyncio.run(ExactOriginValidator(inner)(scope("http://127.0.0.1:8000"), receive, send))
        assert len(reached) == 1
