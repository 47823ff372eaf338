"""Step 1: schema conformance (the JSON Schema in ``docs/spec/package.schema.json``).

The chapter gives no ids for schema errors; this project uses SCH-001..003. A schema finding
gives way to a more specific rule's error at the same path (see ``ioa.validation.pipeline``).
"""

from __future__ import annotations

from collections.abc import Iterator

from ioa.schema.paths import ROOT
from ioa.validation.document import describe
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import PUBLISH_AND_RUNTIME, RuleInput, rule


@rule(
    "SCH-001",
    phase=Phase.SCHEMA,
    severity=Severity.ERROR,
    summary="The document MUST be a JSON object (an AssessmentPackage).",
    stages=PUBLISH_AND_RUNTIME,
)
def document_is_object(inp: RuleInput) -> Iterator[Issue]:
    """Report a document that is not a JSON object at all."""
    if not inp.doc.is_object:
        yield Issue(
            ROOT,
            "the document must be a JSON object (an assessment package), "
            f"got {describe(inp.doc.raw)}; "
            "start from a package such as examples/cs201-graph-algorithms.json",
        )


@rule(
    "SCH-002",
    phase=Phase.SCHEMA,
    severity=Severity.ERROR,
    summary=(
        "Every field MUST have the type, presence, enum value and range the package schema defines."
    ),
    stages=PUBLISH_AND_RUNTIME,
)
def fields_conform(inp: RuleInput) -> Iterator[Issue]:
    """Report every schema violation other than unknown fields."""
    if not inp.doc.is_object:
        return
    for problem in inp.schema.problems:
        if problem.error_type != "extra_forbidden":
            yield Issue(problem.path, problem.message, _node_id(inp, problem.path))


@rule(
    "SCH-003",
    phase=Phase.SCHEMA,
    severity=Severity.ERROR,
    summary=("Unknown fields MUST NOT appear (fail closed), except under metadata.extensions."),
    stages=PUBLISH_AND_RUNTIME,
)
def no_unknown_fields(inp: RuleInput) -> Iterator[Issue]:
    """Report every field the schema does not define."""
    if not inp.doc.is_object:
        return
    for problem in inp.schema.problems:
        if problem.error_type == "extra_forbidden":
            yield Issue(problem.path, problem.message, _node_id(inp, problem.path))


def _node_id(inp: RuleInput, path: tuple[str | int, ...]) -> str | None:
    """The nodeId of the node a path points into, if any."""
    if len(path) >= 2 and path[0] == "nodes" and isinstance(path[1], int):
        nodes = inp.doc.nodes
        if 0 <= path[1] < len(nodes):
            return nodes[path[1]].node_id or None
    return None
