"""A real HTTP peer for the outbound-guard tests: a threaded ``http.server`` on 127.0.0.1.

``with http_peer({"/x": (200, {"a": 1}), "/r": (302, "http://169.254.169.254/")}) as peer:``
answers each path with its status and JSON body, or for a 3xx its ``Location``; any other path
404. ``peer.url(path)`` is where to fetch, ``peer.hits`` every path requested, in order.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Peer:
    base: str
    port: int
    hits: list[str] = field(default_factory=list)

    def url(self, path: str = "/") -> str:
        return self.base + path


@contextmanager
def http_peer(
    routes: dict[str, tuple[int, Any]] | None = None,
    *,
    host: str = "127.0.0.1",
    tls: ssl.SSLContext | None = None,
) -> Iterator[Peer]:
    """Serve ``routes`` on a free port of ``host`` (loopback; ``::1`` for IPv6), over TLS with
    ``tls`` (a server context), until the block ends."""
    table = routes if routes is not None else {}  # filled in later by a test that needs the port
    peer: Peer

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            peer.hits.append(self.path)
            status, body = table.get(self.path.split("?", 1)[0], (404, {"error": "none"}))
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", str(body))
                payload = b""
            else:
                payload = json.dumps(body).encode()
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = _answer
        do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            return

    class Server(ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    server = Server((host, 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]
    scheme = "https" if tls is not None else "http"
    peer = Peer(f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}", port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield peer
    finally:
        server.shutdown()
        server.server_close()
