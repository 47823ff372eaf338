"""Typed text is never lost in the studio's forms (issue #34, "Typed text lost").

The author types as people do (a key every 40 ms) and acts at once: an "Add ..." button or Save
right after the last key. The validation replies are slowed down by the network (each is held
back ~600 ms before it reaches the page), so they arrive while the author is still typing in a
field. What the server saved must be exactly what was typed, field by field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, Route, expect

from authoring.models import DraftPackage
from tests.browser.helpers import SignIn
from tests.factories import AuthorFactory, DraftPackageFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEY_DELAY_MS = 40
REPLY_DELAY_MS = 600


@pytest.fixture
def slow_validation(page: Page) -> Iterator[list[str]]:
    """Hold every validation reply back by REPLY_DELAY_MS (a slow network or a busy server).
    At the end, the route is removed with replies still held back ignored: a reply in flight
    when the page closed failed the next test's setup in a loaded CI run (TargetClosedError
    "while running route callback")."""
    seen: list[str] = []

    def hold_back(route: Route) -> None:
        response = route.fetch()
        seen.append(route.request.url)
        page.wait_for_timeout(REPLY_DELAY_MS)
        route.fulfill(response=response)

    page.route(re.compile(r".*/validate/$"), hold_back)
    yield seen
    page.unroute_all(behavior="ignoreErrors")


def form(page: Page) -> Locator:
    return page.get_by_role("region", name="Edit", exact=False)


def type_into(field: Locator, text: str) -> None:
    """Replace the field's text by typing, as an author does: select all, then key by key."""
    field.click()
    field.press("Control+a")
    field.press_sequentially(text, delay=KEY_DELAY_MS)


def save(page: Page, draft_id: Any) -> dict[str, Any]:
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#action-status")).to_contain_text("Saved (revision")
    return DraftPackage.objects.get(pk=draft_id).document


def open_studio(page: Page, sign_in: SignIn, draft: DraftPackage) -> None:
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/")
    expect(page.get_by_text("Schema hints on.")).to_be_visible()
    expect(
        page.get_by_role("navigation", name="Outline").get_by_role("button").first
    ).to_be_visible()


def test_learning_outcomes_typed_then_added_or_saved_at_once_are_kept(
    page: Page, sign_in: SignIn, slow_validation: list[str]
) -> None:
    author = AuthorFactory()
    sign_in(author)
    page.goto("/studio/")
    page.get_by_label("Or start an empty package titled").fill("Typing test")
    page.get_by_role("button", name="Create empty package").click()
    expect(page.get_by_text("Schema hints on.")).to_be_visible()
    draft = DraftPackage.objects.get(owner=author)
    page.get_by_role("button", name="Package settings").click()

    outcomes = [
        ("LO1", "Explain how Dijkstra's algorithm finds shortest paths."),
        ("LO2", "Compare breadth-first and depth-first search on a graph."),
        ("LO3", "Choose a suitable algorithm for a practical routing problem."),
    ]
    form(page).get_by_role("button", name="Add learning outcome").click()
    for number, (outcome_id, text) in enumerate(outcomes, start=1):
        group = form(page).get_by_role("group", name=re.compile(rf"^Learning outcome {number}\b"))
        type_into(group.get_by_label("Code (required)", exact=True), outcome_id)
        type_into(group.get_by_label("Outcome (required)", exact=True), text)
        if number < len(outcomes):
            # Straight after the last key: the next outcome.
            form(page).get_by_role("button", name="Add learning outcome").click()

    # Straight after the last key: Save.
    document = save(page, draft.id)
    assert document["metadata"]["learningOutcomes"] == [
        {"id": outcome_id, "text": text} for outcome_id, text in outcomes
    ]
    assert slow_validation, "the validation requests were not routed"


def test_rubric_levels_typed_then_the_next_level_added_at_once_are_kept(
    page: Page, sign_in: SignIn, slow_validation: list[str]
) -> None:
    draft = DraftPackageFactory()
    open_studio(page, sign_in, draft)
    page.get_by_role("navigation", name="Outline").get_by_role(
        "button", name=re.compile(r"· q-dijkstra\b")
    ).click()
    target = form(page).get_by_role("group", name="Evidence target 2: tgt-complexity")
    target.get_by_role("button", name="Add marking levels").click()
    # The four levels come at once, named after their place; this author begins with one and
    # adds the others one by one, each straight after typing the last.
    for level in ("Excellent", "Satisfactory", "Partial", "Absent"):
        group = target.get_by_role("group", name=level, exact=True)
        expect(group.get_by_label("Label (required)", exact=True)).to_have_value(level)
    for level in ("excellent", "partial", "absent"):
        target.get_by_role("button", name=f"Remove {level} of tgt-complexity").click()

    levels = {
        "satisfactory": (
            "Mostly right",
            "Gives the bound with a binary heap but not why it holds.",
        ),
        "partial": ("Partly right", "Calls it fast or quadratic with no reasoning about the heap."),
        "absent": ("Missing", "Says nothing about the running time or guesses without reason."),
    }
    names = list(levels)
    for i, (level, (label, description)) in enumerate(levels.items()):
        group = target.get_by_role("group", name=level.capitalize(), exact=True)
        type_into(group.get_by_label("Label (required)", exact=True), label)
        type_into(group.get_by_label("Description (required)", exact=True), description)
        if i + 1 < len(names):
            # Straight after the last key of the description: "Add partial", "Add absent".
            target.get_by_role("button", name="Add " + names[i + 1]).click()

    document = save(page, draft.id)
    node = next(n for n in document["nodes"] if n["nodeId"] == "q-dijkstra")
    saved = next(t for t in node["evidenceTargets"] if t["id"] == "tgt-complexity")
    assert saved["rubricDescriptor"]["levels"] == {
        level: {"label": label, "description": description}
        for level, (label, description) in levels.items()
    }


def test_typing_goes_on_while_validation_replies_arrive(
    page: Page, sign_in: SignIn, slow_validation: list[str]
) -> None:
    draft = DraftPackageFactory()
    open_studio(page, sign_in, draft)
    # A new question: its default prompt seed is replaced by typing at once, while the reply to
    # the validation of the new node is on its way.
    page.get_by_label("New node of kind").select_option(label="Question")
    page.get_by_label("with id").fill("q-typed")
    page.get_by_role("button", name="Add node").click()
    expect(page.get_by_role("heading", name="Edit question node q-typed")).to_be_visible()

    typed = {
        "Instructions for the examiner (required)": (
            "Ask the candidate how a priority queue speeds up Dijkstra."
        ),
        "Title": "Priority queues in Dijkstra's algorithm",
    }
    for label, text in typed.items():
        type_into(form(page).get_by_label(label, exact=True), text)

    form(page).get_by_role("button", name="Add evidence target").click()
    target = form(page).get_by_role("group", name=re.compile(r"^Evidence target 1\b"))
    label = "Relates the heap to the running time"
    description = "Candidate links each decrease-key to a heap operation."
    type_into(target.get_by_label("Label (required)", exact=True), label)
    type_into(target.get_by_label("Description", exact=True), description)
    # The form's fields still show what was typed before anything is saved.
    expect(
        form(page).get_by_label("Instructions for the examiner (required)", exact=True)
    ).to_have_value(typed["Instructions for the examiner (required)"])
    expect(target.get_by_label("Description", exact=True)).to_have_value(description)

    document = save(page, draft.id)
    node = next(n for n in document["nodes"] if n["nodeId"] == "q-typed")
    assert node["promptSeed"] == typed["Instructions for the examiner (required)"]
    assert node["title"] == typed["Title"]
    assert [(t["label"], t.get("description")) for t in node["evidenceTargets"]] == [
        (label, description)
    ]
    assert len(slow_validation) >= 3, slow_validation
