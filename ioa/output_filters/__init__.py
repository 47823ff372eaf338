"""The output validation filters (chapter 07 §8, OUT-001..005, ADP-016): pure and deterministic.

Every text the examiner is about to speak goes through :class:`OutputPipeline`, configured from
the compiled flow's ``outputValidationFilters``: persona_break (OUT-001), rubric_leak (OUT-002),
topic_containment (OUT-003), length (OUT-004) and leading_question (OUT-005). Per-node inputs
come from the compiled node's ``metadata.outputFilterContext`` via :class:`FilterContext`.
:func:`check_neutrality` is the POL-008 check the runtime applies under anxiety.
"""

from ioa.output_filters.base import (
    NEUTRAL_CONTINUE,
    NEUTRAL_PROBE,
    REDIRECT,
    FilterContext,
    FilterOutcome,
    Interception,
    OutputFilter,
    PipelineResult,
    RubricText,
)
from ioa.output_filters.config import KNOWN_FILTERS, build_filters
from ioa.output_filters.leading_question import LeadingQuestionFilter
from ioa.output_filters.length import LengthFilter, split_text
from ioa.output_filters.neutrality import NEUTRAL_SUPPORT, check_neutrality
from ioa.output_filters.persona_break import PersonaBreakFilter
from ioa.output_filters.pipeline import OutputPipeline
from ioa.output_filters.rubric_leak import RubricLeakFilter
from ioa.output_filters.topic_containment import TopicContainmentFilter

__all__ = [
    "KNOWN_FILTERS",
    "NEUTRAL_CONTINUE",
    "NEUTRAL_PROBE",
    "NEUTRAL_SUPPORT",
    "REDIRECT",
    "FilterContext",
    "FilterOutcome",
    "Interception",
    "LeadingQuestionFilter",
    "LengthFilter",
    "OutputFilter",
    "OutputPipeline",
    "PersonaBreakFilter",
    "PipelineResult",
    "RubricLeakFilter",
    "RubricText",
    "TopicContainmentFilter",
    "build_filters",
    "check_neutrality",
    "split_text",
]
