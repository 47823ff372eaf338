"""The question bank in the studio (issue #34): an author saves a question of one package to the
bank, opens another package, searches the bank, previews and adds the question, saves, and the
stored draft holds the node with its evidence targets; the dialog is keyboard-operable and
axe-clean, in English and for a German author (templates in the package's language).

Elements are found by role, label and accessible name; every wait is on the page's state.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from authoring.models import DraftPackage
from authoring.services import bank_entry_save, draft_create
from tests.browser.helpers import SignIn, axe_violations, screenshot
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")


def no_violations(page: Page) -> None:
    violations = axe_violations(page, impacts=ALL_IMPACTS)
    assert violations == [], violations


def outline_node(page: Page, node_id: str) -> Locator:
    outline = page.get_by_role("navigation", name="Outline")
    return outline.get_by_role("button", name=re.compile(rf"· {re.escape(node_id)}$"))


def bank_dialog(page: Page, name: str = "Add a question from the bank") -> Locator:
    return page.get_by_role("dialog", name=name)


def test_an_author_reuses_a_question_from_the_bank_in_another_package(
    page: Page, sign_in: SignIn
) -> None:
    author = AuthorFactory()
    source = draft_create(owner=author, document=example_document())
    target = draft_create(
        owner=author, document=example_document("hosp210-hotel-breakfast-scenario")
    )
    sign_in(author)

    # Package one: the Dijkstra question goes to the bank from its node form.
    page.goto(f"/studio/{source.id}/")
    outline_node(page, "q-dijkstra").click()
    save_form = page.get_by_role("form", name="Save to question bank")
    expect(save_form).to_be_visible()
    expect(save_form.get_by_label("Title in the bank")).to_have_value("Dijkstra's algorithm")
    save_form.get_by_label("Title in the bank").fill("Dijkstra walkthrough")
    save_form.get_by_label("Tags (separated by commas)").fill("graphs, core")
    save_form.get_by_role("button", name="Save to question bank").click()
    expect(save_form.get_by_role("status")).to_have_text(
        "Saved “Dijkstra walkthrough” to the question bank."
    )

    # Package two: search the bank, preview, add.
    page.goto(f"/studio/{target.id}/")
    expect(page.get_by_role("complementary", name="Validation report")).to_contain_text("Passes.")
    opener = page.get_by_role("button", name="Add a question from the bank")
    opener.click()
    dialog = bank_dialog(page)
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("Words")).to_be_focused()
    expect(dialog.get_by_role("radio", name="Explain a concept")).to_be_visible()
    dialog.get_by_label("Words").fill("dijkstra greedy")
    page.keyboard.press("Enter")
    expect(dialog.get_by_role("status")).to_have_text("1 saved question(s) found.")
    dialog.get_by_label("Tag", exact=True).select_option("graphs")
    choice = dialog.get_by_role("radio", name=re.compile(r"^Dijkstra walkthrough"))
    expect(choice).to_be_visible()
    choice.check()
    preview = dialog.get_by_role("region", name="Preview")
    expect(preview).to_contain_text("It is added as node q-dijkstra after q-options.")
    expect(preview).to_contain_text("Greedy selection of the closest unsettled vertex")
    expect(preview).to_contain_text("Learning outcomes added to this package: LO2-2")
    screenshot(page, "bank-preview")
    no_violations(page)
    dialog.get_by_role("button", name="Add this question").click()
    expect(dialog).to_be_hidden()
    expect(opener).to_be_focused()
    expect(page.locator("#flow-status")).to_have_text(
        "“Dijkstra walkthrough” added as node q-dijkstra."
    )
    expect(
        page.get_by_role("heading", name="Edit question node q-dijkstra (Dijkstra's algorithm)")
    ).to_be_visible()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#action-status")).to_have_text(re.compile(r"^Saved \(revision \d+\)\.$"))
    expect(page.get_by_role("complementary", name="Validation report")).to_contain_text("Passes.")

    stored = DraftPackage.objects.get(pk=target.pk).document
    node = next(n for n in stored["nodes"] if n["nodeId"] == "q-dijkstra")
    original = next(n for n in example_document()["nodes"] if n["nodeId"] == "q-dijkstra")
    assert [t["id"] for t in node["evidenceTargets"]] == [
        t["id"] for t in original["evidenceTargets"]
    ]
    assert (
        node["evidenceTargets"][0]["rubricDescriptor"]
        == (original["evidenceTargets"][0]["rubricDescriptor"])
    )
    assert {c for t in node["evidenceTargets"] for c in t["markingCriteria"]} == {"LO2-2"}
    q_options = next(n for n in stored["nodes"] if n["nodeId"] == "q-options")
    assert "q-dijkstra" in {t["targetNodeId"] for t in q_options["transitions"]}

    # The owner shares the saved question, then deletes it; Escape closes the dialog and gives
    # the focus back.
    opener.click()
    dialog = bank_dialog(page)
    dialog.get_by_role("radio", name=re.compile(r"^Dijkstra walkthrough")).check()
    mine = dialog.get_by_role("group", name="Your saved question")
    mine.get_by_label("Shared with every author").check()
    expect(dialog.get_by_role("status")).to_have_text(
        "“Dijkstra walkthrough” is now shared with every author."
    )
    no_violations(page)
    mine.get_by_role("button", name="Delete “Dijkstra walkthrough” from the bank").click()
    expect(dialog.get_by_role("status")).to_have_text(
        "Deleted “Dijkstra walkthrough” from the bank."
    )
    expect(dialog.get_by_role("radio", name=re.compile(r"^Dijkstra walkthrough"))).to_have_count(0)
    expect(dialog.get_by_label("Words")).to_be_focused()
    page.keyboard.press("Escape")
    expect(bank_dialog(page)).to_be_hidden()
    expect(opener).to_be_focused()


@contextmanager
def german_page(page: Page, browser: Browser, server: str) -> Iterator[Page]:
    """A page of a de-DE browser signed in as ``page``'s user (a context of its own)."""
    context = browser.new_context(
        base_url=server, viewport={"width": 1280, "height": 900}, locale="de-DE"
    )
    try:
        context.add_cookies(page.context.cookies())
        yield context.new_page()
    finally:
        context.close()


def test_a_german_author_adds_a_german_template(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    draft = DraftPackageFactory(document=example_document("cs201-graph-algorithms.de"))
    sign_in(draft.owner)
    with german_page(page, browser, live_asgi_server) as german:
        german.goto(f"/studio/{draft.id}/")
        expect(german.locator("html")).to_have_attribute("lang", "de")
        german.get_by_role("button", name="Eine Frage aus der Fragensammlung hinzufügen").click()
        dialog = bank_dialog(german, "Eine Frage aus der Fragensammlung hinzufügen")
        expect(dialog).to_be_visible()
        expect(dialog.get_by_role("status")).to_have_text("Keine gespeicherte Frage passt.")
        dialog.get_by_role("radio", name="Ein Konzept erklären").check()
        preview = dialog.get_by_role("region", name="Vorschau")
        expect(preview).to_contain_text("Frage: Können Sie [das Konzept] in eigenen Worten")
        no_violations(german)
        dialog.get_by_role("button", name="Diese Frage hinzufügen").click()
        expect(dialog).to_be_hidden()
        expect(german.locator("#flow-status")).to_contain_text("explain-concept")
        save_form = german.get_by_role("form", name="In der Fragensammlung speichern")
        expect(save_form).to_be_visible()
        no_violations(german)


def test_the_owner_changes_a_saved_questions_title_and_tags_from_the_keyboard(
    page: Page, sign_in: SignIn
) -> None:
    author = AuthorFactory()
    draft = draft_create(owner=author, document=example_document())
    entry = bank_entry_save(owner=author, draft=draft, node_id="q-dijkstra", tags=["graphs"])
    sign_in(author)
    page.goto(f"/studio/{draft.id}/")
    expect(page.get_by_role("complementary", name="Validation report")).to_contain_text("Passes.")
    page.get_by_role("button", name="Add a question from the bank").click()
    dialog = bank_dialog(page)
    expect(dialog.get_by_role("status")).to_have_text("1 saved question(s) found.")
    dialog.get_by_role("radio", name=re.compile(r"^Dijkstra's algorithm")).check()
    mine = dialog.get_by_role("group", name="Your saved question")
    title = mine.get_by_label("Title in the bank")
    tags = mine.get_by_label("Tags (separated by commas)")
    expect(title).to_have_value("Dijkstra's algorithm")
    expect(tags).to_have_value("graphs")
    no_violations(page)

    # A blank title is refused in the page; nothing is sent.
    title.focus()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.press("Delete")
    page.keyboard.press("Enter")
    expect(dialog.get_by_role("status")).to_have_text(
        "Not changed: a saved question needs a title."
    )
    expect(title).to_be_focused()

    # Typed, tabbed and submitted with Enter.
    page.keyboard.type("Shortest paths, explained")
    page.keyboard.press("Tab")
    expect(tags).to_be_focused()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("Graph Theory,  exam 2027 , graphs")
    page.keyboard.press("Tab")
    expect(mine.get_by_role("button", name="Save title and tags")).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog.get_by_role("status")).to_have_text(
        "Saved the title and tags of “Shortest paths, explained”."
    )
    # The choice, the delete button and the fields show what is stored.
    expect(
        dialog.get_by_role("radio", name=re.compile(r"^Shortest paths, explained"))
    ).to_be_checked()
    expect(tags).to_have_value("graph-theory, exam-2027, graphs")
    expect(
        mine.get_by_role("button", name="Delete “Shortest paths, explained” from the bank")
    ).to_be_visible()
    no_violations(page)
    entry.refresh_from_db()
    assert (entry.title, entry.tags) == (
        "Shortest paths, explained",
        ["graph-theory", "exam-2027", "graphs"],
    )
    assert entry.source_node_id == "q-dijkstra"  # the node and its provenance stay

    # The new tag finds it.
    dialog.get_by_label("Tag", exact=True).select_option("exam-2027")
    expect(dialog.get_by_role("status")).to_have_text("1 saved question(s) found.")
    expect(
        dialog.get_by_role("radio", name=re.compile(r"^Shortest paths, explained"))
    ).to_be_visible()


def test_another_authors_shared_question_offers_no_title_and_tags_form(
    page: Page, sign_in: SignIn
) -> None:
    owner = AuthorFactory()
    draft = draft_create(owner=owner, document=example_document())
    bank_entry_save(owner=owner, draft=draft, node_id="q-dijkstra", shared=True)
    other = AuthorFactory()
    mine = draft_create(owner=other, document=example_document("hosp210-hotel-breakfast-scenario"))
    sign_in(other)
    page.goto(f"/studio/{mine.id}/")
    page.get_by_role("button", name="Add a question from the bank").click()
    dialog = bank_dialog(page)
    dialog.get_by_role("radio", name=re.compile(r"^Dijkstra's algorithm")).check()
    expect(dialog.get_by_role("region", name="Preview")).to_contain_text("Evidence targets:")
    expect(dialog.get_by_role("group", name="Your saved question")).to_have_count(0)
    expect(dialog.get_by_label("Title in the bank")).to_have_count(0)


def test_a_german_author_retitles_a_saved_question(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    draft = DraftPackageFactory(document=example_document("cs201-graph-algorithms.de"))
    entry = bank_entry_save(owner=draft.owner, draft=draft, node_id="q-dijkstra")
    sign_in(draft.owner)
    with german_page(page, browser, live_asgi_server) as german:
        german.goto(f"/studio/{draft.id}/")
        german.get_by_role("button", name="Eine Frage aus der Fragensammlung hinzufügen").click()
        dialog = bank_dialog(german, "Eine Frage aus der Fragensammlung hinzufügen")
        dialog.get_by_role("radio", name=re.compile(re.escape(entry.title))).check()
        mine = dialog.get_by_role("group", name="Ihre gespeicherte Frage")
        mine.get_by_label("Titel in der Fragensammlung").fill("Kürzeste Wege")
        mine.get_by_label("Schlagwörter (durch Kommas getrennt)").fill("Graphen")
        mine.get_by_role("button", name="Titel und Schlagwörter speichern").click()
        expect(dialog.get_by_role("status")).to_have_text(
            "Titel und Schlagwörter von „Kürzeste Wege“ gespeichert."
        )
        no_violations(german)
    entry.refresh_from_db()
    assert (entry.title, entry.tags) == ("Kürzeste Wege", ["graphen"])
