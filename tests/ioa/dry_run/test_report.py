"""The dry run of the cs201 example against figures worked out by hand from the package.

How the figures follow from ``examples/cs201-graph-algorithms.json`` and the personas
(``ioa/dry_run/personas.py``):

* one pool (``pool-scenario``, two nodes), so each of the 7 personas runs twice (variant 0
  draws ``scn-delivery-routes``, variant 1 ``scn-network-latency``): 14 runs;
* every node on the main line (warmup, q-dijkstra, wrapup, end-normal) is entered by every run,
  each scenario by the 7 runs of its variant; nothing ends the exam early (the node budgets
  alone add up to 90 + 360 + 360 + 120 = 930 s, under the 1200 s total), so
  end-timeout, end-terminated and end-technical are never reached;
* warmup has no silence handler: silent and skipper (a refused skip, then silence) sit out its
  whole 90 s budget (``time_exhausted`` x 4, taking exactly 90.0 s); off-topic hits the
  off-topic limit and is forced on (x 2); the same three at wrapup (120 s budget);
* q-dijkstra forbids skip and has a silence handler that escalates to ``skip_node``: silent and
  skipper are forced on by it, off-topic by the off-topic limit: 6 forced exits, each along
  the forced-exit edge, the ``always`` one ``e-q1-pool-default``; partial covers only
  tgt-greedy-choice, so its exit is the ``always`` edge too: 8 runs take it; strong, anxious
  and command-heavy cover greedy-choice and complexity and leave by ``e-q1-pool`` (6);
  ``e-q1-pool-turns`` needs 8 turns and no persona gives more than 4 there: it never fires;
* in each scenario: strong, anxious, command-heavy cover both targets (``e-scnN-wrap``, 3);
  the skipper's skip is allowed (``e-scnN-skip``, 1); partial covers only the model-graph
  target, not the required choose-algorithm one, so it runs out of its 3 follow-ups
  (``follow_ups_exhausted``); silent and off-topic are forced on: ``e-scnN-default`` x 3;
* coverage: greedy-choice by strong, partial, anxious, command-heavy (4 x 2 = 8 of 14);
  complexity and negative-weights by strong, anxious, command-heavy (6 of 14); per scenario,
  the model-graph target 4 of 7, the choose-algorithm one 3 of 7.
"""

from __future__ import annotations

from typing import Any

import pytest

from ioa.dry_run import dry_run
from ioa.schema import load_package
from tests.ioa.builders import example


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return dry_run(load_package(example()))


def _by(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {row[key]: row for row in rows}


def test_runs_every_persona_once_per_pool_variant(report: dict[str, Any]) -> None:
    assert report["runCount"] == 14
    assert report["personas"] == [
        "strong",
        "partial",
        "silent",
        "off_topic",
        "anxious",
        "command_heavy",
        "skipper",
    ]
    assert report["pools"] == [
        {"poolId": "pool-scenario", "drawn": {"scn-delivery-routes": 7, "scn-network-latency": 7}}
    ]
    assert all(run["endReason"] == "all_nodes_visited" for run in report["runs"])
    assert report["deadEnds"] == []


def test_nodes_reached_and_never_reached(report: dict[str, Any]) -> None:
    reached = {row["nodeId"]: row["reached"] for row in report["nodes"]}
    assert reached == {
        "warmup": 14,
        "q-dijkstra": 14,
        "scn-delivery-routes": 7,
        "scn-network-latency": 7,
        "wrapup": 14,
        "end-normal": 14,
        "end-timeout": 0,
        "end-terminated": 0,
        "end-technical": 0,
    }
    assert report["neverReached"] == ["end-timeout", "end-terminated", "end-technical"]


def test_transitions_fired_and_never_fired(report: dict[str, Any]) -> None:
    fired = {row["id"]: row["fired"] for row in report["transitions"]}
    assert fired == {
        "e-warmup-q1": 14,
        "e-q1-pool": 6,
        "e-q1-pool-turns": 0,
        "e-q1-pool-default": 8,
        "e-scn1-wrap": 3,
        "e-scn1-skip": 1,
        "e-scn1-default": 3,
        "e-scn2-wrap": 3,
        "e-scn2-skip": 1,
        "e-scn2-default": 3,
        "e-wrap-end": 14,
    }
    assert report["neverFired"] == ["e-q1-pool-turns"]


def test_evidence_coverage_per_target(report: dict[str, Any]) -> None:
    coverage = {row["targetId"]: (row["covered"], row["reached"]) for row in report["targets"]}
    assert coverage == {
        "tgt-greedy-choice": (8, 14),
        "tgt-complexity": (6, 14),
        "tgt-negative-weights": (6, 14),
        "tgt-model-graph": (4, 7),
        "tgt-choose-algorithm": (3, 7),
        "tgt-model-graph-net": (4, 7),
        "tgt-choose-algorithm-net": (3, 7),
    }


def test_forced_exits_and_time_against_budgets(report: dict[str, Any]) -> None:
    nodes = _by(report["nodes"], "nodeId")
    assert nodes["warmup"]["exits"] == {"completed": 8, "forced_transition": 2, "time_exhausted": 4}
    assert nodes["wrapup"]["exits"] == {"completed": 8, "forced_transition": 2, "time_exhausted": 4}
    # q-dijkstra forbids skip: a silent candidate's silence escalation is held there (never a
    # skip); the node's time budget ends the part instead.
    assert nodes["q-dijkstra"]["exits"] == {
        "completed": 8,
        "forced_transition": 2,
        "time_exhausted": 4,
    }
    for scenario in ("scn-delivery-routes", "scn-network-latency"):
        assert nodes[scenario]["exits"] == {
            "candidate_skip": 1,
            "completed": 3,
            "follow_ups_exhausted": 1,
            "forced_transition": 2,
        }
        assert nodes[scenario]["forcedExits"] == 3
    # The silent candidate uses the warm-up's and the wrap-up's whole budgets, never more.
    assert nodes["warmup"]["budgetSec"] == 90 and nodes["warmup"]["timeSec"]["max"] == 90.0
    assert nodes["wrapup"]["budgetSec"] == 120 and nodes["wrapup"]["timeSec"]["max"] == 120.0
    assert all(row["overBudget"] == 0 for row in report["nodes"])
    silent = [run for run in report["runs"] if run["persona"] == "silent"]
    # warm-up: budget; q-dijkstra: budget (it forbids skip, the silence escalation is held);
    # the scenario: silence escalation; wrap-up: budget.
    assert [f["reason"] for f in silent[0]["forcedExits"]] == [
        "time_exhausted",
        "time_exhausted",
        "forced_transition",
        "time_exhausted",
    ]


def test_a_node_that_no_candidate_can_leave_is_a_dead_end() -> None:
    document = example()
    warmup = document["nodes"][0]
    del warmup["timeBudget"]
    document["metadata"].pop("totalTimeBudgetSec")
    report = dry_run(load_package(document))
    stuck = {(d["persona"], d["nodeId"], d["reason"]) for d in report["deadEnds"]}
    # Nothing moves a candidate who never speaks out of a warm-up with no budget.
    assert ("silent", "warmup", "no_progress") in stuck
    assert ("strong", "warmup", "no_progress") not in stuck


def test_the_report_is_deterministic(report: dict[str, Any]) -> None:
    assert dry_run(load_package(example())) == report


def test_a_pool_reentered_in_one_run_counts_that_run_once() -> None:
    # A package whose scenario leads back to the warm-up, with skipping allowed: the skipper
    # goes round the cycle and re-enters the pool (found by the property test).
    document = example()
    scenario = next(n for n in document["nodes"] if n["nodeId"] == "scn-delivery-routes")
    scenario["transitions"][1]["targetNodeId"] = "warmup"
    document["globalPolicies"]["defaultCandidateCommands"]["allowed"] = [
        "repeat",
        "clarification",
        "request_rephrase",
        "pause",
        "raise_hand",
        "thinking_aloud",
    ]
    report = dry_run(load_package(document))
    skipper = [r for r in report["runs"] if r["persona"] == "skipper"]
    assert any(r["path"].count("scn-delivery-routes") > 1 for r in skipper)
    (pool,) = report["pools"]
    assert sum(pool["drawn"].values()) <= report["runCount"]
    assert pool["drawn"] == {"scn-delivery-routes": 7, "scn-network-latency": 7}
