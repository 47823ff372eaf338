"""Every server-side fetch goes through here: the request forgery (SSRF) guard.

Webhook deliveries, LTI Dynamic Registration, the LTI platform's keyset, token and services
(pylti1p3), and single sign-on (mozilla-django-oidc's JWKS, token and userinfo calls) reach
URLs that someone else chose. A URL may be fetched only when it is ``http`` or ``https``,
names a host, carries no user name or password, and **every** address its host resolves to is
public (globally routable): loopback, private, link-local, shared (CGNAT), unique-local,
multicast, unspecified and reserved addresses are refused, IPv4 embedded in IPv6 (mapped,
compatible, translated, 6to4, NAT64) included, as are special ranges the interpreter's own
tables may still call public (:data:`NOT_PUBLIC`), and so are literal hosts in any spelling
(``127.1``, ``2130706433``, ``[::1]``, ``0.0.0.0``), since the check runs on what the name
resolves to.

The connection then goes to the address that was checked (:class:`GuardedAdapter` pins it; the
URL's host is still sent as ``Host`` and, for https, as the TLS server name whose certificate is
verified), so a name that re-resolves to an internal address in between (DNS rebinding) gains
nothing. Redirects are followed by :func:`guarded_session` only through the same check, hop by
hop; proxies from the environment are ignored.

``VIVA_OUTBOUND_ALLOWED_NETWORKS`` (CIDR networks, empty by default) lets a deployment reach
peers on its own network, and the tests their peers on 127.0.0.1. Cloud metadata addresses
(:data:`METADATA`) are refused whatever it lists.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import SplitResult, urlsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA: Final = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "fd00:ec2::254", "169.254.170.2", "100.100.100.200")
)
"""Cloud metadata services (AWS, its IPv6 and ECS endpoints, Alibaba): never reachable."""

TAIL_IPV4: Final = tuple(
    ipaddress.IPv6Network(n) for n in ("64:ff9b::/96", "::/96", "::ffff:0:0:0/96")
)
"""IPv6 prefixes whose last 32 bits are an IPv4 address a translator or the host's stack may
reach: NAT64's well-known prefix, IPv4-compatible (deprecated) and IPv4-translated (SIIT)."""

NOT_PUBLIC: Final = tuple(
    ipaddress.IPv6Network(n) for n in ("64:ff9b:1::/48", "3fff::/20", "5f00::/16")
)
"""Special-purpose ranges (IANA) that some interpreters' ``is_global`` still calls public
(Python 3.12.1 does): local-use IPv4/IPv6 translation (RFC 8215: a campus's own NAT64 into its
network), documentation (RFC 9637), segment routing identifiers (RFC 9602)."""
DEFAULT_TIMEOUT: Final = 10.0
MAX_REDIRECTS: Final = 5
PINNED_ADDRESS: Final = "viva_outbound_address"


class AddressRefused(requests.RequestException):
    """A URL the site may not fetch; the message says why (for the log, not for the page)."""


def allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """``VIVA_OUTBOUND_ALLOWED_NETWORKS`` as networks (a list or comma-separated text)."""
    raw = getattr(settings, "VIVA_OUTBOUND_ALLOWED_NETWORKS", ()) or ()
    items = raw.split(",") if isinstance(raw, str) else raw
    return [ipaddress.ip_network(str(item).strip(), strict=False) for item in items if item]


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


def _embedded(ip: IPAddress) -> list[IPAddress]:
    """``ip`` and any IPv4 address it carries (mapped, 6to4, :data:`TAIL_IPV4`)."""
    found: list[IPAddress] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        for inner in (ip.ipv4_mapped, ip.sixtofour):
            if inner is not None:
                found.append(inner)
        if any(ip in prefix for prefix in TAIL_IPV4) and int(ip) > 1:  # :: and ::1 are not
            found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def _public(ip: IPAddress) -> bool:
    """Globally routable by the interpreter's tables and by :data:`NOT_PUBLIC`."""
    listed = isinstance(ip, ipaddress.IPv6Address) and any(ip in net for net in NOT_PUBLIC)
    return ip.is_global and not ip.is_multicast and not ip.is_unspecified and not listed


def check_ip(text: str) -> str:
    """``text`` (an IP address) if the site may connect to it, else :class:`AddressRefused`."""
    ip = ipaddress.ip_address(text.split("%", 1)[0])
    allowed = allowed_networks()
    for candidate in _embedded(ip):
        if candidate in METADATA:
            raise AddressRefused(f"{ip} is a cloud metadata address")
        listed = any(candidate.version == net.version and candidate in net for net in allowed)
        if not _public(candidate) and not listed:
            raise AddressRefused(f"{ip} is not a public address")
    return str(ip)


def check_literal_host(url: str) -> None:
    """Refuses a URL whose host is an IP address or ``localhost`` the site may not reach (on
    saving a URL; names are resolved and checked again at each fetch)."""
    host = parse(url).hostname or ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if host == "localhost" or host.endswith(".localhost"):
            resolve(parse(url))
        return
    check_ip(host)


def resolve(parts: SplitResult) -> list[str]:
    """The addresses the URL's host resolves to, every one checked."""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise AddressRefused(f"{parts.hostname} does not resolve: {exc}") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise AddressRefused(f"{parts.hostname} resolves to no address")
    return [check_ip(address) for address in addresses]


class GuardedAdapter(HTTPAdapter):
    """requests' adapter that checks each request's URL (every hop of a redirect is a request
    of its own) and connects to the address it checked."""

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        parts = parse(str(request.url))
        pinned = request.copy()
        pinned.headers["Host"] = parts.netloc
        setattr(pinned, PINNED_ADDRESS, resolve(parts)[0])
        limit = DEFAULT_TIMEOUT if timeout is None else timeout
        return super().send(pinned, stream=stream, timeout=limit, verify=verify, cert=cert)

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: bool | str, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        address = getattr(request, PINNED_ADDRESS, None)
        if address is None:  # only GuardedAdapter.send reaches here, always with an address
            raise AddressRefused("the request was not checked")
        if host_params["scheme"] == "https":
            pool_kwargs["server_hostname"] = host_params["host"]
            pool_kwargs["assert_hostname"] = host_params["host"]
        host_params["host"] = address
        return host_params, pool_kwargs


def guarded_session() -> requests.Session:
    """A ``requests`` session whose every request (and redirect hop) passes the guard."""
    session = requests.Session()
    session.trust_env = False  # no proxy or .netrc from the environment
    session.max_redirects = MAX_REDIRECTS
    session.adapters.clear()
    session.mount(
        "", GuardedAdapter(max_retries=0)
    )  # every scheme: parse() refuses all but http(s)
    return session


def json_body(response: requests.Response, *, max_bytes: int = 1 << 20) -> Any:
    """The JSON of a response fetched with ``stream=True``, refused (``ValueError``) past
    ``max_bytes``: a peer cannot fill the server's memory."""
    try:
        data = response.raw.read(max_bytes + 1, decode_content=True)
    finally:
        response.close()
    if len(data) > max_bytes:
        raise ValueError(f"the answer from {response.url} is over {max_bytes} bytes")
    return json.loads(data)


def request(method: str, url: str, **kwargs: Any) -> requests.Response:
    """``requests.request`` through the guard."""
    with guarded_session() as session:
        return session.request(method, url, **kwargs)


def get(url: str, **kwargs: Any) -> requests.Response:
    return request("GET", url, **kwargs)


def post(url: str, **kwargs: Any) -> requests.Response:
    return request("POST", url, **kwargs)


class GuardedRequests:
    """A stand-in for the ``requests`` module inside a library whose HTTP calls must pass the
    guard (:func:`route_library_through_guard`): sessions and the module-level calls are
    guarded; exceptions and everything else are requests' own."""

    Session = staticmethod(guarded_session)
    request = staticmethod(request)
    get = staticmethod(get)
    post = staticmethod(post)

    def __getattr__(self, name: str) -> Any:
        if name in {"head", "put", "patch", "delete", "options", "api", "sessions"}:
            raise AttributeError(f"requests.{name} is not available behind the guard")
        return getattr(requests, name)


def route_library_through_guard(module: Any) -> None:
    """Make ``module`` (a library module that did ``import requests``) fetch through the guard:
    its global ``requests`` becomes :class:`GuardedRequests`. Called once from an app's
    ``ready()`` (accounts: mozilla-django-oidc; lti: pylti1p3)."""
    if isinstance(getattr(module, "requests", None), GuardedRequests):
        return
    if getattr(module, "requests", None) is not requests:
        raise RuntimeError(f"{module.__name__} does not use requests as expected")
    module.requests = GuardedRequests()
