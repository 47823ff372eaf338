"""Step 10: compatibility rules (CMP-001..004, 008..010). See ``docs/spec/versioning.md``.

CMP-002/003/009 check the irVersion against the support policy (publish and runtime);
CMP-001/004 compare with earlier publications given in the validation context; CMP-008 reports
deprecated spellings; CMP-010 checks the compiled flow records its adapterVersion.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ioa.errors import IrVersionFormatError
from ioa.schema.deprecations import find_deprecated_usages
from ioa.validation.document import as_str, as_text
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import PUBLISH_AND_RUNTIME, RuleInput, rule
from ioa.versioning import IrVersion, VersionStatus, parse_ir_version, unsupported_message


def declared_version(inp: RuleInput) -> IrVersion | None:
    """The document's irVersion if well-formed (PKG-004 reports it otherwise)."""
    try:
        return parse_ir_version(inp.doc.ir_version)
    except IrVersionFormatError:
        return None


@rule(
    "CMP-001",
    phase=Phase.COMPATIBILITY,
    severity=Severity.ERROR,
    summary=(
        "A published package's irVersion is immutable: a package with the packageId and "
        "version of a published artifact MUST keep its irVersion."
    ),
)
def published_ir_version_unchanged(inp: RuleInput) -> Iterator[Issue]:
    """Re-validating a published packageId+version must not change its irVersion."""
    doc = inp.doc
    package_id = doc.package_id
    version = as_text(doc.metadata.get("version"))
    written = doc.ir_version
    if package_id is None or version is None or written is None:
        return
    for published in inp.context.published:
        if (
            published.package_id == package_id
            and published.version == version
            and published.ir_version != written
        ):
            yield Issue(
                ("irVersion",),
                f"version {version} of package {package_id} was published with irVersion "
                f"{published.ir_version}, and a published irVersion never changes; keep "
                f"{published.ir_version}, or publish the change as a new metadata.version",
            )


@rule(
    "CMP-002",
    phase=Phase.COMPATIBILITY,
    severity=Severity.ERROR,
    summary="The runtime MUST support the irVersion declared in the package.",
    stages=PUBLISH_AND_RUNTIME,
)
def ir_version_supported(inp: RuleInput) -> Iterator[Issue]:
    """The irVersion is known to this runtime (not newer, not unreleased, right name)."""
    version = declared_version(inp)
    policy = inp.context.support_policy
    if version is None or policy.status(version) is not VersionStatus.UNSUPPORTED:
        return
    yield Issue(("irVersion",), unsupported_message(version, VersionStatus.UNSUPPORTED, policy))


@rule(
    "CMP-009",
    phase=Phase.COMPATIBILITY,
    severity=Severity.ERROR,
    summary=(
        "Packages with an end-of-life irVersion MUST be rejected with a message naming the "
        "supported versions."
    ),
    stages=PUBLISH_AND_RUNTIME,
)
def ir_version_not_end_of_life(inp: RuleInput) -> Iterator[Issue]:
    """The irVersion has not fallen out of the support window."""
    version = declared_version(inp)
    policy = inp.context.support_policy
    if version is None or policy.status(version) is not VersionStatus.END_OF_LIFE:
        return
    yield Issue(("irVersion",), unsupported_message(version, VersionStatus.END_OF_LIFE, policy))


@rule(
    "CMP-003",
    phase=Phase.COMPATIBILITY,
    severity=Severity.WARNING,
    summary=(
        "The runtime supports the current and the two previous minor versions; packages "
        "SHOULD target the current one."
    ),
    stages=PUBLISH_AND_RUNTIME,
)
def ir_version_current(inp: RuleInput) -> Iterator[Issue]:
    """Note a supported but older irVersion, which will leave the support window."""
    version = declared_version(inp)
    policy = inp.context.support_policy
    if version is None or policy.status(version) is not VersionStatus.SUPPORTED:
        return
    leaves = f"{policy.current.name}/{version.major}.{version.minor + policy.window + 1}"
    yield Issue(
        ("irVersion",),
        f"irVersion {version} is supported but not current ({policy.current}); it reaches end "
        f"of life when {leaves} is released. Re-publish the package under {policy.current}",
    )


@rule(
    "CMP-004",
    phase=Phase.COMPATIBILITY,
    severity=Severity.INFO,
    summary=(
        "Major version changes MAY break compatibility; packages are re-published under the "
        "new version."
    ),
)
def major_version_change(inp: RuleInput) -> Iterator[Issue]:
    """Note a re-publication that moves the package to another major version."""
    version = declared_version(inp)
    package_id = inp.doc.package_id
    if version is None or package_id is None:
        return
    majors: set[int] = set()
    for published in inp.context.published:
        if published.package_id != package_id:
            continue
        try:
            earlier = parse_ir_version(published.ir_version)
        except IrVersionFormatError:
            continue
        if earlier.major != version.major:
            majors.add(earlier.major)
    if majors:
        earlier_majors = ", ".join(str(major) for major in sorted(majors))
        yield Issue(
            ("irVersion",),
            f"earlier versions of package {package_id} use major version {earlier_majors}; this "
            f"one uses {version.major}, which may not be backward-compatible. Sessions of the "
            "earlier versions keep running on their own published artifacts",
        )


@rule(
    "CMP-008",
    phase=Phase.COMPATIBILITY,
    severity=Severity.WARNING,
    summary="Deprecated fields are accepted and converted, with a deprecation warning.",
    stages=PUBLISH_AND_RUNTIME,
)
def deprecated_fields(inp: RuleInput) -> Iterator[Issue]:
    """Every deprecated spelling in the document gets a warning naming its replacement."""
    doc = inp.doc
    for usage in find_deprecated_usages(doc.raw):
        node_id: str | None = None
        if len(usage.path) >= 2 and isinstance(usage.path[1], int):
            node_id = doc.nodes[usage.path[1]].node_id or None
        yield Issue(usage.path, usage.message, node_id)


def adapter_version_of(compiled: object) -> object:
    """The ``adapterVersion`` of a compiled flow (a mapping or an object)."""
    if isinstance(compiled, Mapping):
        return compiled.get("adapterVersion")
    return getattr(compiled, "adapterVersion", getattr(compiled, "adapter_version", None))


@rule(
    "CMP-010",
    phase=Phase.COMPATIBILITY,
    severity=Severity.ERROR,
    summary="adapterVersion MUST be recorded alongside the compiled FlowConfig.",
)
def adapter_version_recorded(inp: RuleInput) -> Iterator[Issue]:
    """The compiled flow names the adapter version that produced it (when compiled)."""
    if inp.compiled is None:
        return
    value = adapter_version_of(inp.compiled)
    if as_str(value) is None or not str(value).strip():
        yield Issue(
            ("$compiled", "adapterVersion"),
            "the compiled flow does not record its adapterVersion (got "
            f"{value!r}); the adapter must write it so sessions can be traced to the compiler "
            "that produced them",
        )
