"""Bounded JSON decoding: the one place untrusted JSON enters the product.

:func:`parse_json` refuses, with a :class:`JsonInputError` naming what is wrong (never a
``RecursionError`` or a traceback):

* a body over ``VIVA_JSON_MAX_BYTES`` (``too_large``);
* bytes that are not UTF-8 (``invalid_encoding``);
* nesting deeper than ``VIVA_JSON_MAX_DEPTH`` arrays/objects (``too_deep``), measured by a
  linear scan *before* the recursive decoder runs;
* text that is not JSON, or uses ``NaN``/``Infinity`` (``invalid_json``);
* strings (keys or values) that are not valid Unicode text: lone surrogates such as
  ``"\\ud800"``, and NUL characters, which no database text column stores (``invalid_string``).

It serves the REST API (``web.api.parsers.BoundedJSONParser``), the WebSocket consumers
(``web.ws_input.BoundedJsonConsumerMixin``), the WebRTC offer view and the package
commands.
"""

from __future__ import annotations

import json
from typing import Final, NoReturn

from django.conf import settings

DEFAULT_MAX_BYTES: Final = 2 * 1024 * 1024
DEFAULT_MAX_DEPTH: Final = 64


class JsonInputError(ValueError):
    """Untrusted JSON was refused; ``code`` is machine-readable, the message says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def max_bytes() -> int:
    return int(getattr(settings, "VIVA_JSON_MAX_BYTES", DEFAULT_MAX_BYTES))


def max_depth() -> int:
    return int(getattr(settings, "VIVA_JSON_MAX_DEPTH", DEFAULT_MAX_DEPTH))


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays/objects in ``text`` (brackets inside strings ignored);
    linear, no recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> NoReturn:
    raise JsonInputError("invalid_json", f"{name} is not a JSON number.")


def check_text(value: str, where: str) -> None:
    """Refuse strings no database or encoder can carry: lone surrogates, NUL."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonInputError(
            "invalid_string",
            f"{where} holds an unpaired surrogate (\\u{ord(value[exc.start]):04x}).",
        ) from None
    if "\x00" in value:
        raise JsonInputError("invalid_string", f"{where} holds a NUL character.")


def check_strings(value: object) -> None:
    """Check every key and string of a decoded document (iteratively)."""
    stack: list[tuple[object, str]] = [(value, "$")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            check_text(item, where)
        elif isinstance(item, dict):
            for key, child in item.items():
                check_text(key, f"a key of {where}")
                stack.append((child, f"{where}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{n}]") for n, child in enumerate(item))


def parse_json(
    data: bytes | str, *, limit_bytes: int | None = None, limit_depth: int | None = None
) -> object:
    """Decode untrusted JSON within the limits (see the module docstring)."""
    limit_bytes = max_bytes() if limit_bytes is None else limit_bytes
    limit_depth = max_depth() if limit_depth is None else limit_depth
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > limit_bytes:
        raise JsonInputError("too_large", f"The JSON is {size} bytes; the limit is {limit_bytes}.")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonInputError(
                "invalid_encoding", f"The JSON is not UTF-8 ({exc.reason})."
            ) from None
    else:
        text = data
    text = text.removeprefix("\ufeff")
    depth = nesting_depth(text)
    if depth > limit_depth:
        raise JsonInputError(
            "too_deep", f"The JSON nests {depth} levels deep; the limit is {limit_depth}."
        )
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise JsonInputError("invalid_json", f"The body is not JSON: {exc}.") from None
    except RecursionError:  # pragma: no cover - the depth scan runs first
        raise JsonInputError("too_deep", "The JSON nests too deeply.") from None
    check_strings(value)
    return value
