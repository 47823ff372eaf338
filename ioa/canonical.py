"""Canonical JSON bytes and checksums of documents.

The canonical form of a JSON value is its UTF-8 encoding with object keys sorted, no
insignificant whitespace (``","`` and ``":"`` separators) and non-ASCII characters written as
themselves (``ensure_ascii=False``). Numbers are written as Python's ``json`` module writes
them (integers as integers, floats in shortest round-trip form, so ``1`` and ``1.0`` differ);
strings are not Unicode-normalised. This is deliberately simple and stable; it is *not*
RFC 8785 (JCS).

Only JSON values are accepted: ``dict`` with ``str`` keys, ``list``, ``str``, ``int``, finite
``float``, ``bool`` and ``None``. Anything else (tuples, sets, non-string keys, NaN, infinity,
lone surrogates, cycles) raises :class:`ioa.errors.CanonicalisationError`, so two different
Python objects can never silently share a checksum.
"""

from __future__ import annotations

import hashlib
import json
import math

from ioa.errors import CanonicalisationError

CHECKSUM_ALGORITHM = "sha256"
"""The hash algorithm named in every checksum string (``sha256:<hex>``)."""


def _check_json_value(document: object) -> None:
    """Raise :class:`CanonicalisationError` unless ``document`` is a plain JSON value.

    Iterative (no recursion limit) and cycle-safe.
    """
    stack: list[tuple[object, str]] = [(document, "$")]
    open_containers: set[int] = set()
    while stack:
        value, where = stack.pop()
        if value is None or isinstance(value, str | bool | int):
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise CanonicalisationError(f"{where}: {value!r} is not a JSON number")
            continue
        if isinstance(value, dict):
            if id(value) in open_containers:
                raise CanonicalisationError(f"{where}: the document contains a cycle")
            open_containers.add(id(value))
            for key, item in value.items():
                if not isinstance(key, str):
                    raise CanonicalisationError(f"{where}: object key {key!r} is not a string")
                stack.append((item, f"{where}.{key}"))
            continue
        if isinstance(value, list):
            if id(value) in open_containers:
                raise CanonicalisationError(f"{where}: the document contains a cycle")
            open_containers.add(id(value))
            stack.extend((item, f"{where}[{index}]") for index, item in enumerate(value))
            continue
        raise CanonicalisationError(f"{where}: {type(value).__name__} is not a JSON value")


_CANONICAL_ENCODER = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    allow_nan=False,
)
"""One encoder for every call: ``json.dumps`` with these options builds a new one each time
(it keeps no state between calls, so sharing it across threads is safe)."""


def _dumps(document: object) -> str:
    return _CANONICAL_ENCODER.encode(document)


def canonical_json(document: object) -> str:
    """Return the canonical JSON text of ``document`` (see the module docstring).

    Fast path: serialise, parse back and compare; a plain JSON value survives the round trip
    unchanged, while tuples and non-string keys (which ``json`` would silently convert) do not.
    Anything that fails is re-checked value by value for a precise error message.
    """
    try:
        text = _dumps(document)
        if json.loads(text) == document:
            return text
    except RecursionError as exc:
        raise CanonicalisationError("the document is nested too deeply") from exc
    except (TypeError, ValueError):
        pass
    _check_json_value(document)
    raise CanonicalisationError("the document is not a plain JSON value")


def canonical_bytes(document: object) -> bytes:
    """Return the canonical UTF-8 bytes of ``document``.

    Raises :class:`ioa.errors.CanonicalisationError` if ``document`` is not a JSON value or
    holds a string that cannot be encoded as UTF-8 (a lone surrogate).
    """
    text = canonical_json(document)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalisationError(
            f"the document holds a string that is not UTF-8: {exc}"
        ) from exc


def plain_canonical_bytes(document: object) -> bytes:
    """:func:`canonical_bytes` of a document that is plain JSON by construction (what
    ``json.loads`` returns, or a pydantic model dumped in JSON mode), without the round-trip
    check: that check exists to refuse tuples and non-string keys, which such producers never
    emit, and it costs about as much as the serialisation. Anything ``json`` refuses (NaN,
    infinity, cycles, other types) or a lone surrogate is handed to :func:`canonical_bytes`,
    which raises its precise :class:`ioa.errors.CanonicalisationError`."""
    try:
        return _dumps(document).encode("utf-8")
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        return canonical_bytes(document)


def checksum(document: object) -> str:
    """Return ``"sha256:<64 lower-case hex digits>"`` of the canonical bytes of ``document``.

    Key order and whitespace of the source text do not change the checksum; any change of a
    value does.
    """
    digest = hashlib.sha256(canonical_bytes(document)).hexdigest()
    return f"{CHECKSUM_ALGORITHM}:{digest}"
