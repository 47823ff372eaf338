"""The rule registry."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ioa.errors import RuleRegistryError
from ioa.validation import REGISTRY, Issue, Phase, RuleInput, Severity, Stage, declare, rule
from ioa.validation.pipeline import load_rules
from ioa.validation.registry import RuleRegistry

CHAPTER_08_PUBLISH_IDS = (
    [f"PKG-{n:03}" for n in range(1, 13)]
    + [f"NOD-{n:03}" for n in (1, 2, 3, 5, 8, 10, 11, 12)]
    + [f"NOD-Q{n:03}" for n in range(1, 13)]
    + [f"NOD-E{n:03}" for n in range(1, 8)]
    + [f"TRN-{n:03}" for n in range(1, 12)]
    + [f"EVD-{n:03}" for n in range(1, 8)]
    + [f"POL-{n:03}" for n in (1, 2, 3, 4, 6)]
    + [f"POL-F{n:03}" for n in range(1, 5)]
    + [f"POL-R{n:03}" for n in range(1, 6)]
    + [f"FAIR-{n:03}" for n in range(1, 5)]
    + ["CMP-001", "CMP-002", "CMP-003", "CMP-004", "CMP-008", "CMP-009", "CMP-010"]
)

CHAPTER_08_OTHER_IDS = (
    ["EVD-008", "EVD-009", "EVD-010", "POL-005", "POL-007", "POL-008"]
    + [f"EVT-{n:03}" for n in range(1, 12)]
    + [f"OUT-{n:03}" for n in range(1, 6)]
    + [f"ADP-{n:03}" for n in range(1, 17)]
    + ["CMP-005", "CMP-006", "CMP-007"]
)


def test_every_chapter_08_publish_rule_is_evaluated_here() -> None:
    load_rules()
    for rule_id in CHAPTER_08_PUBLISH_IDS:
        spec = REGISTRY.get(rule_id)
        assert spec.check is not None, rule_id
        assert Stage.PUBLISH in spec.stages, rule_id


def test_every_other_chapter_08_rule_is_in_the_registry() -> None:
    load_rules()
    for rule_id in CHAPTER_08_OTHER_IDS:
        assert rule_id in REGISTRY, rule_id


def test_severities_follow_chapter_08() -> None:
    load_rules()
    assert REGISTRY.get("PKG-009").severity is Severity.WARNING
    assert REGISTRY.get("EVD-006").severity is Severity.INFO
    assert REGISTRY.get("POL-F002").severity is Severity.INFO
    assert REGISTRY.get("CMP-004").severity is Severity.INFO
    assert REGISTRY.get("TRN-005").severity is Severity.ERROR


def test_duplicate_registration_is_refused() -> None:
    registry = RuleRegistry()

    def check(inp: RuleInput) -> Iterator[Issue]:
        yield from ()

    rule("X-001", phase=Phase.NODE, severity=Severity.ERROR, summary="x", registry=registry)(check)
    with pytest.raises(RuleRegistryError):
        rule("X-001", phase=Phase.NODE, severity=Severity.ERROR, summary="x", registry=registry)(
            check
        )


def test_a_rule_replaces_its_declaration_but_not_the_reverse() -> None:
    registry = RuleRegistry()
    declare(
        "X-002",
        phase=Phase.ADAPTER,
        severity=Severity.ERROR,
        summary="x",
        enforced_by="later",
        module=__name__,
        registry=registry,
    )

    def check(inp: RuleInput) -> Iterator[Issue]:
        yield from ()

    rule("X-002", phase=Phase.ADAPTER, severity=Severity.ERROR, summary="x", registry=registry)(
        check
    )
    assert registry.get("X-002").check is check
    assert registry.checks(Phase.ADAPTER, Stage.PUBLISH)[0].rule_id == "X-002"
    with pytest.raises(RuleRegistryError):
        declare(
            "X-002",
            phase=Phase.ADAPTER,
            severity=Severity.ERROR,
            summary="x",
            enforced_by="again",
            module=__name__,
            registry=registry,
        )


def test_summaries_are_one_line() -> None:
    load_rules()
    for spec in REGISTRY:
        assert spec.summary, spec.rule_id
        assert "\n" not in spec.summary, spec.rule_id
