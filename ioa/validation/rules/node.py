"""Step 3: node rules (NOD-001..012)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from ioa.schema.enums import NodeKind
from ioa.schema.fields import IDENTIFIER_RE, MAX_PROMPT_SEED_CHARS
from ioa.validation.document import as_int, as_list, as_mapping, as_number, describe, strings_in
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import RuleInput, rule

QUESTION_BUDGET_RANGE_SEC: Final = (30, 600)
"""NOD-011: recommended time budget of a question node, in seconds (30 000-600 000 ms)."""


@rule(
    "NOD-001",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="Every node MUST have a nodeId matching ^[a-zA-Z0-9_-]{1,128}$.",
)
def node_id_well_formed(inp: RuleInput) -> Iterator[Issue]:
    """Each node is an object with a well-formed nodeId."""
    for node in inp.doc.nodes:
        if not node.is_object:
            yield node.issue(
                f"nodes[{node.index}] must be a node object with nodeId, kind, promptSeed and "
                f"transitions, got {describe(node.value)}"
            )
            continue
        value = node.get("nodeId")
        if "nodeId" not in node.raw:
            yield node.issue(
                f'nodes[{node.index}] has no nodeId; add a unique id such as "q-{node.index}"',
                "nodeId",
            )
        elif not isinstance(value, str) or IDENTIFIER_RE.fullmatch(value) is None:
            yield node.issue(
                "nodeId must be 1-128 characters from a-z, A-Z, 0-9, '_' and '-', got "
                f'{describe(value)}; e.g. "q-dijkstra"',
                "nodeId",
            )


_KINDS: Final = ", ".join(kind.value for kind in NodeKind)
_KIND_VALUES: Final = frozenset(kind.value for kind in NodeKind)


@rule(
    "NOD-002",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary=(
        "Every node MUST have a kind from question, scenario, task, discussion, warmup, wrapup, "
        "branch, identity_check (or end)."
    ),
)
def kind_valid(inp: RuleInput) -> Iterator[Issue]:
    """kind is one of the node kinds."""
    for node in inp.doc.nodes:
        if not node.is_object:
            continue
        if "kind" not in node.raw:
            yield node.issue(f"node {node.name} has no kind; add one of {_KINDS}", "kind")
        elif node.kind not in _KIND_VALUES:
            yield node.issue(
                f"kind must be one of {_KINDS}, got {describe(node.get('kind'))}", "kind"
            )


@rule(
    "NOD-003",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="Every non-end node MUST have at least one transition (always is a valid fallback).",
)
def has_transitions(inp: RuleInput) -> Iterator[Issue]:
    """Non-end nodes have a non-empty transitions array."""
    for node in inp.doc.nodes:
        if not node.is_object or node.is_end:
            continue
        transitions = as_list(node.get("transitions"))
        if transitions is None and "transitions" in node.raw:
            continue  # wrong type: the schema reports it
        if not transitions:
            yield node.issue(
                f"node {node.name} has no transitions, so the exam would stop there; add at least "
                "one that leads to the next node (an 'always' transition is a valid fallback)",
                "transitions",
            )


@rule(
    "NOD-005",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="Every node MUST have a non-empty promptSeed string.",
)
def prompt_seed_present(inp: RuleInput) -> Iterator[Issue]:
    """promptSeed is a string with visible content."""
    for node in inp.doc.nodes:
        if not node.is_object:
            continue
        value = node.get("promptSeed")
        if "promptSeed" not in node.raw:
            yield node.issue(
                f"node {node.name} has no promptSeed; add the examiner's brief for this node",
                "promptSeed",
            )
        elif not isinstance(value, str) or not value.strip():
            yield node.issue(
                f"promptSeed must be a non-empty string, got {describe(value)}; write the "
                "examiner's brief for this node",
                "promptSeed",
            )


@rule(
    "NOD-008",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary=f"Node promptSeed MUST NOT exceed {MAX_PROMPT_SEED_CHARS:,} characters.",
)
def prompt_seed_length(inp: RuleInput) -> Iterator[Issue]:
    """promptSeed fits the LLM context budget."""
    for node in inp.doc.nodes:
        value = node.get("promptSeed")
        if isinstance(value, str) and len(value) > MAX_PROMPT_SEED_CHARS:
            yield node.issue(
                f"promptSeed has {len(value):,} characters, more than {MAX_PROMPT_SEED_CHARS:,}; "
                "shorten it or split the node",
                "promptSeed",
            )


@rule(
    "NOD-010",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary=(
        "timeBudgetMs MUST be a positive integer when specified (and timeBudget.maxDurationSec "
        "a positive number)."
    ),
)
def time_budget_positive(inp: RuleInput) -> Iterator[Issue]:
    """Both spellings of the time budget are positive when present."""
    for node in inp.doc.nodes:
        if "timeBudgetMs" in node.raw:
            value = node.get("timeBudgetMs")
            milliseconds = as_int(value)
            if milliseconds is None or milliseconds <= 0:
                yield node.issue(
                    f"timeBudgetMs must be a positive integer of milliseconds, got "
                    f"{describe(value)}; better, write timeBudget.maxDurationSec in seconds",
                    "timeBudgetMs",
                )
        budget = node.get("timeBudget")
        if budget is None:
            continue
        mapping = as_mapping(budget)
        if mapping is None:
            yield node.issue(
                'timeBudget must be an object like {"maxDurationSec": 300}, '
                f"got {describe(budget)}",
                "timeBudget",
            )
            continue
        seconds = mapping.get("maxDurationSec")
        number = as_number(seconds)
        if "maxDurationSec" not in mapping:
            yield node.issue(
                "timeBudget has no maxDurationSec; add the budget in seconds, e.g. 300",
                "timeBudget",
                "maxDurationSec",
            )
        elif number is None or number <= 0:
            yield node.issue(
                f"timeBudget.maxDurationSec must be a positive number of seconds, got "
                f"{describe(seconds)}",
                "timeBudget",
                "maxDurationSec",
            )


@rule(
    "NOD-011",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary=(
        "Question nodes SHOULD have a time budget between 30 and 600 seconds "
        "(timeBudgetMs 30000-600000)."
    ),
)
def question_time_budget_range(inp: RuleInput) -> Iterator[Issue]:
    """Question and scenario nodes have a time budget in the recommended range."""
    low, high = QUESTION_BUDGET_RANGE_SEC
    for node in inp.doc.question_nodes:
        seconds = node.time_budget_seconds
        where = (
            ("timeBudgetMs",)
            if "timeBudgetMs" in node.raw and "timeBudget" not in node.raw
            else ("timeBudget",)
        )
        if seconds is None:
            if "timeBudget" not in node.raw and "timeBudgetMs" not in node.raw:
                yield node.issue(
                    f"question node {node.name} has no time budget; add timeBudget.maxDurationSec "
                    f"between {low} and {high} seconds so every candidate gets the same time",
                    "timeBudget",
                )
            continue
        if not low <= seconds <= high:
            yield node.issue(
                f"time budget of {seconds:g} s is outside the recommended {low}-{high} s for a "
                "question node; adjust timeBudget.maxDurationSec",
                *where,
            )


@rule(
    "NOD-012",
    phase=Phase.NODE,
    severity=Severity.WARNING,
    summary="Every node SHOULD have a candidateCommands policy with at least one allowed command.",
)
def has_candidate_commands(inp: RuleInput) -> Iterator[Issue]:
    """Non-end nodes (or the package default) allow at least one candidate command."""
    doc = inp.doc
    for node in doc.nodes:
        if not node.is_object or node.is_end:
            continue
        policy = doc.command_policy(node)
        if policy is None or not strings_in(policy.get("allowed")):
            yield node.issue(
                f"node {node.name} allows no candidate command (neither candidateCommands nor "
                "globalPolicies.defaultCandidateCommands); allow at least repeat and "
                "clarification",
                "candidateCommands",
            )
