"""The exam graph: pool expansion, reachability, cycles (linear time)."""

from __future__ import annotations

import gc
import time
from typing import Any

from ioa.validation.document import PackageDocument
from ioa.validation.graph import exam_graph
from tests.ioa.builders import end_node, example, put, question_node


def _indexes(document: dict[str, Any], *node_ids: str) -> set[int]:
    ids = [node["nodeId"] for node in document["nodes"]]
    return {ids.index(node_id) for node_id in node_ids}


def test_pool_targets_lead_to_every_member() -> None:
    document = example()
    graph = exam_graph(PackageDocument(document))
    assert graph.successors[1] == tuple(
        sorted(_indexes(document, "scn-delivery-routes", "scn-network-latency"))
    )
    assert graph.reachable == _indexes(
        document,
        "warmup",
        "q-dijkstra",
        "scn-delivery-routes",
        "scn-network-latency",
        "wrapup",
        "end-normal",
    )
    assert graph.cycles == ()


def test_end_nodes_have_no_successors() -> None:
    document = put(
        example(),
        "nodes[end-normal].transitions",
        [{"id": "x", "targetNodeId": "warmup", "condition": {"type": "always"}}],
    )
    graph = exam_graph(PackageDocument(document))
    assert graph.successors[5] == ()
    assert graph.cycles == ()


def test_cycles_are_found() -> None:
    document = put(example(), "nodes[wrapup].transitions[0].targetNodeId", "warmup")
    (cycle,) = exam_graph(PackageDocument(document)).cycles
    assert cycle == _indexes(
        document, "warmup", "q-dijkstra", "scn-delivery-routes", "scn-network-latency", "wrapup"
    )


def test_forced_exit_is_always_else_first() -> None:
    doc = PackageDocument(example())
    q = doc.node_by_id["q-dijkstra"]
    forced = exam_graph(doc).forced_exit(q)
    assert forced is not None
    assert forced.index == 2
    warmup = doc.node_by_id["warmup"]
    assert exam_graph(doc).forced_exit(warmup) is warmup.transitions[0]


def _long_chain(length: int) -> dict[str, Any]:
    nodes = [question_node(f"q{i}", f"q{i + 1}") for i in range(length)]
    nodes[-1]["transitions"][0]["targetNodeId"] = "end"
    for i in range(1, length):  # every node also points back to the first: one big cycle
        nodes[i]["transitions"].append(
            {
                "id": f"back{i}",
                "targetNodeId": "q0",
                "condition": {"type": "turn_count_reached", "count": 9},
            }
        )
    nodes.append(end_node("end", "normal"))
    return {"initialNodeId": "q0", "nodes": nodes}


def _build_time(document: dict[str, Any]) -> float:
    """Best of three builds, garbage collector off (timing noise, not complexity)."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(3):
            started = time.perf_counter()
            graph = exam_graph(PackageDocument(document))
            assert len(graph.reachable) == len(document["nodes"])
            assert len(graph.cycles) == 1
            best = min(best, time.perf_counter() - started)
    finally:
        gc.enable()
    return best


def test_graph_work_is_linear() -> None:
    small = _build_time(_long_chain(1_000))
    large = _build_time(_long_chain(10_000))
    assert large < small * 40, (small, large)  # 10x the size: linear ~10x, quadratic ~100x
