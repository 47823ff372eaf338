"""Loading a document into an :class:`AssessmentPackage`, with schema errors as report paths.

:func:`load_package` checks the schema only (types, required fields, enums, ranges, unknown
fields) and normalises deprecated spellings; it does not run the semantic rules (references,
reachability, policies). Use :func:`ioa.validation.validate_package` for those.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ioa.errors import PackageLoadError
from ioa.schema.deprecations import find_deprecated_usages
from ioa.schema.package import AssessmentPackage
from ioa.schema.paths import JsonPath, path_from_schema_location, render_path, usable_node_labels

logger = logging.getLogger(__name__)

_INPUT_PREVIEW_CHARS: Final = 60


@dataclass(frozen=True)
class SchemaProblem:
    """One schema violation: where, what kind (pydantic error type) and a readable message."""

    path: JsonPath
    error_type: str
    message: str


@dataclass(frozen=True)
class SchemaCheck:
    """The outcome of checking a document against the schema."""

    package: AssessmentPackage | None
    """The loaded package, or None if there were problems."""
    problems: tuple[SchemaProblem, ...]


def _preview(value: object) -> str:
    """A short description of an offending input value."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value)
    if len(text) > _INPUT_PREVIEW_CHARS:
        text = text[: _INPUT_PREVIEW_CHARS - 3] + "..."
    return text


def _field_name(path: JsonPath) -> str:
    """The last key of ``path`` with any trailing indexes, e.g. ``requiredEvidence[0]``."""
    indexes = ""
    for segment in reversed(path):
        if isinstance(segment, int):
            indexes = f"[{segment}]{indexes}"
        else:
            return f"{segment}{indexes}"
    return f"document{indexes}" if indexes else "document"


def describe_error(error: ErrorDetails, path: JsonPath) -> str:
    """A message saying what is wrong and how to fix it, for one pydantic error."""
    kind = error["type"]
    message = error["msg"]
    given = _preview(error.get("input"))
    field = _field_name(path)
    if kind == "missing":
        return f"required field '{field}' is missing; add it"
    if kind == "extra_forbidden":
        return (
            f"unknown field '{field}' is not part of the package schema (fields are fail-closed); "
            "remove it, or move tool-specific data under metadata.extensions"
        )
    if kind == "value_error":
        return message.removeprefix("Value error, ")
    if kind == "string_pattern_mismatch":
        pattern = (error.get("ctx") or {}).get("pattern", "")
        return f"'{field}' must match the pattern {pattern}, got {given}"
    if kind == "union_tag_invalid":
        context = error.get("ctx") or {}
        return (
            f"condition type {context.get('tag', '')!r} is not one of "
            f"{context.get('expected_tags', '')}; use one of them"
        )
    if kind == "union_tag_not_found":
        return "the condition has no 'type'; add one, e.g. \"always\""
    if kind == "model_attributes_type" or kind == "dict_type" or kind == "model_type":
        return f"'{field}' must be a JSON object, got {given}"
    if kind == "list_type":
        return f"'{field}' must be an array, got {given}"
    return f"'{field}': {message}, got {given}"


def check_schema(document: object) -> SchemaCheck:
    """Validate ``document`` against the schema; never raises for bad input."""
    try:
        package = AssessmentPackage.model_validate(document)
    except ValidationError as exc:
        problems: list[SchemaProblem] = []
        seen: set[tuple[JsonPath, str]] = set()
        for error in exc.errors(include_url=False):
            path = path_from_schema_location(error["loc"], document)
            if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
                path = (*path, "type")  # the discriminator field is what is wrong
            message = describe_error(error, path)
            if (path, message) in seen:
                continue
            seen.add((path, message))
            problems.append(SchemaProblem(path, error["type"], message))
        return SchemaCheck(None, tuple(problems))
    return SchemaCheck(package, ())


def load_package(document: Any) -> AssessmentPackage:
    """Load a parsed JSON document as an :class:`AssessmentPackage`.

    Deprecated spellings are converted (``timeBudgetMs`` -> ``timeBudget.maxDurationSec``,
    ``evidence_sufficient`` -> ``evidence_satisfied``) and logged as warnings (CMP-008).
    Raises :class:`ioa.errors.PackageLoadError` listing every schema problem with its path.
    """
    result = check_schema(document)
    if result.package is None:
        labels = usable_node_labels(document)
        raise PackageLoadError(
            [(render_path(problem.path, labels), problem.message) for problem in result.problems]
        )
    for usage in find_deprecated_usages(document):
        logger.warning(
            "deprecated field %s: %s",
            render_path(usage.path, usable_node_labels(document)),
            usage.message,
        )
    return result.package
