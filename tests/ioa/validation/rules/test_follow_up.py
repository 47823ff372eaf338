"""POL-F001..004: follow-up policy rules."""

from __future__ import annotations

from tests.ioa.builders import get, put
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

F = "nodes[q-dijkstra].followUpPolicy"

CASES = [
    Case(
        "POL-F001",
        lambda d: put(d, f"{F}.maxFollowUps", -2),
        lambda d: put(d, f"{F}.maxFollowUps", 0),
        path=f"{F}.maxFollowUps",
    ),
    Case(
        "POL-F002",
        lambda d: put(d, f"{F}.maxFollowUps", 0),
        lambda d: put(d, f"{F}.maxFollowUps", 1),
        path=f"{F}.maxFollowUps",
    ),
    Case(
        "POL-F003",
        lambda d: get(d, F).pop("maxFollowUpDurationSec"),
        lambda d: (get(d, F).pop("maxFollowUpDurationSec"), put(d, f"{F}.maxFollowUps", 0)),
        path=f"{F}.maxFollowUpDurationSec",
    ),
    Case(
        "POL-F004",
        lambda d: put(d, f"{F}.maxFollowUpDurationSec", 400),
        lambda d: put(d, f"{F}.maxFollowUpDurationSec", 360),
        path=f"{F}.maxFollowUpDurationSec",
    ),
    Case(
        "POL-F004",
        lambda d: (
            get(d, "nodes[q-dijkstra]").pop("timeBudget"),
            put(d, "nodes[q-dijkstra].timeBudgetMs", 60000),
        ),
        unchanged,
        label="ms",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)
