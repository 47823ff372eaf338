"""No id is typed by hand in the studio's forms (issue #34, "pickers instead of typed ids").

The author opens every part of a shipped package in the form (the package settings, each node,
each transition, each pool, from the outline) and the test reads the form's controls: every
field whose value names an id of the package (the start node, a transition's target, a pool's
nodes, the evidence targets a condition or completion needs, a target's marking criteria) is a
select or a set of checkboxes of the existing ids, never a text field; and the pickers offer
exactly the ids the package has. Every wait is on the page's state.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import SignIn
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Fields (the last step of their path) whose values are ids the package defines elsewhere.
ID_REFERENCES = re.compile(
    r"-(initialNodeId|targetNodeId|nodeIds|targetIds|requiredEvidence|"
    r"requiredEvidenceTargetIds|markingCriteria)(-\d+)?$"
)

CONTROLS = """() => [...document.querySelectorAll("#flow-form :is(input, textarea, select)")]
  .map((c) => ({ id: c.id, tag: c.tagName.toLowerCase(), type: c.type,
  options: c.tagName === "SELECT" ? [...c.options].map((o) => o.value) : null,
  label: c.labels && c.labels[0] ? c.labels[0].textContent : "" }))"""


@pytest.mark.parametrize(
    "example", ["cs201-graph-algorithms", "med305-chest-pain-station", "cs201-own-report"]
)
def test_every_id_reference_in_the_forms_is_a_picker(
    page: Page, sign_in: SignIn, example: str
) -> None:
    document = example_document(example)
    node_ids = {n["nodeId"] for n in document["nodes"]}
    pool_ids = {p["poolId"] for p in document.get("questionPools", [])}
    draft = DraftPackageFactory(owner=AuthorFactory(), document=document)
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/")
    outline = page.get_by_role("navigation", name="Outline")
    expect(outline.get_by_role("button").first).to_be_visible()
    parts = outline.get_by_role("button").count()
    assert parts > len(node_ids)  # nodes, transitions and pools

    typed: list[tuple[str, str]] = []
    pickers: list[dict[str, Any]] = []

    def read(where: str) -> None:
        for control in page.evaluate(CONTROLS):
            if not ID_REFERENCES.search(control["id"]):
                continue
            if control["tag"] == "select":
                pickers.append(control)
            else:
                typed.append((where, control["id"]))

    heading = page.locator("#flow-form-heading")
    page.get_by_role("button", name="Package settings").click()
    expect(heading).to_have_text("Edit package settings")
    read("package settings")
    for index in range(parts):
        button = outline.get_by_role("button").nth(index)
        where = button.inner_text()
        before = heading.inner_text()
        button.click()
        expect(heading).not_to_have_text(before)
        expect(page.locator("#flow-form :is(input, select, textarea)").first).to_be_attached()
        read(where)

    assert typed == [], typed
    targets = [p for p in pickers if p["id"].endswith("-targetNodeId")]
    assert targets, pickers  # each transition's target is a select...
    for picker in targets:  # ...of the package's nodes and pools (and "choose" when unset)
        offered = {v for v in picker["options"] if v}
        assert offered <= node_ids | pool_ids, picker
        assert len(offered) >= len(node_ids | pool_ids) - 1, picker  # all but its own node
    start = [p for p in pickers if p["id"].endswith("-initialNodeId")]
    assert len(start) == 1 and document["initialNodeId"] in start[0]["options"], start
