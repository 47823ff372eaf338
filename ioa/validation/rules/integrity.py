"""Runtime: package integrity before a session starts (RUN-001 of this project)."""

from __future__ import annotations

from collections.abc import Iterator

from ioa.canonical import checksum
from ioa.errors import CanonicalisationError
from ioa.schema.paths import ROOT
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import RUNTIME, RuleInput, rule


@rule(
    "RUN-001",
    phase=Phase.RUNTIME,
    severity=Severity.ERROR,
    summary=(
        "The package MUST match the checksum recorded when it was published (canonical JSON, "
        "sha256)."
    ),
    stages=RUNTIME,
)
def checksum_matches(inp: RuleInput) -> Iterator[Issue]:
    """The document is byte-for-byte (canonically) the published artifact."""
    expected = inp.context.expected_checksum
    if expected is None:
        yield Issue(
            ROOT,
            "no published checksum was supplied, so the package's integrity cannot be verified; "
            "load the checksum stored with the published artifact",
        )
        return
    try:
        actual = checksum(inp.doc.raw)
    except CanonicalisationError as error:
        yield Issue(
            ROOT, f"the package cannot be checksummed ({error}); it is not the published artifact"
        )
        return
    if actual != expected:
        yield Issue(
            ROOT,
            f"the package's checksum {actual} differs from the published {expected}; the stored "
            "package was altered or is a different artifact, so the session must not start",
        )
