"""Transition labels stay legible where a node has several transitions (issue #34).

The studio opens a shipped example at its readable view; for a node with three to seven
outgoing transitions (some to the same node, drawn as parallel curves; five and seven are the
cs201 example's question with transitions added, more than four to the next rank), the labels
Cytoscape draws are measured through its public API (``renderedBoundingBox`` of each edge,
labels only): each is shown at a legible size, no two of them overlap, and none is hidden under
a node. Every wait is on the page's state.
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import SignIn, axe_violations, screenshot
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MEASURE = """(nodeId) => {
  const cy = window.vivaStudio.flow.cy();
  const labelOnly = { includeNodes: false, includeEdges: false, includeLabels: true,
    includeMainLabels: true, includeSourceLabels: false, includeTargetLabels: false,
    includeOverlays: false, includeUnderlays: false };
  const box = (b) => ({ x1: b.x1, y1: b.y1, x2: b.x2, y2: b.y2 });
  const edges = cy.getElementById("n:" + nodeId).outgoers("edge");
  return {
    zoom: cy.zoom(),
    labels: edges.map((e) => ({
      id: e.id(), text: e.style("label"), fontPx: parseFloat(e.style("font-size")) * cy.zoom(),
      box: box(e.renderedBoundingBox(labelOnly)),
    })),
    nodes: cy.nodes().map((n) => ({ id: n.id(), box: box(n.renderedBoundingBox({
      includeLabels: false, includeOverlays: false, includeUnderlays: false })) })),
  };
}"""


# Transitions added (before the node's last, its "always") for five and seven: two more to the
# pool (five parallel curves), then two to another node of the next rank.
EXTRA_TRANSITIONS = [
    ("pool-scenario", {"type": "evidence_satisfied", "targetIds": ["tgt-greedy-choice"]}),
    ("pool-scenario", {"type": "time_elapsed", "seconds": 600}),
    ("end-terminated", {"type": "time_elapsed", "seconds": 1200}),
    ("end-terminated", {"type": "turn_count_reached", "count": 20}),
]


def document_with(example: str, node_id: str, count: int) -> dict[str, Any]:
    """The shipped example, its node `node_id` given `count` transitions (added as above)."""
    document = example_document(example)
    node = next(n for n in document["nodes"] if n["nodeId"] == node_id)
    transitions = node["transitions"]
    extra = [
        {"id": f"{node_id}-extra-{i}", "targetNodeId": target, "condition": condition}
        for i, (target, condition) in enumerate(EXTRA_TRANSITIONS[: count - len(transitions)])
    ]
    node["transitions"] = [*transitions[:-1], *extra, transitions[-1]]
    assert len(node["transitions"]) == count
    return document


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]


@pytest.mark.parametrize(
    ("example", "node_id", "count"),
    [
        ("hosp210-hotel-breakfast-scenario", "q-options", 4),
        ("med305-chest-pain-station", "q-history", 4),
        ("cs201-graph-algorithms", "q-dijkstra", 3),
        ("cs201-graph-algorithms", "q-dijkstra", 5),
        ("cs201-graph-algorithms", "q-dijkstra", 7),
    ],
)
def test_the_transition_labels_of_a_node_do_not_overlap(
    page: Page, sign_in: SignIn, example: str, node_id: str, count: int
) -> None:
    draft = DraftPackageFactory(
        owner=AuthorFactory(), document=document_with(example, node_id, count)
    )
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/")
    expect(page.locator("#flow-zoom-level")).to_have_text(re.compile(r"^Zoom \d+ %$"))
    measured: dict[str, Any] = page.evaluate(MEASURE, node_id)
    labels = measured["labels"]
    assert len(labels) == count, labels
    for label in labels:
        assert label["text"], label  # drawn, not hidden at this zoom
        assert label["fontPx"] >= 12, label
        assert label["box"]["x2"] > label["box"]["x1"], label
    crowded = [
        (a["id"], b["id"]) for a, b in combinations(labels, 2) if overlap(a["box"], b["box"])
    ]
    assert crowded == [], (crowded, labels)
    covered = [
        (label["id"], n["id"])
        for label in labels
        for n in measured["nodes"]
        if overlap(label["box"], n["box"])
    ]
    assert covered == [], (covered, labels)
    screenshot(page, f"edge-labels-{node_id}-{count}")
    assert axe_violations(page, impacts=("minor", "moderate", "serious", "critical")) == []
