"""Step 6: follow-up policy rules (POL-F001..004).

POL-F001 repeats NOD-Q007 (both are reported). An invalid maxFollowUpDurationSec value is
NOD-Q009's; POL-F003 reports it missing when follow-ups are allowed.
"""

from __future__ import annotations

from collections.abc import Iterator

from ioa.validation.document import as_int, as_number
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import RuleInput, rule
from ioa.validation.rules.question import follow_up_policy, max_follow_ups_negative


@rule(
    "POL-F001",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary="maxFollowUps MUST be >= 0 (twin of NOD-Q007).",
)
def follow_ups_not_negative(inp: RuleInput) -> Iterator[Issue]:
    """maxFollowUps is not negative."""
    yield from max_follow_ups_negative(inp.doc, "NOD-Q007")


@rule(
    "POL-F002",
    phase=Phase.POLICY,
    severity=Severity.INFO,
    summary=(
        "maxFollowUps of 0 means the examiner asks the opening question and MUST transition "
        "without follow-up."
    ),
)
def zero_follow_ups_noted(inp: RuleInput) -> Iterator[Issue]:
    """Note nodes that allow no follow-up, so authors see the consequence."""
    for node in inp.doc.nodes:
        policy = follow_up_policy(node)
        if policy is not None and as_int(policy.get("maxFollowUps")) == 0:
            yield node.issue(
                f"node {node.name} allows no follow-ups: the examiner asks the opening question "
                "and moves on after the answer, without probing",
                "followUpPolicy",
                "maxFollowUps",
            )


@rule(
    "POL-F003",
    phase=Phase.POLICY,
    severity=Severity.ERROR,
    summary="maxFollowUpDurationSec MUST be given (and > 0) when maxFollowUps > 0.",
)
def follow_up_duration_required(inp: RuleInput) -> Iterator[Issue]:
    """Follow-ups are time-bounded whenever they are allowed."""
    for node in inp.doc.nodes:
        policy = follow_up_policy(node)
        if policy is None:
            continue
        count = as_int(policy.get("maxFollowUps"))
        if count is not None and count > 0 and policy.get("maxFollowUpDurationSec") is None:
            yield node.issue(
                f"followUpPolicy allows {count} follow-up(s) but sets no maxFollowUpDurationSec; "
                "add the time allowed for follow-ups in seconds (e.g. 90) so every candidate is "
                "probed for the same time",
                "followUpPolicy",
                "maxFollowUpDurationSec",
            )


@rule(
    "POL-F004",
    phase=Phase.POLICY,
    severity=Severity.WARNING,
    summary="maxFollowUpDurationSec SHOULD be <= timeBudget.maxDurationSec when both are given.",
)
def follow_up_duration_within_budget(inp: RuleInput) -> Iterator[Issue]:
    """The follow-up phase fits in the node's time budget."""
    for node in inp.doc.nodes:
        policy = follow_up_policy(node)
        budget = node.time_budget_seconds
        if policy is None or budget is None:
            continue
        duration = as_number(policy.get("maxFollowUpDurationSec"))
        if duration is not None and duration > budget:
            yield node.issue(
                f"maxFollowUpDurationSec ({duration:g} s) exceeds the node's time budget "
                f"({budget:g} s), so the budget cuts follow-ups short; lower it or raise "
                "timeBudget.maxDurationSec",
                "followUpPolicy",
                "maxFollowUpDurationSec",
            )
