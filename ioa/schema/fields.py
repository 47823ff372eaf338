"""Reusable field types of the package schema: identifiers, texts, numbers, base model.

All models are strict (no coercion: ``"90"`` is not a number, ``true`` is not ``1``) and fail
closed (unknown fields are errors). Enum-typed fields are validated leniently so that their
JSON spelling (a string) is accepted in Python mode.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Final

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainSerializer, Strict

IDENTIFIER_PATTERN: Final = r"^[a-zA-Z0-9_-]{1,128}$"
"""Node ids (NOD-001), and by extension pool, transition and evidence target ids."""

IDENTIFIER_RE: Final = re.compile(IDENTIFIER_PATTERN.removeprefix("^").removesuffix("$"))
"""Compiled :data:`IDENTIFIER_PATTERN`; use ``fullmatch``."""

ACTION_PATTERN: Final = r"^[a-z][a-z0-9_]{0,63}$"
"""Action names in ``forbiddenActions`` / ``allowedActions`` (snake_case, e.g. reveal_answer)."""

PACKAGE_ID_PATTERN: Final = (
    r"^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25})$"
)
"""A UUID (any version, 8-4-4-4-12 hex) or a ULID (26 Crockford base-32 characters) (PKG-008)."""

PACKAGE_ID_RE: Final = re.compile(PACKAGE_ID_PATTERN.removeprefix("^").removesuffix("$"))

IR_VERSION_SCHEMA_PATTERN: Final = (
    r"^(ioa-orm|exam-runtime-ir)/(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})$"
)
"""The ``irVersion`` syntax (PKG-004); mirrors :data:`ioa.versioning.IR_VERSION_PATTERN`."""

LANGUAGE_PATTERN: Final = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
"""A BCP 47 language tag such as ``en`` or ``pt-BR``."""

MAX_NODES: Final = 200
"""PKG-010: the system limit on nodes per package."""

MAX_PROMPT_SEED_CHARS: Final = 8000
"""NOD-008: the LLM context budget of one promptSeed."""


class StrictModel(BaseModel):
    """Base of every schema model: strict types, unknown fields rejected, no NaN/infinity."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        allow_inf_nan=False,
        populate_by_name=False,
        use_attribute_docstrings=True,
    )


def _compact_number(value: float) -> int | float:
    """Write integral floats as integers (``360.0`` -> ``360``) when serialising."""
    return int(value) if value.is_integer() else value


def _check_timestamp(value: str) -> str:
    """Accept an ISO 8601 date-time with a time zone (``2026-11-01T09:00:00Z``)."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError(
            "must be an ISO 8601 date-time with time zone, e.g. 2026-11-01T09:00:00Z, "
            f"got {value!r}"
        ) from exc
    if parsed.tzinfo is None:
        raise ValueError(f"must include a time zone (e.g. a trailing Z for UTC), got {value!r}")
    return value


def _check_date(value: str) -> str:
    """Accept an ISO 8601 date (``2026-10-20``) or date-time with a time zone."""
    try:
        date.fromisoformat(value)
    except ValueError:
        return _check_timestamp(value)
    return value


Identifier = Annotated[str, Field(pattern=IDENTIFIER_PATTERN)]
"""An id: 1-128 characters from ``[a-zA-Z0-9_-]``."""

ActionName = Annotated[str, Field(pattern=ACTION_PATTERN)]
"""A snake_case action name such as ``reveal_answer``."""

Text = Annotated[str, Field(min_length=1, pattern=r"\S")]
"""A string with at least one non-whitespace character."""

Timestamp = Annotated[
    str, AfterValidator(_check_timestamp), Field(json_schema_extra={"format": "date-time"})
]
"""An ISO 8601 date-time with time zone, kept as written."""

DateOrTimestamp = Annotated[str, AfterValidator(_check_date)]
"""An ISO 8601 date or date-time with time zone, kept as written."""

Seconds = Annotated[float, Field(gt=0), PlainSerializer(_compact_number)]
"""A positive duration in seconds (integers stay integers when serialised)."""

Weight = Annotated[float, Field(ge=0, le=1), PlainSerializer(_compact_number)]
"""An evidence weight in [0, 1] (EVD-004)."""

Lax = Strict(False)
"""Marker for enum fields: accept the JSON spelling of an enum member in Python mode."""
