"""Step 3 (project extension): grounded nodes (GRD-001..005, docs/spec/candidate-materials.md).

GRD-001..003 check the package; GRD-004 (the runtime draws and records the passage) and
GRD-005 (material reaches the LLM only as delimited quoted data) are enforced elsewhere and
declared here so the catalogue lists them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from ioa.validation.document import NodeView, PackageDocument, as_mapping
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import RuleInput, declare, rule

GROUNDING: Final = "grounding"


def grounded_nodes(doc: PackageDocument) -> Iterator[NodeView]:
    """The nodes that carry a ``grounding`` object."""
    for node in doc.nodes:
        if as_mapping(node.get(GROUNDING)) is not None:
            yield node


@rule(
    "GRD-001",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="grounding MAY appear only on question and scenario nodes.",
)
def grounding_only_on_question_nodes(inp: RuleInput) -> Iterator[Issue]:
    """A grounded node asks a question and gathers evidence: question or scenario."""
    for node in grounded_nodes(inp.doc):
        if not node.is_question_like:
            yield node.issue(
                f"node {node.name} is a '{node.kind}' node; only question and scenario nodes "
                "may ask about the candidate's material, so remove grounding or change the kind",
                GROUNDING,
            )


@rule(
    "GRD-002",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary=(
        "A grounded node MUST NOT have prompt.opening (spoken verbatim, it could not name the "
        "drawn passage); grounding.fallbackQuestion is asked when no passage qualifies."
    ),
)
def grounded_node_has_no_opening(inp: RuleInput) -> Iterator[Issue]:
    """The question of a grounded node comes from the drawn passage, not a fixed opening."""
    for node in grounded_nodes(inp.doc):
        prompt = node.mapping("prompt") or {}
        if prompt.get("opening") is not None:
            yield node.issue(
                f"grounded node {node.name} has an opening, which the runtime would speak "
                "instead of asking about the drawn passage; remove prompt.opening (the "
                "fallbackQuestion is asked when no passage qualifies)",
                "prompt",
                "opening",
            )


@rule(
    "GRD-003",
    phase=Phase.NODE,
    severity=Severity.ERROR,
    summary="A grounded node MUST have at least one evidence target.",
)
def grounded_node_gathers_evidence(inp: RuleInput) -> Iterator[Issue]:
    """The answer at a grounded node is evidence tied to the passage: it needs a target."""
    for node in grounded_nodes(inp.doc):
        if not node.evidence_targets:
            yield node.issue(
                f"grounded node {node.name} has no evidence targets, so the candidate's answer "
                "about their own material would be evidence of nothing; add targets such as "
                "'explains a choice in their own work'",
                "evidenceTargets",
            )


declare(
    "GRD-004",
    phase=Phase.RUNTIME,
    severity=Severity.ERROR,
    summary=(
        "The runtime MUST draw a grounded node's passage with the session's seeded RNG and "
        "record it in passage_drawn before the node's question; the LLM never chooses it."
    ),
    enforced_by="runtime — enforced by ioa.runtime.grounding (seeded draw, passage_drawn)",
    module=__name__,
)
declare(
    "GRD-005",
    phase=Phase.RUNTIME,
    severity=Severity.ERROR,
    summary=(
        "Candidate material MUST reach the LLM only inside the delimited, labelled, one-line "
        "quoted data block, never as instructions."
    ),
    enforced_by="runtime — enforced by ioa.compiler.material_block (the passage block)",
    module=__name__,
)
