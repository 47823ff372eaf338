"""What the validator may know beyond the document itself."""

from __future__ import annotations

from dataclasses import dataclass, field

from ioa.versioning import DEFAULT_POLICY, SupportPolicy


@dataclass(frozen=True)
class PublishedPackage:
    """A package version already published (one immutable artifact per packageId+version)."""

    package_id: str
    version: str
    """``metadata.version`` of the published artifact."""
    ir_version: str
    checksum: str | None = None
    """``sha256:<hex>`` of the published canonical document, if known."""


@dataclass(frozen=True)
class ValidationContext:
    """Optional knowledge that some rules use.

    ``published`` lists earlier publications of packages (typically every published version
    of the same packageId). CMP-001 uses it: a document whose packageId and
    ``metadata.version`` match a published artifact must keep that artifact's irVersion.
    ``support_policy`` decides which irVersions are accepted (CMP-002/003/009).
    ``expected_checksum`` is set by runtime validation (RUN-001).
    """

    published: tuple[PublishedPackage, ...] = ()
    support_policy: SupportPolicy = field(default=DEFAULT_POLICY)
    expected_checksum: str | None = None
    """Runtime only: the checksum recorded at publication, which the document must match
    (RUN-001)."""


DEFAULT_CONTEXT = ValidationContext()
"""No publication history; this code base's support policy."""
