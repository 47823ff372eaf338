"""A real HTTP receiver for webhook tests: a threaded ``http.server`` on 127.0.0.1.

``with webhook_receiver(statuses=[500, 500]) as receiver:`` answers the first requests with the
listed status codes, then 200; ``receiver.url`` is where to send, ``receiver.received`` every
request as it arrived (headers with lower-case names, raw body), ``receiver.wait_for(n)`` waits
until ``n`` requests arrived. ``webhook_receiver(hold_first=True)`` records its first request
and never answers it (a receiver slow at first: ``receiver.first`` is set when it arrives; the
sender's timeout, or the block's end, closes it), then answers the others as above.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() on arrival


@dataclass
class Receiver:
    url: str
    statuses: list[int]
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    hold_first: bool = False
    first: threading.Event = field(default_factory=threading.Event)
    """Set when the first request arrived."""
    released: threading.Event = field(default_factory=threading.Event)

    def record(self, request: Received) -> int:
        with self.lock:
            self.received.append(request)
            return self.statuses.pop(0) if self.statuses else 200

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.05)
        raise TimeoutError(f"{len(self.received)} of {count} requests arrived in {timeout} s")


@contextmanager
def webhook_receiver(
    statuses: list[int] | None = None, *, hold_first: bool = False
) -> Iterator[Receiver]:
    """Serve on a free loopback port until the block ends."""
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            status = receiver.record(Received(self.path, headers, body, time.monotonic()))
            if receiver.hold_first and not receiver.first.is_set():
                receiver.first.set()
                receiver.released.wait(30)
                return
            answer = b'{"ok": true}' if status < 300 else b"receiver says no"
            self.send_response(status)
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = Receiver(
        f"http://127.0.0.1:{server.server_port}/hooks/viva",
        list(statuses or []),
        hold_first=hold_first,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.released.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
