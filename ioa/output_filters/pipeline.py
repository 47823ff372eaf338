"""The output validation pipeline (chapter 07 §8, OUT-001..005).

Every ``spokenText`` (and every text the runtime itself wants spoken) goes through
:meth:`OutputPipeline.run` before it can reach TTS. Guarantees, for any input:

* every returned part is at most ``maxChars`` characters long (OUT-004);
* every returned part passes every filter unchanged (it is a fixed point of the pipeline), so
  running the pipeline on what is spoken never intercepts anything;
* every change is reported as an :class:`Interception` (original and replacement text).

The content filters (persona_break, rubric_leak, topic_containment, leading_question) run in
the configured order, with ``protected_text`` right after rubric_leak and ``stacked_question``
last (both always present, ``docs/spec/agent-boundary.md`` §7); the pass is repeated until
none intercepts (a later filter's replacement is checked by the earlier ones too), at most
:data:`MAX_PASSES` times. The length filter runs last, wherever the configuration lists it,
so that its bound holds for the final text; each part it produces is checked again on its own
(and settled again if it does not pass). A text
that does not settle is replaced by a neutral continuation, or by nothing at all if even that
is intercepted under a custom configuration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ioa.output_filters.base import (
    FilterContext,
    Interception,
    OutputFilter,
    PipelineResult,
)
from ioa.output_filters.config import build_filters
from ioa.output_filters.length import LengthFilter
from ioa.output_filters.overlap import ProtectedTextFilter
from ioa.output_filters.stacked_question import StackedQuestionFilter
from ioa.output_filters.text import tidy

MAX_PASSES: Final = 4


class OutputPipeline:
    """The configured output filters, applied in order."""

    def __init__(self, filters: Sequence[OutputFilter]) -> None:
        self.filters: tuple[OutputFilter, ...] = tuple(filters)
        lengths = [f for f in self.filters if isinstance(f, LengthFilter)]
        # OUT-004 is a MUST: the bound is enforced even if the configuration lacks it
        self.length: LengthFilter = lengths[0] if lengths else LengthFilter()
        content = [f for f in self.filters if not isinstance(f, LengthFilter)]
        # Our chapter 04 §7: the protected-text and stacked-question filters always run, even
        # when a compiled configuration predates them; protected text after the persona
        # check and the rubric (the causal order: who speaks, what leaks, then how it is asked;
        # a rubric text is named by rubric_leak, the other protected texts by this one).
        if not any(isinstance(f, ProtectedTextFilter) for f in content):
            names = [f.name for f in content]
            anchor = "rubric_leak" if "rubric_leak" in names else "persona_break"
            after = names.index(anchor) + 1 if anchor in names else 0
            content.insert(after, ProtectedTextFilter())
        if not any(isinstance(f, StackedQuestionFilter) for f in content):
            content.append(StackedQuestionFilter())
        self.content: tuple[OutputFilter, ...] = tuple(content)
        self.filters = (*self.content, self.length)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None = None) -> OutputPipeline:
        """Build from a compiled flow's ``outputValidationFilters`` (default when None)."""
        return cls(build_filters(config))

    @property
    def max_chars(self) -> int:
        """The longest utterance allowed."""
        return self.length.max_chars

    def _settle(
        self, text: str, context: FilterContext, stages: tuple[OutputFilter, ...]
    ) -> tuple[str | None, list[Interception]]:
        """Apply ``stages`` until none intercepts; None when the text does not settle."""
        interceptions: list[Interception] = []
        current = text
        for _ in range(MAX_PASSES):
            changed = False
            for stage in stages:
                outcome = stage.apply(current, context)
                if outcome is None or outcome.text == current:
                    continue
                interceptions.append(
                    Interception(
                        filter_name=stage.name,
                        rule_id=stage.rule_id,
                        action=stage.action,
                        severity=stage.severity,
                        original_text=current.replace("\n", " "),
                        replacement_text=outcome.text.replace("\n", " "),
                        detail=outcome.detail,
                    )
                )
                current = outcome.text
                changed = True
            if not changed:
                return current, interceptions
        return None, interceptions

    def is_clean(self, text: str, context: FilterContext) -> bool:
        """True when ``text`` passes every filter unchanged (a single part)."""
        return all(stage.apply(text, context) is None for stage in self.filters)

    def _content_clean(self, text: str, context: FilterContext) -> bool:
        return all(stage.apply(text, context) is None for stage in self.content)

    def _fallback(self, context: FilterContext) -> tuple[str, ...]:
        fallback = context.neutral_continue
        return (fallback,) if self.is_clean(fallback, context) else ()

    def run(self, text: str, context: FilterContext) -> PipelineResult:
        """Validate ``text`` for the node described by ``context``."""
        original = tidy(text)
        if not original:
            return PipelineResult(text, ())
        settled, interceptions = self._settle(original, context, self.content)
        if settled is None:
            return PipelineResult(text, self._fallback(context), tuple(interceptions))
        cut, more = self._settle(settled, context, (self.length,))
        interceptions.extend(more)
        pieces = [p for p in (cut or settled).split("\n") if p]
        if len(pieces) == 1 and not more:  # the last pass changed nothing: a fixed point
            return PipelineResult(text, (pieces[0],), tuple(interceptions))
        parts: list[str] = []
        for part in pieces:
            if self._content_clean(part, context):
                parts.append(part)
                continue
            again, extra = self._settle(part, context, self.filters)
            interceptions.extend(extra)
            if again is not None and all(self.is_clean(p, context) for p in again.split("\n")):
                parts.extend(p for p in again.split("\n") if p)
            else:
                parts.extend(self._fallback(context))
        return PipelineResult(text, tuple(parts), tuple(interceptions))
