"""The studio's scripts speak the author's language (issue #34): a German author reads the
statuses, buttons and headings the studio's JavaScript builds (studio.js, studio-flow.js) in
German, from the page's JavaScript catalogue (djangojs.po), and the page stays axe-clean.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.helpers import SignIn, axe_violations
from tests.factories import DraftPackageFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")


def test_a_german_author_reads_the_studio_s_own_messages_in_german(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    context = browser.new_context(
        base_url=live_asgi_server, viewport={"width": 1280, "height": 900}, locale="de-DE"
    )
    try:
        context.add_cookies(page.context.cookies())
        german = context.new_page()
        german.goto(f"/studio/{draft.id}/")
        expect(german.locator("html")).to_have_attribute("lang", "de")
        expect(german.locator("#schema-status")).to_have_text("Schema-Hinweise an.")
        expect(german.locator("#report-summary")).to_have_text("Noch nicht geprüft.")

        # The flow's outline and form: the form's heading is built by studio-flow.js.
        german.get_by_role("navigation", name="Gliederung").get_by_role(
            "button", name=re.compile(r"· q-dijkstra\b")
        ).click()
        expect(german.locator("#flow-form-heading")).to_have_text(
            re.compile(r"^Knoten q-dijkstra \(question, .+\) bearbeiten$")
        )
        expect(german.get_by_role("button", name="Knoten q-dijkstra löschen")).to_be_visible()

        # An edit, then Save: the save bar's and the action's statuses are German.
        title = german.locator("#flow-form").get_by_label(re.compile(r"^Title\b"))
        title.fill("Prioritätswarteschlangen in Dijkstras Algorithmus")
        title.blur()
        german.locator("#save").click()
        expect(german.locator("#action-status")).to_have_text(
            re.compile(r"^Gespeichert \(Revision \d+\)\.$")
        )
        expect(german.locator("#autosave-status")).to_have_text("Alle Änderungen gespeichert")
        # The saved draft's validation report, summed up by studio.js.
        expect(german.locator("#report-summary")).to_have_text(
            re.compile(
                r"^(Bestanden|Abgelehnt)\. \d+ Fehler, \d+ Warnung\(en\), \d+ Hinweis\(e\)\.$"
            )
        )

        violations = axe_violations(german, impacts=ALL_IMPACTS)
        assert violations == [], violations
    finally:
        context.close()
