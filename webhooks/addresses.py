"""Where a webhook may be sent: the server-side request forgery guard.

A URL must be ``http`` or ``https``, name a host, carry no user name or password, and resolve
only to public (globally routable) addresses: loopback, private, link-local (cloud metadata at
169.254.169.254), shared, reserved and multicast addresses are refused, IPv4-mapped IPv6 included,
unless ``VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES`` is on (a deployment whose integrators sit on its own
network; the tests). The check runs when an admin saves an endpoint and again at every attempt, on
the addresses the request is then sent to (``webhooks.sending`` connects to the checked address,
so a name that re-resolves to an internal one in between gains nothing).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import SplitResult, urlsplit

from django.conf import settings


class AddressRefused(Exception):
    """A URL webhooks may not be sent to; the message says why."""


def allow_private() -> bool:
    return bool(getattr(settings, "VIVA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False))


def parse(url: str) -> SplitResult:
    """The URL's parts, refused unless http(s) with a host and no credentials."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"}:
        raise AddressRefused(
            f"only http and https URLs are allowed, not {parts.scheme or 'none'!r}"
        )
    if not parts.hostname:
        raise AddressRefused("the URL names no host")
    if parts.username or parts.password:
        raise AddressRefused("the URL may not carry a user name or password")
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError as exc:
        raise AddressRefused(f"bad port: {exc}") from exc
    return parts


def check_ip(text: str) -> str:
    """``text`` (an IP address) if webhooks may be sent there, else :class:`AddressRefused`."""
    ip = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if (not ip.is_global or ip.is_multicast) and not allow_private():
        raise AddressRefused(f"{ip} is not a public address")
    return str(ip)


def check_literal_host(url: str) -> None:
    """Refuses a URL whose host is an IP address webhooks may not reach (on saving an
    endpoint; names are resolved and checked at each attempt)."""
    host = parse(url).hostname or ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        local = host == "localhost" or host.endswith(".localhost")
        if local and not allow_private():
            raise AddressRefused("localhost is not a public address") from None
        return
    check_ip(host)


def resolve(parts: SplitResult) -> list[str]:
    """The addresses the URL's host resolves to, every one checked."""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise AddressRefused(f"{parts.hostname} does not resolve: {exc}") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    return [check_ip(address) for address in addresses]
