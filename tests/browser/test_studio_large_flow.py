"""The flow picture of a 100-node package (issue #34): readable, zoomable, drag to connect.

The package is generated from the CS201 example (``bench/studio_graph.py:large_package``: 31
questions with pools of two scenarios, follow-up branches, long titles, four end nodes). At
the first view every label is at least 12 px on screen and no two nodes' labels overlap; the
zoom buttons and keys work from the keyboard and say the level; a node dragged onto another
adds a transition that is autosaved; axe finds nothing. Every wait is on the page's state.
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from authoring.models import DraftPackage
from bench.studio_graph import large_package
from tests.browser.helpers import SignIn, axe_violations
from tests.factories import DraftPackageFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")
SIZE = 100
READABLE_ZOOM = 12 / 13


@pytest.fixture
def draft() -> DraftPackage:
    return DraftPackageFactory(document=large_package(SIZE))


def zoom_level(page: Page) -> Locator:
    return page.locator("#flow-zoom-level")


def flow_status(page: Page) -> Locator:
    return page.locator("#flow-status")


def open_studio(page: Page, sign_in: SignIn, draft: DraftPackage) -> None:
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/")
    expect(page.get_by_text("Schema hints on.")).to_be_visible()
    expect(zoom_level(page)).to_have_text(re.compile(r"^Zoom \d+ %$"))
    # The whole picture in the window, for the pointer.
    page.locator("#flow-graph").evaluate("(box) => box.scrollIntoView({ block: 'center' })")


def flow(page: Page, what: str) -> Any:
    return page.evaluate(f"() => window.vivaStudio.flow.{what}()")


def overlapping(boxes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (a["id"], b["id"])
        for a, b in combinations(boxes, 2)
        if a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]
    ]


def centre_on_page(page: Page, element_id: str) -> tuple[float, float]:
    """Where a node of the picture is on the page (its label box is centred on it)."""
    box = next(b for b in flow(page, "labelBoxes") if b["id"] == element_id)
    graph = page.locator("#flow-graph").bounding_box()
    assert graph is not None
    return graph["x"] + (box["x1"] + box["x2"]) / 2, graph["y"] + (box["y1"] + box["y2"]) / 2


def test_labels_are_legible_and_never_overlap(
    page: Page, sign_in: SignIn, draft: DraftPackage
) -> None:
    open_studio(page, sign_in, draft)
    sizes = flow(page, "labelSizes")
    assert sizes and min(sizes) >= 12, min(sizes)
    boxes = flow(page, "labelBoxes")
    assert len(boxes) == SIZE + len(draft.document["questionPools"])
    assert overlapping(boxes) == []
    # The candidate's order top to bottom: the start above the first question, the end below.
    tops = {b["id"]: b["y1"] for b in boxes}
    assert tops["n:warmup"] < tops["n:q-dijkstra-1"] < tops["n:q-dijkstra-2"] < tops["n:wrapup"]
    # A long title is shortened on the picture; the tooltip and the outline have it in full.
    page.mouse.move(*centre_on_page(page, "n:q-dijkstra-follow-1"), steps=5)
    expect(page.locator("#flow-graph")).to_have_attribute(
        "title", "Follow-up 1: negative weights · q-dijkstra-follow-1 · question"
    )
    long_title = draft.document["nodes"][
        next(i for i, n in enumerate(draft.document["nodes"]) if n["nodeId"] == "q-dijkstra-4")
    ]["title"]
    outline = page.get_by_role("navigation", name="Outline")
    expect(outline.get_by_role("button", name=re.compile(re.escape(long_title)))).to_be_visible()


def test_zoom_buttons_and_keys_work_from_the_keyboard(
    page: Page, sign_in: SignIn, draft: DraftPackage
) -> None:
    open_studio(page, sign_in, draft)
    zoom_out = page.get_by_role("button", name="Zoom out")
    zoom_out.focus()
    start = flow(page, "zoom")
    page.keyboard.press("Enter")
    expect(zoom_level(page)).to_contain_text("labels hidden, zoom in to read them")
    assert flow(page, "zoom") < start
    page.get_by_role("button", name="Whole flow").focus()
    page.keyboard.press("Enter")
    expect(flow_status(page)).to_contain_text("labels hidden")
    page.get_by_role("button", name="Fit, readable").focus()
    page.keyboard.press("Space")
    expect(zoom_level(page)).not_to_contain_text("labels hidden")
    assert min(flow(page, "labelSizes")) >= 12
    # The picture's own keys: + zooms in, - out, End walks to the last part and shows it.
    picture = page.locator("#flow-graph")
    picture.focus()
    readable = flow(page, "zoom")
    picture.press("+")
    expect(zoom_level(page)).not_to_have_text(f"Zoom {round(readable * 100)} %")
    assert flow(page, "zoom") > readable
    picture.press("-")
    expect(zoom_level(page)).to_have_text(f"Zoom {round(readable * 100)} %")
    picture.press("End")
    expect(flow_status(page)).to_contain_text("Selected question pool pool-31")
    box = next(b for b in flow(page, "labelBoxes") if b["id"] == "n:pool-31")
    size = picture.bounding_box()
    assert size is not None
    assert box["x1"] >= 0 and box["x2"] <= size["width"], box
    assert box["y1"] >= 0 and box["y2"] <= size["height"], box
    picture.press("Enter")
    expect(page.get_by_role("heading", name=re.compile(r"^Edit .*pool-31"))).to_be_visible()


def test_dragging_a_node_onto_another_adds_a_saved_transition(
    page: Page, sign_in: SignIn, draft: DraftPackage
) -> None:
    open_studio(page, sign_in, draft)
    source = centre_on_page(page, "n:warmup")
    target = centre_on_page(page, "n:q-dijkstra-follow-1")
    page.mouse.move(*source)
    page.mouse.down()
    page.mouse.move(*target, steps=12)
    expect(flow_status(page)).to_contain_text(
        "Release to add a transition from warmup to q-dijkstra-follow-1."
    )
    page.mouse.up()
    expect(flow_status(page)).to_contain_text("added from warmup to q-dijkstra-follow-1")
    expect(page.get_by_role("heading", name=re.compile(r"^Edit transition"))).to_be_visible()
    expect(page.locator("#autosave-status")).to_have_text("All changes saved")
    saved = DraftPackage.objects.get(pk=draft.pk).document
    warmup = next(n for n in saved["nodes"] if n["nodeId"] == "warmup")
    assert [t["targetNodeId"] for t in warmup["transitions"]] == [
        "q-dijkstra-1",
        "q-dijkstra-follow-1",
    ]


def test_the_large_flow_passes_axe(page: Page, sign_in: SignIn, draft: DraftPackage) -> None:
    open_studio(page, sign_in, draft)
    violations = axe_violations(page, impacts=ALL_IMPACTS)
    assert violations == [], violations
