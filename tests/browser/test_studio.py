"""The authoring studio in a real browser: the schema-aware editor, findings, save and publish.

Elements are found by role, label and accessible name only. The editor's selection is read through
``window.vivaStudio.editor`` (static/js/studio.js), the page's documented hook into the editor.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, Route, expect

from authoring.models import DraftPackage
from authoring.services import draft_save
from tests.browser.helpers import SignIn, axe_violations, eventually, screenshot
from tests.factories import AuthorFactory, DraftPackageFactory, example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CS201_TITLE = "CS201 Oral Examination: Graph Algorithms"
MAX_FOLLOW_UPS = "nodes[q-dijkstra].followUpPolicy.maxFollowUps"
MAX_FOLLOW_UPS_IN_WORDS = (
    "node q-dijkstra, follow-up questions, maximum number of follow-up questions"
)


def editor(page: Page) -> Locator:
    return page.get_by_role("textbox", name="Package JSON")


def report(page: Page) -> Locator:
    return page.get_by_role("complementary", name="Validation report")


def cursor(page: Page) -> dict[str, Any]:
    """Line number, column and line text at the editor's cursor, and the selected text."""
    return page.evaluate(
        """() => {
            const view = window.vivaStudio.editor.view;
            const range = view.state.selection.main;
            const line = view.state.doc.lineAt(range.head);
            return { line: line.number, column: range.head - line.from + 1, text: line.text,
                     selected: view.state.sliceDoc(range.from, range.to) };
        }"""
    )


def create_cs201_package(page: Page) -> None:
    page.goto("/studio/")
    page.get_by_label("Start from an example").select_option(label=CS201_TITLE)
    page.get_by_role("button", name="Create package").click()
    expect(page.get_by_role("heading", level=1, name=CS201_TITLE)).to_be_visible()


def test_author_fixes_a_finding_then_saves_and_publishes(page: Page, sign_in: SignIn) -> None:
    sign_in(AuthorFactory())
    create_cs201_package(page)
    expect(report(page)).to_contain_text("Passes.")
    publish = page.get_by_role("button", name="Publish")
    expect(publish).to_be_enabled()
    expect(editor(page)).to_be_visible()

    # Keyboard only: find the q-dijkstra follow-up limit with the editor's search (Ctrl+F) and
    # type over its value.
    editor(page).focus()
    page.keyboard.press("Control+Home")
    page.keyboard.press("Control+f")
    search = page.get_by_role("textbox", name="Find")
    expect(search).to_be_focused()
    page.keyboard.type('"maxFollowUps": 3')
    page.keyboard.press("Enter")  # selects the first match: q-dijkstra's
    screenshot(page, "search")
    page.keyboard.press("Escape")  # closes the search panel, back in the editor
    expect(editor(page)).to_be_focused()
    assert cursor(page)["selected"] == '"maxFollowUps": 3'
    page.keyboard.press("ArrowRight")  # collapse the selection after the 3
    page.keyboard.press("Backspace")
    page.keyboard.type("-1")
    assert (
        page.evaluate(
            """() => JSON.parse(window.vivaStudio.editor.getText())
            .nodes.find((n) => n.nodeId === "q-dijkstra").followUpPolicy.maxFollowUps"""
        )
        == -1
    )

    # The server's finding shows up in the report, with its rule id; Publish is off.
    expect(report(page)).to_contain_text("Rejected.")
    finding = report(page).get_by_role("listitem").filter(has_text=re.compile(r"^NOD-Q007 "))
    expect(finding).to_contain_text("maxFollowUps must be >= 0")
    expect(publish).to_be_disabled()
    expect(page.get_by_role("button", name="Save", exact=True)).to_be_enabled()

    # ... and as diagnostics in the editor: the server's, and the schema's own (minimum 0).
    def diagnostics_on_line() -> list[dict[str, Any]]:
        return page.evaluate(
            """() => {
                const ed = window.vivaStudio.editor, doc = ed.view.state.doc;
                return ed.diagnostics().map((d) => ({ ...d, line: doc.lineAt(d.from).number }));
            }"""
        )

    found = eventually(
        lambda: [d for d in diagnostics_on_line() if d["source"] == "Server validation"]
    )
    assert any(d["message"].startswith("NOD-Q007:") for d in found), found
    rule_lines = {d["line"] for d in found if d["message"].startswith(("NOD-Q007:", "POL-F001:"))}
    schema_found = [d for d in diagnostics_on_line() if d["source"] == "Package schema"]
    assert schema_found
    assert "should be `0` at minimum" in schema_found[0]["message"]
    screenshot(page, "finding")

    # "Go to" (by keyboard) moves the editor's cursor to the path and focuses the editor.
    go = finding.get_by_role("button", name=f"Go to {MAX_FOLLOW_UPS_IN_WORDS}")
    expect(go).to_have_attribute("title", MAX_FOLLOW_UPS)  # the precise path, for integrators
    go.focus()
    page.keyboard.press("Enter")
    expect(editor(page)).to_be_focused()
    at = cursor(page)
    assert at["text"].strip() == '"maxFollowUps": -1,'
    assert at["selected"] == "-1"  # the value is selected, ready to be typed over
    assert rule_lines == {at["line"]}  # the diagnostics sit on the same line
    expect(page.get_by_text(f"Line {at['line']}, column {at['column']}.")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="Moved to")).to_contain_text(
        f"Moved to {MAX_FOLLOW_UPS_IN_WORDS} in the JSON (line {at['line']})."
    )
    # What the schema says about the field at the cursor, for keyboard users.
    expect(page.get_by_text("Follow-up questions allowed")).to_be_visible()

    # Fix it by typing over the selection, save, publish.
    page.keyboard.type("2")
    expect(report(page)).to_contain_text("Passes.")
    expect(publish).to_be_enabled()
    page.get_by_role("button", name="Save", exact=True).click()
    # The revision counts the autosaves too (one may have saved the -1 while the report was
    # read, on a busy machine): what is stored is the fix, at the revision the page names.
    saved = page.get_by_role("status").filter(has_text="Saved")
    expect(saved).to_have_text(re.compile(r"^Saved \(revision \d+\)\.$"))
    shown = int(re.findall(r"\d+", saved.text_content() or "")[0])
    stored = DraftPackage.objects.get(title=CS201_TITLE)
    assert stored.revision == shown >= 2
    follow_ups = next(n for n in stored.document["nodes"] if n["nodeId"] == "q-dijkstra")
    assert follow_ups["followUpPolicy"]["maxFollowUps"] == 2
    publish.click()
    status = page.get_by_role("status").filter(has_text="Published")
    expect(status).to_contain_text("Published as version 1.")
    expect(page.get_by_role("link", name="version 1", exact=True)).to_be_visible()
    screenshot(page, "published")
    status.get_by_role("link", name="See all versions").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Versions of {CS201_TITLE}")
    versions = page.get_by_role("table")
    expect(versions.get_by_role("row")).to_have_count(2)  # header + version 1
    expect(versions.get_by_role("cell").first).to_have_text("1")


def test_editor_is_usable_from_the_keyboard(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/")
    box = editor(page)
    expect(page.get_by_text("press Esc then Tab")).to_be_visible()

    # Tab indents inside the editor; Esc then Tab moves on to the next control.
    box.focus()
    page.keyboard.press("Control+Home")
    before = page.evaluate("() => window.vivaStudio.editor.getText()")
    page.keyboard.press("Tab")
    expect(box).to_be_focused()
    assert page.evaluate("() => window.vivaStudio.editor.getText()") != before
    page.keyboard.press("Control+z")
    # Save sits in the bar at the top of the page (issue #34); Publish follows the editor once
    # the text is validated.
    publish = page.get_by_role("button", name="Publish", exact=True)
    expect(publish).to_be_enabled()
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    expect(publish).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(box).to_be_focused()

    # Schema completion from the keyboard: a new key inside "metadata", after "title".
    title_line = page.evaluate(
        """() => {
            const ed = window.vivaStudio.editor, at = ed.locate("metadata.title");
            const line = ed.view.state.doc.lineAt(at.from);
            ed.view.dispatch({ selection: { anchor: line.to } });
            return line.number;
        }"""
    )
    page.keyboard.press("Enter")
    page.keyboard.type('"structureJ')
    page.keyboard.press("Control+Space")
    option = page.get_by_role("option", name=re.compile("structureJustification"))
    expect(option).to_have_attribute("aria-selected", "true")
    page.wait_for_timeout(200)  # CodeMirror ignores Enter for 75 ms after the list changes
    page.keyboard.press("Enter")
    inserted = eventually(
        lambda: page.evaluate(
            """(number) => window.vivaStudio.editor.view.state.doc.line(number).text.trim()
                .startsWith('"structureJustification"')""",
            title_line + 1,
        )
    )
    assert inserted, page.evaluate("() => window.vivaStudio.editor.getText().slice(0, 400)")
    screenshot(page, "completion")


def test_finding_paths_are_located_in_the_document(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/")
    expect(editor(page)).to_be_visible()

    def located(path: str) -> dict[str, Any]:
        return page.evaluate(
            """(path) => {
                const ed = window.vivaStudio.editor, doc = ed.view.state.doc;
                const at = ed.locate(path);
                return { found: at.found, text: doc.lineAt(at.from).text.trim(),
                         selected: doc.sliceString(at.cursor.anchor, at.cursor.head) };
            }""",
            path,
        )

    assert located("metadata.title") == {
        "found": True,
        "text": f'"title": "{CS201_TITLE}",',
        "selected": f'"{CS201_TITLE}"',
    }
    assert located("nodes[q-dijkstra]")["text"] == '"nodeId": "q-dijkstra",'
    assert located("nodes[3].kind")["text"] == '"kind": "scenario",'
    assert located("questionPools[pool-scenario].nodeIds")["text"] == '"nodeIds": ['
    assert located("questionPools[0].nodeIds[1]")["selected"] == '"scn-network-latency"'
    assert located("$")["text"] == "{"
    missing = located("nodes[q-dijkstra].noSuchField")
    assert missing["found"] is False
    assert missing["text"] == '"nodeId": "q-dijkstra",'  # the closest place that exists


def test_editor_styles_pass_the_content_security_policy(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    response = page.goto(f"/studio/{draft.id}/")
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "script-src 'self';" in policy
    assert re.search(r"style-src 'self' 'nonce-[A-Za-z0-9_-]+'", policy)
    expect(editor(page)).to_be_visible()
    # CodeMirror's runtime styles applied (blocked, the editor would not be a flex box); the
    # page fixture also fails the test on any CSP violation the browser reports.
    assert (
        page.evaluate("() => getComputedStyle(document.querySelector('.cm-editor')).display")
        == "flex"
    )


@pytest.mark.parametrize("where", ["package list", "editor"])
def test_no_serious_accessibility_violations(page: Page, sign_in: SignIn, where: str) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    if where == "package list":
        page.goto("/studio/")
        expect(page.get_by_role("heading", name="Authoring studio")).to_be_visible()
    else:
        page.goto(f"/studio/{draft.id}/")
        expect(editor(page)).to_be_visible()
        expect(page.get_by_text("Schema hints on.")).to_be_visible()
    violations = axe_violations(page)
    assert violations == [], violations


def test_invalid_json_blocks_save_and_a_concurrent_save_is_merged(
    page: Page, sign_in: SignIn
) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/")
    box = editor(page)
    save = page.get_by_role("button", name="Save", exact=True)
    publish = page.get_by_role("button", name="Publish")
    expect(save).to_be_enabled()

    box.focus()
    page.keyboard.press("Control+End")
    page.keyboard.type("x")
    expect(page.get_by_text("Not valid JSON")).to_be_visible()
    expect(save).to_be_disabled()
    expect(publish).to_be_disabled()
    page.keyboard.press("Backspace")
    expect(save).to_be_enabled()

    # Someone else saves first; this editor still has revision 1.
    draft_save(draft=draft, document=example_document(), expected_revision=1)
    page.evaluate("() => window.vivaStudio.editor.revealPath('metadata.version')")
    page.keyboard.type('"1.0.1"')
    save.click()
    # Their save changed nothing this editor changed: merged with it and saved (issue #34; the
    # clash case is tests/browser/test_studio_autosave.py).
    expect(page.locator("#action-status")).to_contain_text("merged with yours and saved")
    assert '"1.0.1"' in page.evaluate("() => window.vivaStudio.editor.getText()")
    stored = DraftPackage.objects.get(pk=draft.id)
    assert stored.revision == 3
    assert "1.0.1" in json.dumps(stored.document)


def test_typing_before_the_schema_has_arrived_raises_nothing(page: Page, sign_in: SignIn) -> None:
    # Seen in CI on a loaded machine: the author typed while the package schema was still on its
    # way; the schema completion answered [] and CodeMirror threw "result.options is not
    # iterable" at the keystroke (reported by the page's error check at teardown).
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    held: list[Route] = []
    page.route("**/api/v1/schema/package/**", lambda route: held.append(route))
    page.goto(f"/studio/{draft.id}/")
    box = editor(page)
    expect(box).to_be_visible()
    page.evaluate("() => window.vivaStudio.editor.revealPath('metadata.version')")
    page.keyboard.type('"1.0.1"', delay=40)
    assert held, "the schema request was not held"
    held[0].continue_()
    expect(page.get_by_text("Schema hints on.")).to_be_attached()
    assert '"1.0.1"' in page.evaluate("() => window.vivaStudio.editor.getText()")


def test_the_plain_textarea_still_works_without_the_editor_bundle(
    page: Page, sign_in: SignIn
) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    page.route("**/vendor/studio-editor.js", lambda route: route.abort())
    page.goto(f"/studio/{draft.id}/")
    box = editor(page)
    expect(box).to_be_visible()
    assert box.evaluate("(element) => element.tagName") == "TEXTAREA"
    expect(page.get_by_text("press Esc then Tab")).to_be_hidden()
    box.focus()
    page.keyboard.press("Control+End")
    page.keyboard.type(" ")
    expect(report(page)).to_contain_text("Passes.")
    expect(page.get_by_role("button", name="Publish")).to_be_enabled()
