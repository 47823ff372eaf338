"""The studio saves the draft by itself and warns before unsaved work is left behind (issue #34,
"Unsaved work discarded").

The author types into a form as people do (a key every 40 ms) and never clicks Save: the draft
is saved a short while after the typing stops, and before the preview or the dry-run page is
opened. Leaving with edits not yet saved asks first (the browser's ``beforeunload``
confirmation); leaving with everything saved does not. A save refused because someone else
saved first (409) is merged with their version: saved at once when they changed other places,
and, where both changed the same place, nothing is saved over their work until the author
chooses.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Dialog, Locator, Page, expect

from authoring.models import DraftPackage
from authoring.services import draft_save
from tests.browser.helpers import SignIn, axe_violations
from tests.factories import DraftPackageFactory, example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEY_DELAY_MS = 40
TITLE = "Priority queues in Dijkstra's algorithm"


def form(page: Page) -> Locator:
    return page.get_by_role("region", name="Edit", exact=False)


def autosave_status(page: Page) -> Locator:
    return page.locator("#autosave-status")


def open_question(page: Page, sign_in: SignIn, draft: DraftPackage) -> Locator:
    """The studio on ``draft`` with the q-dijkstra node's form open; returns its Title field."""
    sign_in(draft.owner)
    # The presence heartbeats are answered (with the revision the page loaded) before a test's
    # other client saves: the next one, 20 s later, would bring that save in by itself
    # (test_studio_presence), and these tests are about a save that meets it first. Opening a
    # node beats once more, half a second after the click: a loaded machine that took longer to
    # start typing brought their save in there, cleanly, and there was no clash to meet.
    with page.expect_response(lambda r: r.url.endswith("/presence/") and r.ok):
        page.goto(f"/studio/{draft.id}/")
    expect(page.get_by_text("Schema hints on.")).to_be_visible()
    with page.expect_response(lambda r: r.url.endswith("/presence/") and r.ok):
        page.get_by_role("navigation", name="Outline").get_by_role(
            "button", name=re.compile(r"· q-dijkstra\b")
        ).click()
    return form(page).get_by_label("Title", exact=True)


def type_into(field: Locator, text: str) -> None:
    field.click()
    field.press("Control+a")
    field.press_sequentially(text, delay=KEY_DELAY_MS)


def saved_title(draft_id: Any) -> str | None:
    document = DraftPackage.objects.get(pk=draft_id).document
    node = next(n for n in document["nodes"] if n["nodeId"] == "q-dijkstra")
    return node.get("title")


def record_dialogs(page: Page) -> list[str]:
    """Accept every dialog (so the navigation goes on) and remember its type."""
    seen: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        seen.append(dialog.type)
        dialog.accept()

    page.on("dialog", on_dialog)
    return seen


def test_typing_is_saved_without_clicking_save(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    title = open_question(page, sign_in, draft)
    status = autosave_status(page)
    expect(status).to_have_attribute("aria-live", "polite")
    type_into(title, TITLE)
    # No Save click: the draft is saved after the typing stops.
    expect(page.locator("#revision")).to_have_text("2")
    expect(status).to_have_text("All changes saved")
    assert saved_title(draft.id) == TITLE
    assert DraftPackage.objects.get(pk=draft.id).revision == 2


def test_the_status_never_says_saved_over_typing_not_yet_in_the_draft(
    page: Page, sign_in: SignIn
) -> None:
    """A form field's typing reaches the draft after a short pause; until then the status says
    "Unsaved changes", never "All changes saved" (it did for that pause, longer on a busy
    machine, so a quick look or a test could take a half-typed title for saved)."""
    draft = DraftPackageFactory()
    title = open_question(page, sign_in, draft)
    status = autosave_status(page)
    expect(status).to_have_text("All changes saved")
    title.click()
    title.press("End")
    seen = []
    for key in " (revised)":
        page.keyboard.type(key)
        seen.append(status.text_content())
    assert "All changes saved" not in seen, seen
    expect(status).to_have_text("All changes saved")
    assert (saved_title(draft.id) or "").endswith(" (revised)")


@pytest.mark.parametrize(
    ("link", "heading"),
    [("Preview as a candidate", "Preview"), ("Dry run and publish…", "Publish")],
)
def test_typing_then_leaving_by_a_studio_link_saves_first(
    page: Page, sign_in: SignIn, link: str, heading: str
) -> None:
    draft = DraftPackageFactory()
    title = open_question(page, sign_in, draft)
    dialogs = record_dialogs(page)
    type_into(title, TITLE)
    # Straight after the last key, well before the autosave's pause is over.
    page.get_by_role("link", name=link).click()
    expect(page).not_to_have_url(re.compile(rf"/studio/{draft.id}/$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text(heading)
    assert saved_title(draft.id) == TITLE
    assert dialogs == []  # saved before leaving, so nothing to warn about


def test_leaving_with_unsaved_edits_asks_first(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    title = open_question(page, sign_in, draft)
    dialogs = record_dialogs(page)
    # The save cannot reach the server: the edits stay unsaved (and are kept).
    page.route(re.compile(rf".*/packages/{draft.id}/$"), lambda route: route.abort())
    type_into(title, TITLE)
    expect(autosave_status(page)).to_contain_text("Not saved:")
    expect(title).to_have_value(TITLE)
    page.goto("/studio/")
    assert dialogs == ["beforeunload"]
    assert saved_title(draft.id) != TITLE


def test_leaving_with_everything_saved_does_not_ask(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    title = open_question(page, sign_in, draft)
    dialogs = record_dialogs(page)
    type_into(title, TITLE)
    expect(page.locator("#revision")).to_have_text("2")
    expect(autosave_status(page)).to_have_text("All changes saved")
    page.goto("/studio/")
    expect(page.get_by_role("heading", name="Authoring studio")).to_be_visible()
    assert dialogs == []


def test_a_failed_save_keeps_the_edits_and_tries_again(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    title = open_question(page, sign_in, draft)
    refused: list[str] = []

    def offline(route: Any) -> None:
        refused.append(route.request.method)
        route.abort("internetdisconnected")

    pattern = re.compile(rf".*/packages/{draft.id}/$")
    page.route(pattern, offline)
    type_into(title, TITLE)
    status = autosave_status(page)
    expect(status).to_contain_text("Not saved:")
    assert "PUT" in refused
    page.unroute(pattern)
    # Back online: the retry saves what was typed, nothing was dropped.
    expect(status).to_have_text("All changes saved", timeout=20_000)
    assert saved_title(draft.id) == TITLE


def test_a_save_refused_as_stale_is_merged_with_their_changes_and_saved(
    page: Page, sign_in: SignIn
) -> None:
    """Issue #34, "Working together": someone else saved first (the save is refused, 409); their
    change and the author's touch different places, so both are kept and saved, with no
    "copy the JSON and reload"."""
    draft = DraftPackageFactory()
    title = open_question(page, sign_in, draft)
    # Another client saves first; this page still has revision 1.
    theirs = example_document()
    theirs["metadata"]["title"] = "Their version"
    draft_save(draft=draft, document=theirs, expected_revision=1)

    type_into(title, TITLE)
    expect(autosave_status(page)).to_have_text("Merged and saved", timeout=15_000)
    expect(page.locator("#action-status")).to_contain_text("merged with yours and saved")
    stored = DraftPackage.objects.get(pk=draft.id)
    assert stored.revision == 3
    assert stored.document["metadata"]["title"] == "Their version"
    assert saved_title(draft.id) == TITLE
    expect(page.locator("#revision")).to_have_text("3")
    # Typing on is saved as usual on top of the merge.
    title.press_sequentially(" and heaps", delay=KEY_DELAY_MS)
    expect(page.locator("#revision")).to_have_text("4", timeout=15_000)
    assert saved_title(draft.id) == TITLE + " and heaps"


@pytest.mark.parametrize("choice", ["mine", "theirs"])
def test_a_clash_with_their_save_overwrites_nothing_until_the_author_chooses(
    page: Page, sign_in: SignIn, choice: str
) -> None:
    """Both changed the question's title: their save is not overwritten, autosave stops, the
    clash is named in words with both values, leaving asks first; the author keeps theirs or
    their own, and the choice is saved with the rest merged."""
    # (The dialog itself: test_leaving_with_unsaved_edits_asks_first.)
    draft = DraftPackageFactory()
    title = open_question(page, sign_in, draft)
    theirs = example_document()
    theirs["metadata"]["title"] = "Their version"
    next(n for n in theirs["nodes"] if n["nodeId"] == "q-dijkstra")["title"] = "Their title"
    draft_save(draft=draft, document=theirs, expected_revision=1)

    type_into(title, TITLE)
    clash = page.get_by_role("region", name="Someone else saved this package meanwhile")
    expect(clash).to_be_visible(timeout=15_000)
    expect(clash.get_by_role("listitem")).to_have_text(
        f"node q-dijkstra, title: yours “{TITLE}”, theirs “Their title”."
    )
    expect(autosave_status(page)).to_contain_text("Not saved: someone else changed the same places")
    assert axe_violations(page) == []
    page.wait_for_timeout(2500)  # longer than the autosave delay: nothing is saved meanwhile
    stored = DraftPackage.objects.get(pk=draft.id)
    assert (stored.revision, saved_title(draft.id)) == (2, "Their title")
    # Leaving now would lose the author's text: the page asks first.
    asks = (
        "() => { const e = new Event('beforeunload', {cancelable: true});"
        " window.dispatchEvent(e); return e.defaultPrevented; }"
    )
    assert page.evaluate(asks) is True

    label = (
        "Keep mine in these places and save"
        if choice == "mine"
        else "Take theirs in these places and save"
    )
    clash.get_by_role("button", name=label).click()
    expect(autosave_status(page)).to_have_text("All changes saved", timeout=15_000)
    stored = DraftPackage.objects.get(pk=draft.id)
    # Theirs taken in the one place the author changed leaves nothing of the author's to save.
    assert stored.revision == (3 if choice == "mine" else 2)
    assert stored.document["metadata"]["title"] == "Their version"
    assert saved_title(draft.id) == (TITLE if choice == "mine" else "Their title")
    expect(clash).to_be_hidden()
    expect(title).to_have_value(TITLE if choice == "mine" else "Their title")


def test_save_is_reachable_without_scrolling(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    title = open_question(page, sign_in, draft)
    save = page.get_by_role("button", name="Save", exact=True)
    title.focus()
    page.evaluate("() => window.scrollTo(0, 0)")
    expect(save).to_be_in_viewport()
    expect(autosave_status(page)).to_be_in_viewport()
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    expect(save).to_be_in_viewport()
    expect(autosave_status(page)).to_be_in_viewport()
