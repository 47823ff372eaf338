"""The API's JSON parser: every request body goes through ``web.json_input.parse_json``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from web.json_input import JsonInputError, parse_json


class InvalidJsonBody(ParseError):
    """A refused body: 400 (413 when too large) with the shared error body and its code."""

    def __init__(self, error: JsonInputError) -> None:
        super().__init__(detail=error.message, code=error.code)
        if error.code == "too_large":
            self.status_code = 413


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with the product's limits (size, depth, valid strings)."""

    # Any: DRF's stubs promise a dict; a JSON body may be any JSON value (the views validate it).
    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, object] | None = None,
    ) -> Any:
        data = stream.read() if stream is not None else b""
        try:
            return parse_json(data)
        except JsonInputError as exc:
            raise InvalidJsonBody(exc) from None
