"""Marking: from the evidence ledger to explainable marks (``docs/spec/marking.md``). Pure.

Collection and evaluation are separate (decision 9): the runtime collects evidence, this package
evaluates it. API:

* :func:`compile_marking` — the package's marking configuration (the IR's third target):
  :class:`MarkingConfig` (slots, targets, weights, rubric levels, learning outcomes, rule
  parameters), serialised with ``to_dict`` / ``from_dict``;
* :func:`mark` / :func:`mark_log` — the deterministic marker: a session's stored events →
  :class:`MarkingResult` (a :class:`~ioa.marking.rules.LevelDecision` per target with its rules,
  signals and turns; weighted scores; flags; fairness metrics);
* :func:`compute_scores` — scores for any set of levels (used after moderation overrides);
* :func:`irregularity_reports` — proctors' irregularity reports judged by MRK-I01..I05 (what
  they affect, which review they need), also for a report stored after marking;
* :func:`krippendorff_alpha` — nominal, ordinal and interval alpha;
* :func:`run_panel` — the optional LLM marking panel (two rounds) and its agreement statistics;
* :func:`cohort_summary` — distributions, per-target counts and agreement, fairness measures.
"""

from ioa.marking.alpha import krippendorff_alpha
from ioa.marking.cohort import SessionSummary, cohort_summary, histogram
from ioa.marking.config import (
    COMPILER_VERSION,
    MarkingConfig,
    NodeScheme,
    RuleParameters,
    SlotScheme,
    TargetScheme,
    compile_marking,
)
from ioa.marking.errors import MarkingConfigError, MarkingError, PanelReplyError
from ioa.marking.flags import INFO, REVIEW, Flag, compute_flags
from ioa.marking.irregularities import (
    ACADEMIC_INTEGRITY,
    REVIEW_NOTE,
    ROUTE_LABELS,
    TECHNICAL,
    IrregularityReport,
    irregularity_reports,
    when_text,
)
from ioa.marking.levels import LEVELS_DESCENDING, MAX_POINTS, Level
from ioa.marking.log import MINIMUM_STREAM, READ_TYPES, Irregularity, SessionLog, read_log
from ioa.marking.marker import MarkingResult, Scores, TargetMark, compute_scores, mark, mark_log
from ioa.marking.panel import (
    ChatClient,
    PanelMember,
    PanelResult,
    parse_reply,
    run_panel,
)
from ioa.marking.rules import LevelDecision, RuleHit, SignalUse, decide_level

__all__ = [
    "ACADEMIC_INTEGRITY",
    "COMPILER_VERSION",
    "INFO",
    "LEVELS_DESCENDING",
    "MAX_POINTS",
    "MINIMUM_STREAM",
    "READ_TYPES",
    "REVIEW",
    "REVIEW_NOTE",
    "ROUTE_LABELS",
    "TECHNICAL",
    "ChatClient",
    "Flag",
    "Irregularity",
    "IrregularityReport",
    "Level",
    "LevelDecision",
    "MarkingConfig",
    "MarkingConfigError",
    "MarkingError",
    "MarkingResult",
    "NodeScheme",
    "PanelMember",
    "PanelReplyError",
    "PanelResult",
    "RuleHit",
    "RuleParameters",
    "Scores",
    "SessionLog",
    "SessionSummary",
    "SignalUse",
    "SlotScheme",
    "TargetMark",
    "TargetScheme",
    "cohort_summary",
    "compile_marking",
    "compute_flags",
    "compute_scores",
    "decide_level",
    "histogram",
    "irregularity_reports",
    "krippendorff_alpha",
    "mark",
    "mark_log",
    "parse_reply",
    "read_log",
    "run_panel",
    "when_text",
]
