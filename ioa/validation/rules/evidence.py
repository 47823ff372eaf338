"""Step 5: evidence rules (EVD-001..007, plus EVD-101 of this project).

EVD-008..010 are runtime rules of the evidence ledger (declared in ``declared.py``).
EVD-001/003/005 repeat NOD-Q002/003/005; both ids are reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from ioa.schema.enums import RubricLevelName
from ioa.validation.document import as_list, as_mapping, as_number, as_text, describe, strings_in
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import PUBLISH_AND_RUNTIME, RuleInput, rule
from ioa.validation.rules.package import listing
from ioa.validation.rules.question import blank_labels, duplicate_target_ids, weight_sum_issue


@rule(
    "EVD-001",
    phase=Phase.EVIDENCE,
    severity=Severity.ERROR,
    summary="evidenceTarget.id MUST be unique within its node (twin of NOD-Q002).",
)
def target_id_unique_in_node(inp: RuleInput) -> Iterator[Issue]:
    """Evidence target ids do not repeat within a node."""
    for node in inp.doc.nodes:
        yield from duplicate_target_ids(node, "NOD-Q002")


@rule(
    "EVD-002",
    phase=Phase.EVIDENCE,
    severity=Severity.WARNING,
    summary="evidenceTarget.id SHOULD be unique across the package (marking pipeline).",
)
def target_id_unique_in_package(inp: RuleInput) -> Iterator[Issue]:
    """An evidence target id used by an earlier node is reported on the later node."""
    owner: dict[str, str] = {}
    for node in inp.doc.nodes:
        in_this_node: set[str] = set()
        for target in node.evidence_targets:
            target_id = target.target_id
            if target_id is None or target_id in in_this_node:
                continue
            in_this_node.add(target_id)
            if target_id in owner:
                yield node.issue(
                    f"evidence target id '{target_id}' is also used by node {owner[target_id]}; "
                    "marking aggregates by target id, so give it a package-wide unique id (e.g. "
                    f"'{target_id}-{node.node_id or node.index}')",
                    "evidenceTargets",
                    target.index,
                    "id",
                )
            else:
                owner[target_id] = node.name


@rule(
    "EVD-003",
    phase=Phase.EVIDENCE,
    severity=Severity.ERROR,
    summary="evidenceTarget.label MUST be a non-empty human-readable string (twin of NOD-Q003).",
)
def target_label_readable(inp: RuleInput) -> Iterator[Issue]:
    """Evidence targets have labels."""
    for node in inp.doc.nodes:
        yield from blank_labels(node, "NOD-Q003")


@rule(
    "EVD-004",
    phase=Phase.EVIDENCE,
    severity=Severity.ERROR,
    summary="evidenceTarget.weight MUST be between 0.0 and 1.0 inclusive when specified.",
)
def target_weight_in_range(inp: RuleInput) -> Iterator[Issue]:
    """A specified weight is a number in [0, 1]."""
    for node in inp.doc.nodes:
        for target in node.evidence_targets:
            value = target.raw.get("weight")
            if value is None:
                continue
            weight = as_number(value)
            if weight is None or not 0.0 <= weight <= 1.0:
                name = (
                    f"'{target.target_id}'"
                    if target.target_id
                    else f"evidenceTargets[{target.index}]"
                )
                yield node.issue(
                    f"weight of evidence target {name} must be between 0.0 and 1.0, got "
                    f"{describe(value)}",
                    "evidenceTargets",
                    target.index,
                    "weight",
                )


@rule(
    "EVD-005",
    phase=Phase.EVIDENCE,
    severity=Severity.WARNING,
    summary="The total evidence weight per node SHOULD sum to 1.0 ±0.05 (twin of NOD-Q005).",
)
def node_weights_sum_to_one(inp: RuleInput) -> Iterator[Issue]:
    """Node weights add up to 1."""
    for node in inp.doc.nodes:
        issue = weight_sum_issue(node, "NOD-Q005")
        if issue is not None:
            yield issue


@rule(
    "EVD-006",
    phase=Phase.EVIDENCE,
    severity=Severity.INFO,
    summary=(
        "A rubricDescriptor MAY be given; its levels are excellent, satisfactory, partial, "
        "absent, each with a label and description (missing levels are reported as info)."
    ),
)
def rubric_levels_complete(inp: RuleInput) -> Iterator[Issue]:
    """Note rubric descriptors that leave out some of the four levels."""
    for node in inp.doc.nodes:
        for target in node.evidence_targets:
            rubric = as_mapping(target.raw.get("rubricDescriptor"))
            levels = as_mapping(rubric.get("levels")) if rubric is not None else None
            if levels is None:
                continue
            missing = [
                level.value
                for level in RubricLevelName
                if as_mapping(levels.get(level.value)) is None
            ]
            if missing:
                name = (
                    f"'{target.target_id}'"
                    if target.target_id
                    else f"evidenceTargets[{target.index}]"
                )
                yield node.issue(
                    f"the rubric of evidence target {name} has no {', '.join(missing)} level; "
                    "markers will have no descriptor for answers at that level",
                    "evidenceTargets",
                    target.index,
                    "rubricDescriptor",
                    "levels",
                )


@rule(
    "EVD-007",
    phase=Phase.EVIDENCE,
    severity=Severity.WARNING,
    summary="evidenceTarget SHOULD include markingCriteria linking to learning outcomes.",
)
def targets_linked_to_outcomes(inp: RuleInput) -> Iterator[Issue]:
    """Targets name learning outcomes, and the names exist when outcomes are declared."""
    doc = inp.doc
    outcomes = {
        outcome_id
        for outcome_id in (
            as_text(entry.get("id"))
            for entry in (
                as_mapping(item) for item in as_list(doc.metadata.get("learningOutcomes")) or []
            )
            if entry is not None
        )
        if outcome_id is not None
    }
    for node in doc.nodes:
        for target in node.evidence_targets:
            if not target.is_object:
                continue
            name = (
                f"'{target.target_id}'" if target.target_id else f"evidenceTargets[{target.index}]"
            )
            criteria = strings_in(target.raw.get("markingCriteria"))
            if not criteria:
                yield node.issue(
                    f"evidence target {name} has no markingCriteria; list the learning outcome "
                    "ids it evidences (metadata.learningOutcomes) so marks can be traced to them",
                    "evidenceTargets",
                    target.index,
                    "markingCriteria",
                )
                continue
            if not outcomes:
                continue
            for position, criterion in enumerate(as_list(target.raw.get("markingCriteria")) or []):
                if isinstance(criterion, str) and criterion not in outcomes:
                    yield node.issue(
                        f"markingCriteria of evidence target {name} names '{criterion}', which is "
                        f"not a learning outcome id (declared: {listing(sorted(outcomes))})",
                        "evidenceTargets",
                        target.index,
                        "markingCriteria",
                        position,
                    )


@rule(
    "EVD-101",
    phase=Phase.EVIDENCE,
    severity=Severity.ERROR,
    summary="completionPolicy.requiredEvidenceTargetIds MUST name evidence targets of the node.",
    stages=PUBLISH_AND_RUNTIME,
)
def completion_targets_exist(inp: RuleInput) -> Iterator[Issue]:
    """The targets a node's completion requires are targets of that node."""
    for node in inp.doc.nodes:
        policy = node.mapping("completionPolicy")
        if policy is None:
            continue
        for position, item in enumerate(as_list(policy.get("requiredEvidenceTargetIds")) or []):
            if isinstance(item, str) and item not in node.target_ids:
                yield node.issue(
                    f"completionPolicy.requiredEvidenceTargetIds lists '{item}', which is not an "
                    f"evidence target of node {node.name} (its targets: "
                    f"{listing(sorted(node.target_ids)) or 'none'}); the node could never complete",
                    "completionPolicy",
                    "requiredEvidenceTargetIds",
                    position,
                )
