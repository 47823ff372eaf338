"""POOL-001..002: question pool structure."""

from __future__ import annotations

from tests.ioa.builders import get, put
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

CASES = [
    Case(
        "POOL-001",
        lambda d: put(d, "questionPools[0].poolId", "wrapup"),
        lambda d: put(d, "questionPools[0].poolId", "pool-scenarios-b"),
        path="questionPools[0].poolId",
    ),
    Case(
        "POOL-001",
        lambda d: d["questionPools"].append(dict(get(d, "questionPools[0]"))),
        unchanged,
        path="questionPools[1].poolId",
        label="duplicate",
    ),
    Case(
        "POOL-002",
        lambda d: get(d, "questionPools[0].nodeIds").append("end-normal"),
        lambda d: put(
            d, "questionPools[0].nodeIds", ["scn-network-latency", "scn-delivery-routes"]
        ),
        path="questionPools[0].nodeIds[2]",
    ),
    Case(
        "POOL-002",
        lambda d: get(d, "questionPools[0].nodeIds").append("scn-unknown"),
        unchanged,
        label="unknown",
    ),
    Case(
        "POOL-002",
        lambda d: get(d, "questionPools[0].nodeIds").append("scn-delivery-routes"),
        unchanged,
        label="twice",
    ),
    Case("POOL-002", lambda d: put(d, "questionPools[0].nodeIds", []), unchanged, label="empty"),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)
