"""Building the filters from a compiled flow's ``outputValidationFilters`` block (ADP-016).

The block's order is the order of application. Filters marked required (persona_break,
rubric_leak, topic_containment, length: OUT-001..004 are MUSTs) must be present and enabled;
``leading_question`` (OUT-005, a SHOULD) may be disabled. An unknown filter name, a missing or
disabled required filter or a bad ``maxChars`` raises :class:`ioa.errors.OutputFilterConfigError`
(fail closed: the runtime never runs with fewer filters than the rules demand).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ioa.compiler.output_filters import (
    LEADING_QUESTION_PATTERNS,
    MAX_SPOKEN_CHARS,
    PERSONA_BREAK_PATTERNS,
    REQUIRED_FILTERS,
    output_validation_config,
)
from ioa.errors import OutputFilterConfigError
from ioa.output_filters.base import OutputFilter
from ioa.output_filters.leading_question import LeadingQuestionFilter
from ioa.output_filters.length import LengthFilter
from ioa.output_filters.persona_break import PersonaBreakFilter
from ioa.output_filters.rubric_leak import RubricLeakFilter
from ioa.output_filters.topic_containment import TopicContainmentFilter

KNOWN_FILTERS: Final = (
    "persona_break",
    "rubric_leak",
    "topic_containment",
    "length",
    "leading_question",
)


def _patterns(spec: Mapping[str, Any], default: Sequence[str]) -> list[str]:
    patterns = spec.get("patterns")
    if patterns is None:
        return list(default)
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise OutputFilterConfigError(f"filter {spec.get('name')!r}: patterns must be strings")
    return list(patterns)


def _build(spec: Mapping[str, Any]) -> OutputFilter:
    name = spec.get("name")
    action = str(spec.get("action", ""))
    severity = str(spec.get("severity", "error"))
    if name == "persona_break":
        return PersonaBreakFilter(
            _patterns(spec, PERSONA_BREAK_PATTERNS),
            action=action or "replace",
            severity=severity,
        )
    if name == "rubric_leak":
        return RubricLeakFilter(action=action or "intercept", severity=severity)
    if name == "topic_containment":
        return TopicContainmentFilter(action=action or "redirect", severity=severity)
    if name == "length":
        limit = spec.get("maxChars", MAX_SPOKEN_CHARS)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 20 <= limit <= 500:
            raise OutputFilterConfigError(
                f"length filter: maxChars must be an integer between 20 and 500, got {limit!r} "
                "(OUT-004 caps utterances at 500 characters)"
            )
        return LengthFilter(limit, action=action or "summarize", severity=severity)
    if name == "leading_question":
        return LeadingQuestionFilter(
            _patterns(spec, LEADING_QUESTION_PATTERNS),
            action=action or "rephrase",
            severity=severity or "warning",
        )
    raise OutputFilterConfigError(
        f"unknown output filter {name!r}; known filters: {', '.join(KNOWN_FILTERS)}"
    )


def build_filters(config: Mapping[str, Any] | None = None) -> list[OutputFilter]:
    """The enabled filters of ``config`` (a compiled ``outputValidationFilters`` block, or the
    compiler's default when None), in order of application."""
    block: Mapping[str, Any] = config if config is not None else output_validation_config()
    specs = block.get("filters")
    if not isinstance(specs, list):
        raise OutputFilterConfigError("outputValidationFilters.filters must be a list")
    filters: list[OutputFilter] = []
    seen: set[str] = set()
    for spec in specs:
        if not isinstance(spec, Mapping):
            raise OutputFilterConfigError("every output filter must be an object")
        name = str(spec.get("name"))
        if name in seen:
            raise OutputFilterConfigError(f"output filter {name!r} is configured twice")
        seen.add(name)
        enabled = spec.get("enabled", True)
        if enabled is not True:
            if name in REQUIRED_FILTERS:
                raise OutputFilterConfigError(
                    f"output filter {name!r} is required (ADP-016, OUT-001..004) and cannot "
                    "be disabled"
                )
            if name not in KNOWN_FILTERS:
                raise OutputFilterConfigError(f"unknown output filter {name!r}")
            continue
        filters.append(_build(spec))
    missing = [name for name in REQUIRED_FILTERS if name not in seen]
    if missing:
        raise OutputFilterConfigError(
            f"required output filter(s) missing: {', '.join(missing)} (ADP-016)"
        )
    return filters
