"""The studio's scripts speak the author's language (issue #34): a German author reads the
statuses, buttons and headings the studio's JavaScript builds (studio.js, studio-flow.js) in
German, from the page's JavaScript catalogue (djangojs.po), and the page stays axe-clean. The
forms' field names and a finding's place are the lecturer's words (static/js/studio-words.js)
in German, never the humanised JSON field name; so are the choices of a select or a group of
boxes to tick (never the humanised JSON value, "Stt low confidence") and the names of list
entries and their "Add ..." and "Remove ..." buttons.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from ioa.schema.export import SCHEMA_PATH
from tests.browser.helpers import SignIn, axe_violations
from tests.factories import DraftPackageFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")


def humanise(name: str) -> str:
    """A JSON name as the forms show it without plain words: "maxFollowUps" -> "Max follow ups"."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ")
    return text[:1].upper() + text[1:]


def humanised_field_names() -> set[str]:
    """Every schema field name as the forms would show it without a label ("Follow up policy")."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    names = set(schema["properties"])
    for definition in schema["$defs"].values():
        names.update(definition.get("properties", {}))
    return {humanise(name) for name in names}


def humanised_choices() -> set[str]:
    """Every string enum value and condition kind of the schema as the forms would show it
    without plain words ("Stt low confidence", "Evidence satisfied")."""
    values: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            values.update(v for v in node.get("enum", []) if isinstance(v, str))
            values.update(node.get("discriminator", {}).get("mapping", {}))
            for item in node.values():
                walk(item)

    walk(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    return {humanise(value) for value in values}


def humanised_list_entries() -> set[str]:
    """The entry of each list of parts as the forms named it without plain words, lower case
    ("evidence target", "recovery handler", "forbidden")."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    names = set()
    for definition in [schema, *schema["$defs"].values()]:
        for name, sub in definition.get("properties", {}).items():
            options = [sub, *sub.get("anyOf", [])]
            if any(o.get("type") == "array" and "$ref" in o.get("items", {}) for o in options):
                names.add(name)
    entries = {humanise(name).lower() for name in names}
    return {e[:-3] + "y" if e.endswith("ies") else e.removesuffix("s") for e in entries}


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


def test_a_german_author_reads_the_studio_s_own_messages_in_german(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    with german_page(page, browser, live_asgi_server) as german:
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
        title = german.locator("#flow-form").get_by_label(re.compile(r"^Titel\b"))
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


def dijkstra_form(german: Page, draft_id: object) -> Locator:
    """The German studio of the draft, with node q-dijkstra open: its form."""
    german.goto(f"/studio/{draft_id}/")
    expect(german.locator("#schema-status")).to_have_text("Schema-Hinweise an.")
    german.get_by_role("navigation", name="Gliederung").get_by_role(
        "button", name=re.compile(r"· q-dijkstra\b")
    ).click()
    return german.locator("#flow-form")


def test_a_german_author_reads_field_names_and_finding_places_in_german(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    with german_page(page, browser, live_asgi_server) as german:
        form = dijkstra_form(german, draft.id)
        follow_ups = form.get_by_role("group", name="Nachfragen", exact=True)
        expect(follow_ups).to_be_visible()

        # The node's field labels and group names (legends), without the marks the form adds.
        names = form.locator("label:not(.check-label), legend").all_inner_texts()
        names = [re.sub(r" \((Pflichtfeld|einer pro Zeile|\d+)\)$", "", n.strip()) for n in names]
        assert len(names) > 20, names
        english = sorted(set(names) & humanised_field_names())
        assert english == [], english
        for name in ("Knotenname", "Anweisungen für den Prüfer", "Höchstzahl der Nachfragen"):
            assert name in names, (name, names)
        assert "Follow up policy" not in names and "Max follow ups" not in names

        # A finding at a field: its place in the report is said in German.
        follow_ups.get_by_label(re.compile(r"^Höchstzahl der Nachfragen")).fill("-1")
        go = german.locator("#report-findings").get_by_role(
            "button",
            name="Zu Knoten q-dijkstra, Nachfragen, Höchstzahl der Nachfragen springen",
            exact=True,
        )
        expect(go.first).to_be_visible(timeout=15_000)
        expect(go.first).to_have_attribute("title", "nodes[q-dijkstra].followUpPolicy.maxFollowUps")
        places = german.locator("#report-findings button").all_inner_texts()
        assert places and not [p for p in places if re.search(r"\b(node|follow up)\b", p)], places


def test_a_german_author_reads_choices_and_list_buttons_in_german(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    with german_page(page, browser, live_asgi_server) as german:
        form = dijkstra_form(german, draft.id)
        expect(form.get_by_role("button", name="Übergang hinzufügen", exact=True)).to_be_visible()

        # Every option of every select of the node's form: a node's kind, a transition's
        # condition, a recovery rule's problem, action and next step, a refused request's
        # answer, ... (ids of the package, "q-dijkstra", are shown as they are).
        options = [o.strip() for o in form.locator("select option").all_inner_texts()]
        assert len(options) > 40, options
        humanised = humanised_choices()
        english = sorted({o for o in options if o in humanised or o.lower() in humanised})
        assert english == [], english
        for german_words in (
            "Prüfungsfrage",  # kind: question
            "Sobald die Ziele gezeigt sind",  # condition: evidence_satisfied
            "Sprache nicht deutlich erkannt",  # scenario: stt_low_confidence
            "Behutsam noch einmal fragen",  # action: gentle_reprompt
            "Höflich ablehnen",  # onViolation: refuse_politely
        ):
            assert german_words in options, (german_words, options)
        # The requests the candidate may make, a group of boxes to tick.
        checks = [c.strip() for c in form.locator("label.check-label").all_inner_texts()]
        assert "Die Frage noch einmal hören" in checks, checks
        assert not [c for c in checks if c in humanised], checks

        # The lists' entries and their Add and Remove buttons: German, never the humanised
        # English list name ("Add transition", "transition 1 entfernen").
        buttons = [b.strip() for b in form.get_by_role("button").all_inner_texts()]
        list_buttons = [b for b in buttons if re.search(r"(hinzufügen|entfernen)$", b)]
        for name in (
            "Übergang hinzufügen",
            "Übergang 1 entfernen",
            "Nachweisziel hinzufügen",
            "Nachweisziel 1 entfernen",
            "Störungsregel hinzufügen",
            "Störungsregel 3 entfernen",
            "Abgelehnte Bitte hinzufügen",
            "abgelehnte Bitte 1 entfernen",
        ):
            assert name in list_buttons, (name, list_buttons)
        entries = humanised_list_entries()
        assert {"transition", "evidence target", "recovery handler", "forbidden"} <= entries
        english_buttons = [
            b
            for b in buttons
            if re.match(r"(Add|Remove) ", b)
            or any(re.search(rf"\b{re.escape(e)}\b", b, re.IGNORECASE) for e in entries)
        ]
        assert english_buttons == [], english_buttons
        # A single optional part's Add and Remove buttons (the examiner's words, the time limit,
        # a target's marking levels) name it in German too, never its humanised schema name
        # ("Prompt entfernen", "Rubric descriptor zu tgt-complexity hinzufügen").
        for name in (
            "Wortlaut des Prüfers entfernen",
            "Zeitlimit entfernen",
            "Bewertungsstufen zu tgt-complexity hinzufügen",
            "Bewertungsstufen von tgt-greedy-choice entfernen",
        ):
            assert name in buttons, (name, buttons)
        schema_names = ("prompt", "time budget", "rubric descriptor", "follow up policy")
        assert not [b for b in buttons if any(n in b.lower() for n in schema_names)], buttons
        legends = form.locator("legend").all_inner_texts()
        assert "Übergang 1" in [re.sub(r":.*", "", legend) for legend in legends], legends
