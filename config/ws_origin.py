"""The WebSocket handshake's origin check: exact scheme, host and port.

Channels' ``AllowedHostsOriginValidator`` compares host names only (any port, any scheme) and
lets every origin through when ``ALLOWED_HOSTS`` holds ``*``. :class:`ExactOriginValidator`
admits a handshake only when its ``Origin`` header is, after normalising default ports
(http 80, https 443):

* the origin of ``VIVA_PUBLIC_URL``, or one of ``CSRF_TRUSTED_ORIGINS``; or
* the connection's own origin: the scheme of the socket (``ws`` → ``http``, ``wss`` →
  ``https``) with the ``Host`` it was addressed to, when that host is one of ``ALLOWED_HOSTS``
  (wildcards never match).

Anything else (another port, another scheme, no ``Origin``) is refused before the consumer
runs: the handshake closes with 403.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

DEFAULT_PORTS = {"http": 80, "https": 443}
SOCKET_SCHEMES = {"ws": "http", "wss": "https"}


def normalise(origin: str) -> str | None:
    """``scheme://host:port`` with the default port made explicit, or ``None``."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port or DEFAULT_PORTS[scheme]}"


def configured_origins() -> set[str]:
    origins = [settings.VIVA_PUBLIC_URL, *settings.CSRF_TRUSTED_ORIGINS]
    return {o for o in (normalise(x) for x in origins) if o is not None}


def _header(scope: Mapping[str, object], name: bytes) -> str | None:
    headers = scope.get("headers", [])
    if not isinstance(headers, Iterable):
        return None
    for key, value in headers:
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def own_origin(scope: Mapping[str, object]) -> str | None:
    """The origin the socket itself was opened at, if its host is served."""
    host = _header(scope, b"host")
    scheme = SOCKET_SCHEMES.get(str(scope.get("scheme", "ws")), "http")
    if not host:
        return None
    own = normalise(f"{scheme}://{host}")
    hostname = urlsplit(f"{scheme}://{host}").hostname or ""
    served = {h.lower().strip("[]") for h in settings.ALLOWED_HOSTS if "*" not in h}
    return own if hostname.lower().strip("[]") in served else None


def origin_allowed(scope: Mapping[str, object]) -> bool:
    origin = _header(scope, b"origin")
    wanted = normalise(origin) if origin else None
    if wanted is None:
        return False
    return wanted in configured_origins() or wanted == own_origin(scope)


class ExactOriginValidator:
    """ASGI middleware: refuse a WebSocket handshake from any other origin (403)."""

    # Any: channels is untyped; the application it wraps, its scope and callables are Any.
    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            await receive()  # the websocket.connect message
            await send({"type": "websocket.close", "code": 403})
            return None
        return await self.application(scope, receive, send)
