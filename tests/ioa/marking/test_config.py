"""The marking configuration: the IR's third compilation target."""

from __future__ import annotations

import json

from ioa.canonical import canonical_json
from ioa.marking import Level, MarkingConfig, compile_marking
from ioa.schema import load_package
from tests.ioa.builders import example


def test_cs201_compiles_to_slots_targets_weights_and_outcomes() -> None:
    config = compile_marking(load_package(example()))
    assert [s.slot_id for s in config.slots] == ["q-dijkstra", "pool-scenario"]
    pool = config.slot("pool-scenario")
    assert pool is not None and pool.is_pool
    assert pool.node_ids == ("scn-delivery-routes", "scn-network-latency")
    assert [s.weight for s in config.slots] == [0.5, 0.5]
    node = config.node("q-dijkstra")
    assert node is not None
    assert [(t.key, t.weight) for t in node.targets] == [
        ("tgt-greedy-choice", 0.5),
        ("tgt-complexity", 0.3),
        ("tgt-negative-weights", 0.2),
    ]
    greedy = config.target("tgt-greedy-choice")
    assert greedy is not None and greedy.outcome_ids == ("LO2",)
    assert greedy.descriptor(Level.EXCELLENT).label == "Complete"
    assert greedy.descriptor(Level.EXCELLENT).declared
    complexity = config.target("tgt-complexity")
    assert complexity is not None and not complexity.descriptor(Level.PARTIAL).declared
    assert config.outcome_text("LO4").startswith("Choose")
    assert config.node("warmup") is None  # no targets: not assessed


def test_round_trip_and_byte_determinism() -> None:
    first = compile_marking(load_package(example()))
    second = compile_marking(load_package(example()))
    assert canonical_json(first.to_dict()) == canonical_json(second.to_dict())
    again = MarkingConfig.from_dict(json.loads(canonical_json(first.to_dict())))
    assert again == first


def test_extension_slot_weights_rules_and_repeated_target_ids() -> None:
    document = example()
    document["metadata"]["extensions"] = {
        "marking": {
            "slotWeights": {"q-dijkstra": 3, "pool-scenario": 1},
            "rules": {"panelThreshold": 0, "sttMarginal": 0.7},
        }
    }
    for node in document["nodes"]:
        for target in node.get("evidenceTargets", []):
            if target["id"] == "tgt-model-graph-net":
                target["id"] = "tgt-model-graph"
    config = compile_marking(load_package(document))
    assert [s.weight for s in config.slots] == [0.75, 0.25]
    assert config.rules.panel_threshold == 0 and config.rules.stt_marginal == 0.7
    assert config.target("scn-delivery-routes.tgt-model-graph") is not None
    assert config.target("scn-network-latency.tgt-model-graph") is not None
