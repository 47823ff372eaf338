"""The studio without JSON: an author builds a package with the flow picture and the forms,
reads the dry run and publishes; axe finds no violation (of any impact) on any studio page.

Elements are found by role, label and accessible name; the JSON editor is never typed in (its
text is only read, to check what the forms wrote).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, expect

from authoring.models import DraftPackage
from publishing.models import PublishedVersion
from publishing.services import version_publish
from sessions.models import ExamSession
from tests.browser.exam_journey import (
    EXAMINER_TIMEOUT,
    answer,
    bot_runner,
    examiner_turns,
    wait_for_examiner,
)
from tests.browser.helpers import SignIn, axe_violations, screenshot
from tests.factories import AuthorFactory, DraftPackageFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")
PREVIEW_BANNER = "Preview — this attempt is not recorded for marking."
TITLE = "Hash tables viva"


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


def report(page: Page) -> Locator:
    return page.get_by_role("complementary", name="Validation report")


def form(page: Page) -> Locator:
    return page.get_by_role("region", name="Edit", exact=False)


def flow_status(page: Page) -> Locator:
    return page.locator("#flow-status")


def add_node(page: Page, kind: str, node_id: str) -> None:
    page.get_by_label("New node of kind").select_option(label=kind)
    page.get_by_label("with id").fill(node_id)
    page.get_by_role("button", name="Add node").click()
    expect(flow_status(page)).to_contain_text(f"node {node_id} added")
    expect(page.get_by_role("heading", name=f"Edit {kind.lower()} node {node_id}")).to_be_visible()


def add_target(page: Page, node_id: str, label: str) -> None:
    form(page).get_by_role("button", name="Add evidence target").click()
    target = form(page).get_by_role("group", name=f"Evidence target 1: {node_id}-target")
    target.get_by_label("Label (required)", exact=True).fill(label)


def no_violations(page: Page) -> None:
    violations = axe_violations(page, impacts=ALL_IMPACTS)
    assert violations == [], violations


def test_an_author_builds_a_two_question_package_with_the_flow_and_forms_and_publishes(
    page: Page, sign_in: SignIn
) -> None:
    author = AuthorFactory()
    sign_in(author)
    page.goto("/studio/")
    page.get_by_label("Or start an empty package titled").fill(TITLE)
    page.get_by_role("button", name="Create empty package").click()
    expect(page.get_by_role("heading", level=1, name=TITLE)).to_be_visible()
    expect(page.get_by_text("Schema hints on.")).to_be_visible()
    expect(page.get_by_text("No nodes yet.")).to_be_visible()

    # Question 1: added from the flow, filled in the form.
    add_node(page, "Question", "q1")
    expect(flow_status(page)).to_contain_text("as the first node")
    form(page).get_by_label("Title", exact=True).fill("Hash tables")
    form(page).get_by_label("Instructions for the examiner (required)", exact=True).fill(
        "Ask the candidate how a hash table resolves collisions."
    )
    form(page).get_by_label("Opening", exact=True).fill(
        "How does a hash table deal with two keys that collide?"
    )
    add_target(page, "q1", "Explains chaining or open addressing")
    # Question 2, connected from question 1 (selected), then the end, connected from question 2.
    add_node(page, "Question", "q2")
    form(page).get_by_label("Title", exact=True).fill("Load factor")
    form(page).get_by_label("Instructions for the examiner (required)", exact=True).fill(
        "Ask the candidate what the load factor of a hash table is and why it matters."
    )
    form(page).get_by_label("Opening", exact=True).fill("What is the load factor of a hash table?")
    add_target(page, "q2", "Relates load factor to lookup cost")
    add_node(page, "End", "finish")
    expect(report(page)).to_contain_text("Passes.")
    screenshot(page, "built")

    # The outline (the picture's text alternative) shows the flow in order.
    outline = page.get_by_role("navigation", name="Outline")
    expect(outline.get_by_role("listitem").first).to_contain_text(
        "start · question: Hash tables · q1"
    )
    expect(outline.get_by_role("button", name="→ q2 when always")).to_be_visible()
    expect(outline.get_by_role("button", name="→ finish when always")).to_be_visible()
    # The picture is operable from the keyboard: Home selects the first node, Enter edits it.
    page.get_by_role("application", name="Flow picture", exact=False).focus()
    page.keyboard.press("Home")
    expect(flow_status(page)).to_contain_text("Selected question node q1 (Hash tables)")
    page.keyboard.press("Enter")
    expect(form(page).get_by_label("Node name (required)", exact=True)).to_be_focused()
    # Ids are chosen, never typed: a transition's target is a choice among the nodes.
    outline.get_by_role("button", name="→ q2 when always").click()
    target = form(page).get_by_label("Goes to (required)", exact=True)
    expect(target).to_have_value("q2")
    assert target.locator("option").all_inner_texts() == ["q2", "finish"]
    outline.get_by_role("button", name="start · question: Hash tables · q1").click()

    # A finding is pinned on the field it concerns and goes away when the form fixes it.
    form(page).get_by_label("Opening", exact=True).fill("")
    opening = form(page).get_by_label("Opening", exact=True)
    expect(opening).to_have_attribute("aria-invalid", "true")
    expect(form(page).get_by_text("ADP-C003", exact=False).first).to_be_visible()
    opening.fill("How does a hash table deal with two keys that collide?")
    expect(report(page)).to_contain_text("Passes.")
    expect(opening).not_to_have_attribute("aria-invalid", "true")
    no_violations(page)

    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Saved")).to_contain_text("Saved (revision")
    draft = DraftPackage.objects.get(owner=author)
    nodes = {n["nodeId"]: n for n in draft.document["nodes"]}
    assert draft.document["initialNodeId"] == "q1"
    assert [t["targetNodeId"] for t in nodes["q1"]["transitions"]] == ["q2"]
    assert [t["targetNodeId"] for t in nodes["q2"]["transitions"]] == ["finish"]
    assert nodes["q2"]["evidenceTargets"][0]["label"] == "Relates load factor to lookup cost"
    assert nodes["finish"]["kind"] == "end"
    assert draft.last_report["result"] == "pass"

    # Preview as a candidate: the conversation beside what the controller decided.
    page.get_by_role("link", name="Preview as a candidate").click()
    expect(page.get_by_role("heading", level=1, name=f"Preview {TITLE}")).to_be_visible()
    conversation = page.get_by_role("log", name="Conversation")
    expect(conversation).to_contain_text("How does a hash table deal with two keys that collide?")
    panel = page.get_by_role("complementary", name="What the controller decided")
    expect(panel).to_contain_text("q1 (question)")
    page.get_by_label("Your answer").fill(
        "Collisions are handled by chaining or by open addressing in the table."
    )
    page.get_by_role("button", name="Send answer").click()
    expect(panel).to_contain_text("evidence positive: q1-target")
    expect(panel).to_contain_text("q1 → q2 by q1-to-q2")
    expect(conversation).to_contain_text("What is the load factor of a hash table?")
    page.get_by_role("group", name="Candidate commands").get_by_role(
        "button", name="Repeat the question"
    ).click()
    expect(panel).to_contain_text("command repeat accepted")
    no_violations(page)
    assert ExamSession.objects.count() == 0  # the studio rehearsal stores nothing

    # The same draft in the real exam room: a sandbox session with the real bot, never counted.
    page.get_by_role("button", name="Try in the exam room").click()
    page.get_by_role("radio", name="Text: type your answers").check()
    page.get_by_role("button", name="Go to the exam room").click()
    expect(page.get_by_role("note")).to_have_text(PREVIEW_BANNER)
    start = page.get_by_role("button", name="Start the exam")
    expect(start).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    start.click()
    wait_for_examiner(page, 0)
    assert any("two keys that collide" in turn for turn in examiner_turns(page))
    before = len(examiner_turns(page))
    answer(page, "Collisions are handled by chaining or by open addressing in the table.")
    wait_for_examiner(page, before)
    session = ExamSession.objects.get(candidate=author)
    assert session.is_preview and session.sitting.version.draft_id == draft.pk
    page.goto(f"/studio/{draft.pk}/")

    # The dry run on the publish page, then publish.
    page.get_by_role("link", name="Dry run and publish…").click()
    expect(page.get_by_role("heading", level=1, name=f"Publish {TITLE}")).to_be_visible()
    expect(page.get_by_role("heading", name="Dry run: 7 simulated candidates")).to_be_visible()
    nodes_table = page.get_by_role("table", name="Nodes:", exact=False)
    expect(nodes_table.get_by_role("row", name="q1", exact=False)).to_contain_text("7 / 7")
    no_violations(page)
    page.get_by_role("button", name="Publish revision", exact=False).click()
    expect(page.get_by_text("Published as version 1.")).to_be_visible()
    version = PublishedVersion.objects.get(draft=draft, is_preview=False)
    assert version.dry_run_report["runCount"] == 7
    assert json.loads(version.canonical_json)["nodes"][0]["nodeId"] == "q1"
    no_violations(page)
    screenshot(page, "published")


def test_the_flow_reflects_json_edits_and_findings_are_pinned_on_nodes(
    page: Page, sign_in: SignIn
) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/")
    expect(page.get_by_text("Schema hints on.")).to_be_visible()
    outline = page.get_by_role("navigation", name="Outline")
    expect(
        outline.get_by_role("button", name="question pool pool-scenario", exact=False)
    ).to_be_visible()
    # An edit in the JSON editor (through the studio's hook) shows in the outline with its finding.
    page.evaluate(
        """() => {
            const doc = window.vivaStudio.document();
            doc.nodes[1].transitions[0].targetNodeId = "nowhere";
            window.vivaStudio.editor.setText(JSON.stringify(doc, null, 2));
        }"""
    )
    expect(report(page)).to_contain_text("Rejected.")
    item = outline.get_by_role("button", name="→ nowhere when evidence", exact=False)
    expect(item).to_contain_text("error")
    item.click()
    # The finding is shown once, beside the field it concerns.
    target = form(page).get_by_label("Goes to (required)", exact=True)
    expect(target).to_have_attribute("aria-invalid", "true")
    expect(form(page).locator(".field-finding")).to_contain_text("nowhere")
    # The dry run needs a valid package: it says so, then runs once the edit is undone.
    page.get_by_role("button", name="Dry run what is in the editor").click()
    result = page.get_by_role("region", name="Dry run of the editor's package")
    expect(result).to_contain_text("Dry run not possible")
    page.evaluate(
        """() => {
            const doc = window.vivaStudio.document();
            doc.nodes[1].transitions[0].targetNodeId = "pool-scenario";
            window.vivaStudio.editor.setText(JSON.stringify(doc, null, 2));
        }"""
    )
    expect(report(page)).to_contain_text("Passes.")
    page.get_by_role("button", name="Dry run what is in the editor").click()
    expect(result).to_contain_text("Dry run: 14 simulated candidates")
    expect(result).to_contain_text("Transitions never fired: e-q1-pool-turns")
    no_violations(page)


@pytest.mark.parametrize("where", ["list", "editor", "publish", "versions"])
def test_no_accessibility_violation_of_any_impact_on_studio_pages(
    page: Page, sign_in: SignIn, where: str
) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    if where == "versions":
        version_publish(draft=draft, user=draft.owner)
    url = {
        "list": "/studio/",
        "editor": f"/studio/{draft.id}/",
        "publish": f"/studio/{draft.id}/publish/",
        "versions": f"/studio/{draft.id}/versions/",
    }[where]
    page.goto(url)
    if where == "editor":
        expect(page.get_by_text("Schema hints on.")).to_be_visible()
        page.get_by_role("navigation", name="Outline").get_by_role("button").nth(2).click()
    if where == "versions":
        page.get_by_text("Dry run stored with version 1").click()
    no_violations(page)
