"""The studio in a lecturer's words, and usable from the keyboard (issue #34, "Words").

Help texts, labels and findings in the forms say what a field means without JSON paths, rule
ids or JSON syntax; ids of the package (the language, the marking criteria) are chosen, not
typed; no two buttons of a form share a name; an "Add ..." button moves focus to what it added;
the flow picture's labels are at least 12 px; the versions page's diff and a German author's
editor page pass axe.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from authoring.models import DraftPackage
from authoring.services import draft_save
from publishing.services import version_publish
from tests.browser.helpers import SignIn, axe_violations
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")
# JSON paths and syntax, rule ids, camelCase field names: what a lecturer should not have to read.
JSON_SPEAK = re.compile(
    r"``|\[\]|[{}]|\b[A-Z]{2,4}-[A-Z]?\d{3}\b|\b[a-z]+[A-Z][a-zA-Z]*\b|\bIr Version\b"
)


def form(page: Page) -> Locator:
    return page.get_by_role("region", name="Edit", exact=False)


def outline(page: Page) -> Locator:
    return page.get_by_role("navigation", name="Outline")


def open_studio(page: Page, sign_in: SignIn, draft: DraftPackage) -> None:
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/")
    expect(page.get_by_text("Schema hints on.")).to_be_visible()
    expect(outline(page).get_by_role("button").first).to_be_visible()


def open_node(page: Page, node_id: str) -> None:
    outline(page).get_by_role("button", name=re.compile(rf"· {node_id}\b")).click()
    expect(page.get_by_role("heading", name=re.compile(rf"^Edit .*{node_id}"))).to_be_visible()


def words_of_form(page: Page) -> list[str]:
    """The labels, legends and help texts of the form on show."""
    return form(page).locator("label, legend, .field-description").all_inner_texts()


def test_help_texts_and_labels_speak_plain_words(page: Page, sign_in: SignIn) -> None:
    open_studio(page, sign_in, DraftPackageFactory())
    seen: dict[str, list[str]] = {}
    open_node(page, "q-dijkstra")
    seen["question"] = words_of_form(page)
    outline(page).get_by_role("button", name=re.compile(r"^→ pool-scenario")).first.click()
    seen["transition"] = words_of_form(page)
    page.get_by_role("button", name="Package settings").click()
    seen["package"] = words_of_form(page)
    for where, words in seen.items():
        assert words, where
        speaking_json = [w for w in words if JSON_SPEAK.search(w)]
        assert speaking_json == [], (where, speaking_json)


def test_findings_are_said_in_plain_words_once(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    open_studio(page, sign_in, draft)
    open_node(page, "q-dijkstra")
    # The node loses its transitions (NOD-003).
    for number in (3, 2, 1):
        form(page).get_by_role("button", name=f"Remove transition {number}").click()
    expect(page.locator("#report-summary")).to_contain_text("Rejected.")
    report = page.get_by_role("complementary", name="Validation report")
    messages = report.locator(".finding").all_inner_texts()
    assert messages and not [m for m in messages if "{" in m or "[" in m], messages
    go_buttons = report.get_by_role("button").all_inner_texts()
    assert go_buttons and not [b for b in go_buttons if "[" in b or "." in b], go_buttons
    # In the node's form, each finding is shown once (beside its field, or in the list).
    shown_at = form(page).locator(".finding, .field-finding")
    expect(shown_at.filter(has_text="NOD-003")).to_have_count(1)
    shown = form(page).locator(".finding, .field-finding").all_inner_texts()
    rule_ids = Counter(
        rule for text in shown for rule in re.findall(r"\b[A-Z]{2,4}-[A-Z]?\d{3}\b", text)
    )
    assert rule_ids and max(rule_ids.values()) == 1, shown


def test_the_language_is_a_picker_of_the_supported_languages(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    open_studio(page, sign_in, draft)
    page.get_by_role("button", name="Package settings").click()
    language = form(page).get_by_role("combobox", name=re.compile(r"^Language"))
    expect(language).to_have_value("en")
    assert set(language.locator("option").all_inner_texts()) >= {"English", "Deutsch", "Español"}
    language.select_option(label="Deutsch")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#action-status")).to_contain_text("Saved (revision")
    assert DraftPackage.objects.get(pk=draft.pk).document["metadata"]["language"] == "de"


def test_marking_criteria_are_chosen_among_the_learning_outcomes(
    page: Page, sign_in: SignIn
) -> None:
    draft = DraftPackageFactory()
    open_studio(page, sign_in, draft)
    open_node(page, "q-dijkstra")
    target = form(page).get_by_role("group", name="Evidence target 1: tgt-greedy-choice")
    criteria = target.get_by_role("group", name=re.compile(r"^Marking criteria", re.I))
    lo2 = criteria.get_by_role("checkbox", name=re.compile(r"Explain and analyse classic"))
    lo4 = criteria.get_by_role("checkbox", name=re.compile(r"Choose an appropriate graph"))
    expect(lo2).to_be_checked()
    expect(lo4).not_to_be_checked()
    lo4.check()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#action-status")).to_contain_text("Saved (revision")
    node = DraftPackage.objects.get(pk=draft.pk).document["nodes"][1]
    assert node["evidenceTargets"][0]["markingCriteria"] == ["LO2", "LO4"]


def test_a_new_learning_outcome_has_a_generated_id(page: Page, sign_in: SignIn) -> None:
    open_studio(page, sign_in, DraftPackageFactory())
    page.get_by_role("button", name="Package settings").click()
    form(page).get_by_role("button", name="Add learning outcome").click()
    group = form(page).get_by_role("group", name=re.compile(r"^Learning outcome 3\b"))
    outcome_id = group.get_by_role("textbox", name=re.compile(r"^Code\b"))
    expect(outcome_id).not_to_have_value("id")
    expect(outcome_id).to_have_value("LO5")  # LO2 and LO4 exist; the next free number


def test_no_two_buttons_of_a_node_form_share_a_name(page: Page, sign_in: SignIn) -> None:
    open_studio(page, sign_in, DraftPackageFactory())
    open_node(page, "q-dijkstra")
    names = Counter(
        form(page)
        .get_by_role("button")
        .evaluate_all(
            "(buttons) => buttons.map((b) => (b.getAttribute('aria-label') || b.textContent)"
            ".replace(/\\s+/g, ' ').trim())"
        )
    )
    assert [name for name, n in names.items() if n > 1] == [], names
    form(page).get_by_label("Connect to").select_option("wrapup")
    form(page).get_by_role("button", name="Add a transition to wrapup").click()
    expect(page.locator("#flow-status")).to_contain_text("added from q-dijkstra to wrapup")


def test_focus_moves_to_the_new_evidence_target(page: Page, sign_in: SignIn) -> None:
    open_studio(page, sign_in, DraftPackageFactory())
    open_node(page, "q-dijkstra")
    form(page).get_by_role("button", name="Add evidence target").click()
    target = form(page).get_by_role("group", name=re.compile(r"^Evidence target 4\b"))
    expect(target.get_by_role("textbox").first).to_be_focused()


def test_the_flow_picture_labels_are_at_least_12_px(page: Page, sign_in: SignIn) -> None:
    open_studio(page, sign_in, DraftPackageFactory())
    sizes = page.evaluate("() => window.vivaStudio.flow.labelSizes()")
    assert sizes and min(sizes) >= 12, sizes


def test_the_versions_diff_passes_axe(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    version_publish(draft=draft, user=draft.owner)
    document = example_document()
    document["nodes"][1]["evidenceTargets"][1]["label"] = "States the running time"
    draft = draft_save(draft=draft, document=document, expected_revision=1)
    version_publish(draft=draft, user=draft.owner)
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/versions/?from=1&to=2")
    changes = page.get_by_role("table", name="Changes by part of the package")
    expect(changes).to_contain_text("in q-dijkstra")
    expect(changes).not_to_contain_text("{{")
    violations = axe_violations(page, impacts=ALL_IMPACTS)
    assert violations == [], violations


def test_a_german_author_s_editor_and_co_authors_pass_axe(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    draft = DraftPackageFactory()
    draft.collaborators.add(AuthorFactory(username="lena"))
    sign_in(draft.owner)
    # The same author in a German browser.
    context = browser.new_context(
        base_url=live_asgi_server, viewport={"width": 1280, "height": 900}, locale="de-DE"
    )
    try:
        context.add_cookies(page.context.cookies())
        german = context.new_page()
        german.goto(f"/studio/{draft.id}/")
        expect(german.locator("html")).to_have_attribute("lang", "de")
        expect(german.locator("#schema-status")).not_to_be_empty()
        co_authors = german.locator("#collaborators")
        expect(co_authors.get_by_role("button", name="lena entfernen")).to_be_visible()
        violations = axe_violations(german, impacts=ALL_IMPACTS)
        assert violations == [], violations
        # The forms' help comes from the German catalogue.
        german.locator("#flow-package").click()
        expect(german.get_by_text("Die Sprache, in der die Prüfung geführt wird.")).to_be_visible()
    finally:
        context.close()
