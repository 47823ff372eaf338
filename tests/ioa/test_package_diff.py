"""Version differences by meaning: nodes, targets, transitions, pools, metadata."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from ioa.package_diff import semantic_diff
from tests.ioa.builders import example


def _summary(old: dict, new: dict) -> set[tuple[str, str, str, tuple[str, ...]]]:
    return {(c.kind, c.key, c.change, c.fields) for c in semantic_diff(old, new)}


def test_identical_documents_have_no_change() -> None:
    assert semantic_diff(example(), example()) == []


def test_added_removed_and_changed_parts_are_named() -> None:
    old = example()
    new = copy.deepcopy(old)
    new["metadata"]["version"] = "1.1.0"
    q1 = new["nodes"][1]
    q1["timeBudget"] = {"maxDurationSec": 300}
    q1["evidenceTargets"][1]["weight"] = 0.25
    del q1["evidenceTargets"][2]
    q1["evidenceTargets"].append({"id": "tgt-proof", "label": "Proves correctness"})
    q1["transitions"] = [t for t in q1["transitions"] if t["id"] != "e-q1-pool-turns"]
    q1["transitions"][0]["condition"] = {"type": "always"}
    new["nodes"] = [n for n in new["nodes"] if n["nodeId"] != "end-technical"]
    new["nodes"].append({"nodeId": "extra", "kind": "question", "promptSeed": "Ask more."})
    new["questionPools"][0]["selection"] = "random_one"
    new["questionPools"][0]["nodeIds"] = ["scn-delivery-routes"]
    assert _summary(old, new) == {
        ("metadata", "metadata", "changed", ("version",)),
        ("node", "q-dijkstra", "changed", ("timeBudget",)),
        ("node", "end-technical", "removed", ()),
        ("node", "extra", "added", ()),
        ("target", "tgt-complexity", "changed", ("weight",)),
        ("target", "tgt-negative-weights", "removed", ()),
        ("target", "tgt-proof", "added", ()),
        ("transition", "e-q1-pool-turns", "removed", ()),
        ("transition", "e-q1-pool", "changed", ("condition",)),
        ("pool", "pool-scenario", "changed", ("nodeIds",)),
    }
    owners = {c.key: c.node_id for c in semantic_diff(old, new) if c.kind == "target"}
    assert owners == {
        n: "q-dijkstra" for n in ("tgt-complexity", "tgt-negative-weights", "tgt-proof")
    }


def test_the_initial_node_is_a_package_change() -> None:
    new = example()
    new["initialNodeId"] = "q-dijkstra"
    assert _summary(example(), new) == {("package", "package", "changed", ("initialNodeId",))}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(json_values, json_values)
def test_any_json_is_compared_without_error_and_a_document_equals_itself(a, b) -> None:
    semantic_diff(a, b)
    assert semantic_diff(a, a) == []
