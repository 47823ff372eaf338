"""ioa.versioning: irVersion format, support window, deprecations."""

from __future__ import annotations

import pytest

from ioa.errors import IrVersionFormatError, UnsupportedIrVersionError
from ioa.versioning import (
    CURRENT,
    DEFAULT_POLICY,
    DEPRECATIONS,
    IrVersion,
    SupportPolicy,
    VersionStatus,
    is_supported,
    parse_ir_version,
)


def test_current_version() -> None:
    assert str(CURRENT) == "ioa-orm/0.2"


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("ioa-orm/0.2", IrVersion(0, 2, "ioa-orm")),
        ("exam-runtime-ir/0.1", IrVersion(0, 1, "exam-runtime-ir")),
        ("ioa-orm/12.30", IrVersion(12, 30, "ioa-orm")),
    ],
)
def test_parse(text: str, parsed: IrVersion) -> None:
    assert parse_ir_version(text) == parsed
    assert str(parsed) == text


@pytest.mark.parametrize(
    "text", ["ioa-orm/0.2.1", "ioa-orm/02", "ioa-orm/0.02", "IOA-ORM/0.2", "ioa/0.2", "", 0.2, None]
)
def test_parse_rejects_malformed(text: object) -> None:
    with pytest.raises(IrVersionFormatError):
        parse_ir_version(text)


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("ioa-orm/0.2", VersionStatus.CURRENT),
        ("ioa-orm/0.1", VersionStatus.SUPPORTED),
        ("exam-runtime-ir/0.1", VersionStatus.SUPPORTED),
        ("exam-runtime-ir/0.2", VersionStatus.UNSUPPORTED),
        ("ioa-orm/0.0", VersionStatus.UNSUPPORTED),
        ("ioa-orm/0.3", VersionStatus.UNSUPPORTED),
        ("ioa-orm/1.0", VersionStatus.UNSUPPORTED),
    ],
)
def test_status_under_the_default_policy(text: str, status: VersionStatus) -> None:
    assert DEFAULT_POLICY.status(parse_ir_version(text)) is status


def test_supported_versions_are_listed_newest_first() -> None:
    assert DEFAULT_POLICY.supported_versions() == (
        "ioa-orm/0.2",
        "exam-runtime-ir/0.1",
        "ioa-orm/0.1",
    )


def test_window_moves_with_the_current_version() -> None:
    released = {(0, minor): ("ioa-orm",) for minor in range(1, 6)}
    released[(0, 1)] = ("exam-runtime-ir", "ioa-orm")
    policy = SupportPolicy(current=IrVersion(0, 5), released=released)
    assert policy.status(parse_ir_version("ioa-orm/0.3")) is VersionStatus.SUPPORTED
    assert policy.status(parse_ir_version("ioa-orm/0.2")) is VersionStatus.END_OF_LIFE
    assert policy.status(parse_ir_version("exam-runtime-ir/0.1")) is VersionStatus.END_OF_LIFE
    with pytest.raises(UnsupportedIrVersionError) as raised:
        policy.check("ioa-orm/0.2")
    assert raised.value.supported == ("ioa-orm/0.5", "ioa-orm/0.4", "ioa-orm/0.3")
    assert "end of life" in str(raised.value)
    assert "ioa-orm/0.5" in str(raised.value)


def test_older_major_is_end_of_life() -> None:
    released = {(0, 2): ("ioa-orm",), (1, 0): ("ioa-orm",)}
    policy = SupportPolicy(current=IrVersion(1, 0), released=released)
    assert policy.status(parse_ir_version("ioa-orm/0.2")) is VersionStatus.END_OF_LIFE


def test_check_names_supported_versions() -> None:
    with pytest.raises(UnsupportedIrVersionError, match=r"ioa-orm/0\.2, exam-runtime-ir/0\.1"):
        DEFAULT_POLICY.check("ioa-orm/0.9")
    assert DEFAULT_POLICY.check("exam-runtime-ir/0.1") == IrVersion(0, 1, "exam-runtime-ir")


def test_is_supported() -> None:
    assert is_supported("ioa-orm/0.2")
    assert not is_supported("nonsense")
    assert not is_supported("ioa-orm/0.9")


def test_cmp_007_deprecations_are_removable_only_at_a_major_bump() -> None:
    for deprecation in DEPRECATIONS:
        assert deprecation.removable_in.major > deprecation.deprecated_in.major
        assert deprecation.removable_in.minor == 0


def test_cmp_006_deprecated_spellings_stay_accepted_by_every_supported_version() -> None:
    for deprecation in DEPRECATIONS:
        for text in DEFAULT_POLICY.supported_versions():
            assert parse_ir_version(text).number < deprecation.removable_in.number
