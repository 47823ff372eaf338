"""OpenID Connect discovery for staff single sign-on (docs/sso.md, issue #32).

With only ``VIVA_OIDC_ISSUER`` configured, the provider's endpoints come from
``<issuer>/.well-known/openid-configuration`` (OpenID Connect Discovery 1.0 §4: a trailing ``/``
of the issuer is dropped before the suffix). An endpoint setting
(``VIVA_OIDC_AUTHORIZATION_ENDPOINT`` …) overrides what the document says; with all four set, no
document is fetched.

The document is fetched through the outbound address guard (``web.outbound``: public addresses
only unless ``VIVA_OUTBOUND_ALLOWED_NETWORKS`` lists the provider's network; no redirect is
followed; at most :data:`MAX_BYTES`) and accepted only when

* it answers 200 with a JSON object whose ``issuer`` is exactly the configured issuer;
* every endpoint it names, and the discovery URL itself, is ``https``: plain ``http`` only under
  ``DEBUG`` or for a host whose every address is in ``VIVA_OUTBOUND_ALLOWED_NETWORKS`` (a
  provider on the deployment's own network, the tests' on 127.0.0.1);
* ``code_challenge_methods_supported``, when present, lists ``S256``: PKCE is always sent
  (S256); a provider that does not advertise the field ignores the unknown parameters (RFC 6749
  §3.1), one that names other methods only would refuse our challenge.

An accepted document's endpoints are kept in the cache for
``VIVA_OIDC_DISCOVERY_MAX_AGE_SECONDS`` (an hour by default). A failure is kept for
:data:`FAILURE_HOLD` seconds: the sign-in page is public, and a provider that is down or
misconfigured must not cost each visitor an outbound fetch (up to ``OIDC_TIMEOUT``) of a worker.
Anything else is :class:`DiscoveryFailed`, whose message is the reason for the log.
"""

from __future__ import annotations

import hashlib
import ipaddress
import socket
from dataclasses import dataclass
from typing import Any, Final

import requests
from django.conf import settings
from django.core.cache import cache

from web import outbound

MAX_BYTES: Final = 256 * 1024
DEFAULT_MAX_AGE: Final = 3600
SUFFIX: Final = "/.well-known/openid-configuration"
PKCE_METHOD: Final = "S256"
FAILURE_HOLD: Final = 15

FIELDS: Final = {
    "authorization": ("OIDC_OP_AUTHORIZATION_ENDPOINT", "authorization_endpoint"),
    "token": ("OIDC_OP_TOKEN_ENDPOINT", "token_endpoint"),
    "userinfo": ("OIDC_OP_USER_ENDPOINT", "userinfo_endpoint"),
    "jwks": ("OIDC_OP_JWKS_ENDPOINT", "jwks_uri"),
}
"""Our name of each endpoint: (its setting, its field in the discovery document)."""


class DiscoveryFailed(Exception):
    """The provider's endpoints could not be found; the message says why (for the log)."""


@dataclass(frozen=True)
class Endpoints:
    authorization: str
    token: str
    userinfo: str
    jwks: str


def discovery_url(issuer: str) -> str:
    return issuer.rstrip("/") + SUFFIX


def configured_endpoints() -> dict[str, str]:
    """The endpoints set explicitly (empty text where discovery is to name them)."""
    return {name: str(getattr(settings, key, "") or "") for name, (key, _) in FIELDS.items()}


def provider_endpoints() -> Endpoints:
    """The provider's endpoints: the explicit settings, the rest discovered."""
    explicit = configured_endpoints()
    if all(explicit.values()):
        return Endpoints(**explicit)
    discovered = discovery(str(getattr(settings, "VIVA_OIDC_ISSUER", "") or ""))
    merged = {name: explicit[name] or discovered.get(name, "") for name in FIELDS}
    missing = sorted(FIELDS[name][1] for name, url in merged.items() if not url)
    if missing:
        raise DiscoveryFailed(f"the discovery document names no {', '.join(missing)}")
    return Endpoints(**merged)


def cache_key(issuer: str) -> str:
    return "accounts.sso.discovery:" + hashlib.sha256(issuer.encode()).hexdigest()


def failure_key(issuer: str) -> str:
    return cache_key(issuer) + ":failed"


def forget(issuer: str) -> None:
    """Drop what is kept of ``issuer`` (the next sign-in fetches its document again)."""
    cache.delete_many([cache_key(issuer), failure_key(issuer)])


def discovery(issuer: str) -> dict[str, str]:
    """The endpoints ``issuer``'s discovery document names, from the cache or fetched."""
    if not issuer:
        raise DiscoveryFailed("VIVA_OIDC_ISSUER is not set")
    kept = cache.get(cache_key(issuer))
    if isinstance(kept, dict):
        return {str(k): str(v) for k, v in kept.items()}
    failed = cache.get(failure_key(issuer))
    if isinstance(failed, str):
        raise DiscoveryFailed(f"{failed} (kept for {FAILURE_HOLD} s: not fetched again yet)")
    try:
        endpoints = endpoints_of(fetch_document(issuer), issuer)
    except DiscoveryFailed as failure:
        cache.set(failure_key(issuer), str(failure), FAILURE_HOLD)
        raise
    max_age = int(getattr(settings, "VIVA_OIDC_DISCOVERY_MAX_AGE_SECONDS", DEFAULT_MAX_AGE))
    cache.set(cache_key(issuer), endpoints, max(max_age, 1))
    return endpoints


def fetch_document(issuer: str) -> Any:
    """The parsed discovery document of ``issuer`` (fetched through the address guard)."""
    url = discovery_url(issuer)
    require_secure(url, "the discovery URL")
    timeout = getattr(settings, "OIDC_TIMEOUT", None) or outbound.DEFAULT_TIMEOUT
    try:
        response = outbound.get(url, stream=True, timeout=timeout, allow_redirects=False)
        if response.status_code != 200:
            response.close()
            raise DiscoveryFailed(f"{url} answered {response.status_code}")
        return outbound.json_body(response, max_bytes=MAX_BYTES)
    except (requests.RequestException, ValueError, RecursionError) as error:
        raise DiscoveryFailed(f"{url}: {type(error).__name__}: {error}") from error


def endpoints_of(document: Any, issuer: str) -> dict[str, str]:
    """The endpoints a discovery document names, once it is checked (module docstring)."""
    if not isinstance(document, dict):
        raise DiscoveryFailed("the discovery document is not a JSON object")
    if document.get("issuer") != issuer:
        raise DiscoveryFailed(
            f"the discovery document names issuer {str(document.get('issuer'))[:200]!r}, "
            f"not {issuer!r}"
        )
    methods = document.get("code_challenge_methods_supported")
    if methods is not None and (not isinstance(methods, list) or PKCE_METHOD not in methods):
        raise DiscoveryFailed(f"the provider does not support PKCE {PKCE_METHOD} ({methods!r})")
    endpoints: dict[str, str] = {}
    for name, (_, field) in FIELDS.items():
        value = document.get(field)
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise DiscoveryFailed(f"the discovery document's {field} is not a URL")
        require_secure(value, field)
        endpoints[name] = value
    return endpoints


def require_secure(url: str, what: str) -> None:
    """``url`` must be https; plain http only under DEBUG or on an allowed network."""
    try:
        parts = outbound.parse(url)
    except outbound.AddressRefused as refused:
        raise DiscoveryFailed(f"{what} {url[:200]!r}: {refused}") from refused
    if parts.scheme == "https" or settings.DEBUG or _on_allowed_network(parts.hostname or ""):
        return
    raise DiscoveryFailed(f"{what} {url[:200]!r} is not https")


def _on_allowed_network(host: str) -> bool:
    """Whether every address of ``host`` is in ``VIVA_OUTBOUND_ALLOWED_NETWORKS``."""
    networks = outbound.allowed_networks()
    if not networks:
        return False
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return False
    addresses = {ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos}
    return bool(addresses) and all(
        any(ip.version == net.version and ip in net for net in networks) for ip in addresses
    )
