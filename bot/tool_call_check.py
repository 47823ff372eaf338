"""Tool calls the LLM service would drop without a trace (issue #31: every fault on the record).

Pipecat's OpenAI service parses each streamed tool call's arguments at the end of the response
and silently skips a call whose arguments are not JSON. :func:`checked_service` wraps an
OpenAI-family service class so that its chat-completion stream is watched on the way through
(:func:`checked_stream`, chunks unchanged): once the stream has ended, every call whose
arguments do not parse is reported downstream as an
:class:`~bot.pipeline.UnparsedToolCallFrame` (before the response's end frame), which the core
stores as a ``system_error`` (``bot.pipeline_adapter``). Other providers are not wrapped: an
unparsable call there shows as an empty reply.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from pipecat.frames.frames import Frame

from bot.pipeline import UnparsedToolCallFrame

if TYPE_CHECKING:
    from pipecat.services.openai.llm import OpenAILLMService


def arguments_error(arguments: str) -> str | None:
    """Why ``arguments`` (a tool call's argument text; empty counts as ``{}``, as Pipecat
    reads it) is not JSON, or None when it parses."""
    try:
        json.loads(arguments or "{}")
    except json.JSONDecodeError as error:
        return f"{error.msg} at character {error.pos}"
    return None


def _collect(chunk: Any, calls: dict[int, list[str]]) -> None:
    """Add one chunk's tool-call fragments to ``calls`` (index -> [name, arguments])."""
    choices = getattr(chunk, "choices", None)
    delta = choices[0].delta if choices else None
    for call in getattr(delta, "tool_calls", None) or ():
        entry = calls.setdefault(int(getattr(call, "index", 0) or 0), ["", ""])
        function = getattr(call, "function", None)
        if function is not None:
            entry[0] += function.name or ""
            entry[1] += function.arguments or ""


async def checked_stream(
    stream: Any, report: Callable[[Frame], Awaitable[None]]
) -> AsyncIterator[Any]:
    """Yield ``stream``'s chunks unchanged; once it has ended, ``report`` an
    :class:`UnparsedToolCallFrame` for every named tool call whose arguments are not JSON.
    The stream is closed however the iteration ends (Pipecat closes what it is given)."""
    calls: dict[int, list[str]] = {}
    try:
        async for chunk in stream:
            _collect(chunk, calls)
            yield chunk
    finally:
        close = getattr(stream, "close", None) or getattr(stream, "aclose", None)
        if close is not None:
            await close()
    for name, arguments in calls.values():
        error = arguments_error(arguments)
        if name and error is not None:
            await report(
                UnparsedToolCallFrame(function_name=name, error=error, chars=len(arguments))
            )


@cache
def checked_service(base: type[OpenAILLMService]) -> type[OpenAILLMService]:
    """``base`` with its chat-completion stream watched for unparsable tool calls (module
    docstring)."""

    class ToolCallCheckedService(base):  # type: ignore[valid-type,misc]
        async def get_chat_completions(self, *args: Any, **kwargs: Any) -> Any:
            stream = await super().get_chat_completions(*args, **kwargs)
            return checked_stream(stream, self.push_frame)

    ToolCallCheckedService.__name__ = f"ToolCallChecked{base.__name__}"
    return ToolCallCheckedService
