"""Configuration of the output validation filters (chapter 07 §8, ADP-016, OUT-001..005).

Only the configuration lives here. The filters run in the runtime controller on every
``spokenText`` before it reaches TTS; per-node inputs (the rubric texts the ``rubric_leak`` filter
checks against, the scenario domain) are compiled into each node's
``metadata.outputFilterContext``, never into the LLM's prompt.
"""

from __future__ import annotations

from typing import Final

from ioa.compiler.types import OutputFilterSpec, OutputValidationConfig

REQUIRED_FILTERS: Final[tuple[str, ...]] = (
    "persona_break",
    "rubric_leak",
    "topic_containment",
    "length",
)
"""Filters ADP-016 requires; ``leading_question`` (OUT-005) is a SHOULD and is configured too."""

MAX_SPOKEN_CHARS: Final = 500

PERSONA_BREAK_PATTERNS: Final[tuple[str, ...]] = (
    "as your examiner",
    "according to the rubric",
    "the grading criteria",
    "the marking criteria",
    "i'm an ai",
    "i am an ai",
    "as an ai",
    "language model",
)
"""Lower-case phrases that show the LLM has broken character (OUT-001)."""

LEADING_QUESTION_PATTERNS: Final[tuple[str, ...]] = (
    "wouldn't you say",
    "don't you think",
    "surely you'd agree",
    "isn't it true that",
    "wouldn't you agree",
)
"""Lower-case phrases that suggest the expected answer (OUT-005)."""


def output_validation_config() -> OutputValidationConfig:
    """The ``outputValidationFilters`` block of a compiled flow (a fresh copy on every call)."""
    filters: list[OutputFilterSpec] = [
        {
            "name": "persona_break",
            "enabled": True,
            "action": "replace",
            "severity": "error",
            "rule": "OUT-001",
            "patterns": list(PERSONA_BREAK_PATTERNS),
        },
        {
            "name": "rubric_leak",
            "enabled": True,
            "action": "intercept",
            "severity": "error",
            "rule": "OUT-002",
            "checkAgainst": "node.metadata.outputFilterContext.rubricLeakTexts",
        },
        {
            "name": "topic_containment",
            "enabled": True,
            "action": "redirect",
            "severity": "error",
            "rule": "OUT-003",
            "domain": "node.metadata.outputFilterContext.scenarioDomain",
        },
        {
            "name": "length",
            "enabled": True,
            "action": "summarize",
            "severity": "error",
            "rule": "OUT-004",
            "maxChars": MAX_SPOKEN_CHARS,
        },
        {
            "name": "leading_question",
            "enabled": True,
            "action": "rephrase",
            "severity": "warning",
            "rule": "OUT-005",
            "patterns": list(LEADING_QUESTION_PATTERNS),
        },
    ]
    return {"appliesTo": "report_observation.spokenText", "filters": filters}
