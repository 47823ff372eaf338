"""POL-R001..005, POL-R101: recovery handler rules."""

from __future__ import annotations

from tests.ioa.builders import get, put
from tests.ioa.validation.rules.cases import (
    Case,
    assert_near_miss,
    assert_triggers,
    parametrize,
    unchanged,
)

R = "nodes[q-dijkstra].recoveryHandlers"

CASES = [
    Case(
        "POL-R001",
        lambda d: put(d, f"{R}[2].scenario", "boredom"),
        lambda d: put(d, f"{R}[2].scenario", "interruption"),
        path=f"{R}[2].scenario",
    ),
    Case(
        "POL-R002",
        lambda d: put(d, f"{R}[1].escalation", "explode"),
        lambda d: put(d, f"{R}[1].escalation", "retry"),
        path=f"{R}[1].escalation",
    ),
    Case(
        "POL-R003",
        lambda d: put(d, f"{R}[0].escalation", "retry"),
        lambda d: put(d, f"{R}[0].escalation", "terminate"),
        path=f"{R}[0].escalation",
    ),
    Case(
        "POL-R004",
        lambda d: put(d, f"{R}[0].transitions", []),
        unchanged,
        path=f"{R}[0].transitions",
    ),
    Case(
        "POL-R005",
        lambda d: get(d, R).pop(1),
        lambda d: (
            get(d, R).pop(1),
            put(
                d,
                "metadata.sttHandlingJustification",
                "A human proctor reviews low-confidence audio.",
            ),
        ),
        path=R,
    ),
    Case(
        "POL-R005",
        lambda d: put(d, f"{R}[1].action", "calm_support"),
        lambda d: put(d, f"{R}[1].action", "technical_recovery"),
        path=f"{R}[1].action",
        label="action",
    ),
    Case(
        "POL-R101",
        lambda d: put(d, f"{R}[2].scenario", "silence"),
        lambda d: put(d, f"{R}[2].scenario", "off_topic"),
        path=f"{R}[2].scenario",
    ),
]


@parametrize(CASES)
def test_triggers(case: Case) -> None:
    assert_triggers(case)


@parametrize(CASES)
def test_near_miss(case: Case) -> None:
    assert_near_miss(case)
