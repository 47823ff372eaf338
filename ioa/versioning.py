"""IOA-ORM versions: the ``irVersion`` format, the support window and the deprecations.

``docs/spec/versioning.md`` is the prose version of this module (our 09-versioning chapter).

* Format: ``ioa-orm/MAJOR.MINOR`` (no leading zeros, no patch part). The lineage's old name
  ``exam-runtime-ir`` is accepted for the versions released under it (up to 0.1, CMP-005).
* Support window (CMP-003): the current version and the two previous minor versions of the same
  major, restricted to versions that were actually released. Anything older in the lineage is
  end of life (CMP-009); anything newer or never released is unsupported (CMP-002).
* Deprecations (CMP-006/007/008): :data:`DEPRECATIONS` lists every deprecated spelling, the
  version that deprecated it and the first version that may remove it (always a major bump).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from ioa.errors import IrVersionFormatError, UnsupportedIrVersionError

CURRENT_NAME: Final = "ioa-orm"
"""The lineage name used by current versions."""

LEGACY_NAME: Final = "exam-runtime-ir"
"""The lineage's old name (chapters before v0.2.0)."""

IR_VERSION_PATTERN: Final = re.compile(
    r"^(?P<name>ioa-orm|exam-runtime-ir)/(?P<major>0|[1-9][0-9]{0,5})\.(?P<minor>0|[1-9][0-9]{0,5})$"
)
"""The accepted ``irVersion`` syntax (PKG-004)."""

SUPPORTED_MINOR_WINDOW: Final = 2
"""How many minor versions before the current one stay supported (CMP-003)."""


@dataclass(frozen=True, order=True)
class IrVersion:
    """A parsed ``irVersion``: lineage version numbers plus the name it was written with.

    Ordering and equality compare ``(major, minor, name)``; use :meth:`number` to compare
    versions regardless of the name they were written with.
    """

    major: int
    minor: int
    name: str = CURRENT_NAME

    @property
    def number(self) -> tuple[int, int]:
        """``(major, minor)``: the version in the lineage, independent of its name."""
        return (self.major, self.minor)

    def __str__(self) -> str:
        return f"{self.name}/{self.major}.{self.minor}"


def parse_ir_version(text: object) -> IrVersion:
    """Parse an ``irVersion`` string; raise :class:`IrVersionFormatError` if malformed."""
    if not isinstance(text, str):
        raise IrVersionFormatError(
            f"irVersion must be a string like '{CURRENT}', got {type(text).__name__}"
        )
    match = IR_VERSION_PATTERN.fullmatch(text)
    if match is None:
        raise IrVersionFormatError(
            f"irVersion must look like '{CURRENT}' (name/MAJOR.MINOR), got {text!r}"
        )
    return IrVersion(int(match["major"]), int(match["minor"]), match["name"])


CURRENT: Final = IrVersion(0, 2, CURRENT_NAME)
"""The version this code base writes and validates against."""

RELEASED: Final[dict[tuple[int, int], tuple[str, ...]]] = {
    (0, 1): (LEGACY_NAME, CURRENT_NAME),
    (0, 2): (CURRENT_NAME,),
}
"""Every released lineage version and the names it may be written with.

0.1 shipped as ``exam-runtime-ir/0.1``; the rename to ``ioa-orm`` happened with 0.2, and
``ioa-orm/0.1`` is accepted as the same version under the new name.
"""


class VersionStatus(StrEnum):
    """Where an ``irVersion`` stands relative to a :class:`SupportPolicy`."""

    CURRENT = "current"
    SUPPORTED = "supported"
    """Inside the support window but not current."""
    END_OF_LIFE = "end_of_life"
    """Released in this lineage but older than the support window (CMP-009)."""
    UNSUPPORTED = "unsupported"
    """Newer than this runtime, never released, or a name that version never had (CMP-002)."""


@dataclass(frozen=True)
class SupportPolicy:
    """Which ``irVersion`` values a runtime loads. Injected so tests can move the clock of
    releases forward (e.g. a policy whose current version is 0.4 makes 0.1 end of life).
    """

    current: IrVersion = CURRENT
    released: dict[tuple[int, int], tuple[str, ...]] = field(
        default_factory=lambda: dict(RELEASED), hash=False
    )
    window: int = SUPPORTED_MINOR_WINDOW

    def status(self, version: IrVersion) -> VersionStatus:
        """Classify ``version`` (see :class:`VersionStatus`)."""
        names = self.released.get(version.number)
        if names is None or version.name not in names or version.number > self.current.number:
            return VersionStatus.UNSUPPORTED
        if version.number == self.current.number:
            return VersionStatus.CURRENT
        if (
            version.major == self.current.major
            and version.minor >= self.current.minor - self.window
        ):
            return VersionStatus.SUPPORTED
        return VersionStatus.END_OF_LIFE

    def supported_versions(self) -> tuple[str, ...]:
        """Every accepted ``irVersion`` spelling, newest first (used in error messages)."""
        spelled: list[str] = []
        for number in sorted(self.released, reverse=True):
            for name in self.released[number]:
                candidate = IrVersion(number[0], number[1], name)
                if self.status(candidate) in (VersionStatus.CURRENT, VersionStatus.SUPPORTED):
                    spelled.append(str(candidate))
        return tuple(spelled)

    def check(self, text: object) -> IrVersion:
        """Parse and accept ``text`` or raise a typed error naming the supported versions."""
        version = parse_ir_version(text)
        status = self.status(version)
        if status in (VersionStatus.CURRENT, VersionStatus.SUPPORTED):
            return version
        raise UnsupportedIrVersionError(
            unsupported_message(version, status, self), supported=self.supported_versions()
        )


DEFAULT_POLICY: Final = SupportPolicy()
"""The support policy of this code base."""


def unsupported_message(version: IrVersion, status: VersionStatus, policy: SupportPolicy) -> str:
    """Explain why ``version`` is not loadable and what to do, naming the supported versions."""
    supported = ", ".join(policy.supported_versions())
    if status is VersionStatus.END_OF_LIFE:
        return (
            f"irVersion {version} has reached end of life and can no longer be run; "
            f"supported versions: {supported}. Re-publish the package under {policy.current}"
        )
    if version.number > policy.current.number:
        return (
            f"irVersion {version} is newer than this runtime ({policy.current}); "
            f"supported versions: {supported}"
        )
    names = policy.released.get(version.number)
    if names is not None and version.name not in names:
        return (
            f"irVersion {version} was never released under the name '{version.name}'; "
            f"write {names[0]}/{version.major}.{version.minor}. Supported versions: {supported}"
        )
    return f"irVersion {version} was never released; supported versions: {supported}"


def is_supported(text: object, policy: SupportPolicy = DEFAULT_POLICY) -> bool:
    """True if ``text`` parses and is current or inside the support window."""
    try:
        policy.check(text)
    except (IrVersionFormatError, UnsupportedIrVersionError):
        return False
    return True


@dataclass(frozen=True)
class Deprecation:
    """A deprecated spelling that is still accepted and converted (CMP-006, CMP-008)."""

    spelling: str
    """Where the deprecated spelling appears, e.g. ``nodes[].timeBudgetMs``."""
    replacement: str
    """The canonical spelling to write instead."""
    deprecated_in: IrVersion
    removable_in: IrVersion
    """The first version allowed to drop it: always a major bump (CMP-007)."""
    conversion: str
    """How the loader converts the deprecated spelling."""


DEPRECATIONS: Final[tuple[Deprecation, ...]] = (
    Deprecation(
        spelling="nodes[].timeBudgetMs",
        replacement="nodes[].timeBudget.maxDurationSec",
        deprecated_in=IrVersion(0, 2),
        removable_in=IrVersion(1, 0),
        conversion="maxDurationSec = timeBudgetMs / 1000",
    ),
    Deprecation(
        spelling='transitions[].condition {"type": "evidence_sufficient", "requiredEvidence"}',
        replacement='transitions[].condition {"type": "evidence_satisfied", "targetIds"}',
        deprecated_in=IrVersion(0, 2),
        removable_in=IrVersion(1, 0),
        conversion="type becomes evidence_satisfied; targetIds = requiredEvidence (or [])",
    ),
)
"""Every deprecated spelling the loader still accepts."""
