"""A scripted, recording OpenAI-compatible Chat Completions server for tests.

A real HTTP server on ``127.0.0.1`` (a free port chosen by the OS) running in a background
thread, so any client (the ``openai`` SDK inside Pipecat's ``OpenAILLMService``, ``httpx``,
``urllib``) talks to it over TCP exactly as it would to the real API. Standard library only.

What it does:

* ``POST /v1/chat/completions``: answers with the next scripted :class:`Reply` from a FIFO queue,
  streamed as Server-Sent Events (``"stream": true``, chunked transfer encoding, one
  ``chat.completion.chunk`` per event, a usage chunk when ``stream_options.include_usage`` is
  set, then ``data: [DONE]``) or as one ``chat.completion`` JSON object otherwise.
* Every request is recorded (:attr:`OpenAICompatibleServer.requests`) with its parsed JSON body,
  so tests can assert on what the LLM was sent: the system instruction, the tools, the messages.
* A reply is text (:meth:`Reply.text`), one or more tool calls (:meth:`Reply.tool_call`,
  :meth:`Reply.tool_calls_of`) or an HTTP error (:meth:`Reply.error`). A script entry may also be a
  callable that receives the :class:`RecordedRequest` and returns a :class:`Reply`.
* When the queue is empty the server answers with ``default_reply`` if one was given, otherwise
  with HTTP 400, and records the request in :attr:`OpenAICompatibleServer.unscripted` so a test can
  assert that nothing unexpected was asked.

Example::

    with OpenAICompatibleServer() as server:
        server.script(Reply.text("Hello."), Reply.tool_call("report_observation", {...}))
        llm = OpenAILLMService(api_key="test", base_url=server.base_url, ...)
        ...
        await server.wait_for_requests(2)
        assert server.requests[1].system_instruction == "You are ..."
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["OpenAICompatibleServer", "RecordedRequest", "Reply", "ToolCall"]

MODEL = "scripted-test-model"


@dataclass(frozen=True)
class ToolCall:
    """One tool call the scripted assistant makes."""

    name: str
    arguments: Mapping[str, Any]
    call_id: str | None = None
    """Defaults to ``call_<n>`` with a server-wide counter."""
    raw_arguments: str | None = None
    """Sent instead of ``arguments`` as JSON (to send arguments that are not valid JSON)."""

    @property
    def arguments_text(self) -> str:
        return (
            self.raw_arguments
            if self.raw_arguments is not None
            else json.dumps(dict(self.arguments))
        )


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the class methods."""

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    status: int = 200
    error_message: str = ""
    chunk_size: int = 16
    """Characters per streamed text or argument fragment (to exercise client-side joining)."""
    delay_secs: float = 0.0
    """Pause before every streamed event (to simulate a slow model)."""
    thinking_secs: float = 0.0
    """Pause once, before the first streamed event (a model that thinks, then streams)."""
    drop: bool = False
    """Close the connection without answering (the client sees a connection error)."""

    @classmethod
    def text(cls, content: str, *, chunk_size: int = 16, delay_secs: float = 0.0) -> Reply:
        """The assistant says ``content``."""
        return cls(content=content, chunk_size=chunk_size, delay_secs=delay_secs)

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: Mapping[str, Any],
        *,
        call_id: str | None = None,
        chunk_size: int = 16,
        delay_secs: float = 0.0,
        thinking_secs: float = 0.0,
    ) -> Reply:
        """The assistant calls tool ``name`` with ``arguments`` (sent as a JSON string)."""
        return cls(
            tool_calls=(ToolCall(name, arguments, call_id),),
            chunk_size=chunk_size,
            delay_secs=delay_secs,
            thinking_secs=thinking_secs,
        )

    @classmethod
    def tool_calls_of(cls, *calls: ToolCall) -> Reply:
        """The assistant calls several tools in one response."""
        return cls(tool_calls=tuple(calls))

    @classmethod
    def empty(cls) -> Reply:
        """A response with neither text nor a tool call (an empty stream)."""
        return cls()

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Reply:
        """A model that says nothing for ``seconds`` before its first streamed event."""
        return cls(content="...", delay_secs=seconds, chunk_size=1000)

    @classmethod
    def dropped(cls) -> Reply:
        """The connection is closed without an answer."""
        return cls(drop=True)

    @classmethod
    def raw_tool_call(cls, name: str, raw_arguments: str) -> Reply:
        """A tool call whose arguments are sent as ``raw_arguments`` verbatim (not JSON)."""
        return cls(tool_calls=(ToolCall(name, {}, raw_arguments=raw_arguments),))

    @classmethod
    def error(cls, status: int = 500, message: str = "scripted error") -> Reply:
        """The API fails with HTTP ``status`` and an OpenAI-style error body."""
        return cls(status=status, error_message=message)


ScriptEntry = Reply | Callable[["RecordedRequest"], Reply]
"""A reply, or a function of the request that returns one (also as ``default_reply``)."""


@dataclass
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = field(default_factory=time.monotonic)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` array as sent."""
        return list(self.body.get("messages") or [])

    @property
    def system_instruction(self) -> str | None:
        """Content of the first ``system`` message, if any (Pipecat puts its instruction there)."""
        for message in self.messages:
            if message.get("role") == "system":
                return _text_of(message)
        return None

    def messages_with_role(self, role: str) -> list[str]:
        """Text contents of every message with ``role`` (``developer``, ``user``, ``tool``...)."""
        return [_text_of(m) for m in self.messages if m.get("role") == role]

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The ``tools`` array as sent (empty when no tools were offered)."""
        return list(self.body.get("tools") or [])

    @property
    def tool_names(self) -> list[str]:
        """Names of the offered function tools, in order."""
        return [t["function"]["name"] for t in self.tools if t.get("type") == "function"]

    def tool(self, name: str) -> dict[str, Any]:
        """The ``function`` object of the offered tool ``name`` (KeyError if absent)."""
        for tool in self.tools:
            if tool.get("function", {}).get("name") == name:
                return dict(tool["function"])
        raise KeyError(name)

    @property
    def stream(self) -> bool:
        """Whether the client asked for a streamed answer."""
        return bool(self.body.get("stream"))


def _text_of(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def _chunks(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class OpenAICompatibleServer:
    """The server. Use it as a context manager, or call :meth:`start` and :meth:`stop`."""

    def __init__(
        self, *, default_reply: ScriptEntry | None = None, host: str = "127.0.0.1"
    ) -> None:
        self.default_reply = default_reply
        self._host = host
        self._lock = threading.Lock()
        self._script: deque[ScriptEntry] = deque()
        self._requests: list[RecordedRequest] = []
        self._unscripted: list[RecordedRequest] = []
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> OpenAICompatibleServer:
        """Bind a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer((self._host, 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="openai-compatible-test-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` to an OpenAI client: ``http://127.0.0.1:<port>/v1``."""
        return f"http://{self._host}:{self.port}/v1"

    # -- script and records -----------------------------------------------------------------

    def script(self, *entries: ScriptEntry) -> None:
        """Append replies (or reply factories) to the queue; each request consumes one."""
        with self._lock:
            self._script.extend(entries)

    @property
    def pending(self) -> int:
        """How many scripted replies have not been used yet."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every chat completion request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def unscripted(self) -> list[RecordedRequest]:
        """Requests that found the script empty (answered by ``default_reply`` or HTTP 400)."""
        with self._lock:
            return list(self._unscripted)

    def wait_for_requests_sync(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until at least ``count`` requests arrived; TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            requests = self.requests
            if len(requests) >= count:
                return requests
            time.sleep(0.01)
        raise TimeoutError(f"expected {count} requests, got {len(self.requests)} in {timeout}s")

    async def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Like :meth:`wait_for_requests_sync`, without blocking the event loop."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            requests = self.requests
            if len(requests) >= count:
                return requests
            await asyncio.sleep(0.01)
        raise TimeoutError(f"expected {count} requests, got {len(self.requests)} in {timeout}s")

    # -- used by the handler ----------------------------------------------------------------

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._requests.append(request)
            entry = self._script.popleft() if self._script else None
            if entry is None:
                self._unscripted.append(request)
        if entry is None:
            if self.default_reply is not None:
                default = self.default_reply
                return default(request) if callable(default) else default
            # 400, not 5xx: the OpenAI client would retry a 5xx and slow the failing test down.
            return Reply.error(400, "no scripted reply left for this request")
        return entry(request) if callable(entry) else entry

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)


class _Handler(BaseHTTPRequestHandler):
    """Speaks just enough of the Chat Completions API for clients under test."""

    server_state: OpenAICompatibleServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        return

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "invalid"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "invalid"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, {"error": {"message": "body is not JSON", "type": "invalid"}})
            return
        request = RecordedRequest(
            method="POST", path=self.path, headers=dict(self.headers.items()), body=body
        )
        reply = self.server_state._next_reply(request)
        if reply.drop:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if reply.status != 200:
            error = {"message": reply.error_message, "type": "server_error", "code": None}
            self._send_json(reply.status, {"error": error})
        elif request.stream:
            self._stream(
                reply, include_usage=bool((body.get("stream_options") or {}).get("include_usage"))
            )
        else:
            self._send_json(200, self._completion(reply))

    # -- bodies -----------------------------------------------------------------------------

    def _call_ids(self, reply: Reply) -> list[str]:
        return [call.call_id or f"call_{self.server_state._next_id()}" for call in reply.tool_calls]

    def _completion(self, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text},
                }
                for call, call_id in zip(reply.tool_calls, self._call_ids(reply), strict=True)
            ]
        return {
            "id": f"chatcmpl-{self.server_state._next_id()}",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def _events(self, reply: Reply, include_usage: bool) -> Iterator[dict[str, Any]]:
        completion_id = f"chatcmpl-{self.server_state._next_id()}"

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        yield chunk({"role": "assistant", "content": ""})
        if reply.content:
            for piece in _chunks(reply.content, reply.chunk_size):
                yield chunk({"content": piece})
        for index, (call, call_id) in enumerate(
            zip(reply.tool_calls, self._call_ids(reply), strict=True)
        ):
            head = {"index": index, "id": call_id, "type": "function"}
            yield chunk(
                {"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]}
            )
            for piece in _chunks(call.arguments_text, reply.chunk_size):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
        if include_usage:
            yield {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": MODEL,
                "choices": [],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }

    # -- transport --------------------------------------------------------------------------

    def _send_json(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status, HTTPStatus(status).phrase)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: Reply, *, include_usage: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events: Sequence[bytes] = [
            *(f"data: {json.dumps(e)}\n\n".encode() for e in self._events(reply, include_usage)),
            b"data: [DONE]\n\n",
        ]
        try:
            if reply.thinking_secs:
                time.sleep(reply.thinking_secs)
            for event in events:
                if reply.delay_secs:
                    time.sleep(reply.delay_secs)
                self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client went away (interruption)
            self.close_connection = True
