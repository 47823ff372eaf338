"""RUN-001: the stored package matches its published checksum (runtime)."""

from __future__ import annotations

from ioa.canonical import checksum
from tests.ioa.builders import example, put
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

PUBLISHED = checksum(example())

CASES = [
    Case(
        "RUN-001",
        lambda d: put(d, "nodes[q-dijkstra].promptSeed", "Ask something easier."),
        unchanged,
        path="$",
        runtime_checksum=PUBLISHED,
    ),
    Case(
        "RUN-001",
        lambda d: put(d, "nodes[q-dijkstra].timeBudget.maxDurationSec", float("nan")),
        lambda d: d.update(dict(reversed(list(d.items())))),
        runtime_checksum=PUBLISHED,
        label="not-json",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)
