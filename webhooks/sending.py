"""One HTTP POST of a delivery, to the address the SSRF guard checked.

urllib3 (already installed with the HTTP clients of the stack) connects to the checked IP
address while sending the URL's host name as ``Host`` and, for https, as the TLS server name
whose certificate is verified. Redirects are not followed (a redirect could lead inside the
network) and count as a failure. The answer is read up to :data:`EXCERPT_BYTES`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import urllib3
from urllib3.util import Timeout

from web.outbound import AddressRefused, parse, resolve

EXCERPT_BYTES = 500


@dataclass(frozen=True)
class Answer:
    """What an attempt got: a status code (None when no HTTP answer came), the start of the
    body, an error description, and how long it took."""

    status_code: int | None
    excerpt: str
    error: str
    latency_ms: int

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def _pool(scheme: str, ip: str, port: int, host: str, timeout: float) -> urllib3.HTTPConnectionPool:
    limits = Timeout(connect=timeout, read=timeout)
    if scheme == "https":
        return urllib3.HTTPSConnectionPool(
            ip,
            port,
            timeout=limits,
            retries=False,
            cert_reqs="CERT_REQUIRED",
            server_hostname=host,
            assert_hostname=host,
        )
    return urllib3.HTTPConnectionPool(ip, port, timeout=limits, retries=False)


def post(url: str, *, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
    """POST ``body`` to ``url``; never raises for a network or address problem."""
    started = time.monotonic()

    def answer(status: int | None, excerpt: str = "", error: str = "") -> Answer:
        latency = round((time.monotonic() - started) * 1000)
        return Answer(status, excerpt, error[:300], latency)

    try:
        parts = parse(url)
        ip = resolve(parts)[0]
    except AddressRefused as refused:
        return answer(None, error=f"refused: {refused}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname or ""
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    pool = _pool(parts.scheme, ip, port, host, timeout)
    try:
        response = pool.urlopen(
            "POST",
            path,
            body=body,
            headers={**headers, "host": parts.netloc},
            redirect=False,
            assert_same_host=False,
            preload_content=False,
        )
        excerpt = response.read(EXCERPT_BYTES, decode_content=True)
        response.release_conn()
        return answer(response.status, excerpt.decode("utf-8", "replace"))
    except urllib3.exceptions.HTTPError as exc:
        return answer(None, error=f"{type(exc).__name__}: {exc}")
    finally:
        pool.close()
