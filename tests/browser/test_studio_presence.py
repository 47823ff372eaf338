"""A sign that someone else is editing this draft right now (issue #34, "working together").

Two authors (the owner and a co-author, each in a browser of their own) open the same draft:
each page's polite live region beside the Save bar names the other ("Maria Lopez is also
editing this package"), and the sign goes once the other has left the page (their page says
"left" on pagehide; the one that stays hears it at its next heartbeat, every 20 s, which the
test brings forward with Playwright's clock). A German co-author reads the sign in German.
Both pages are axe-clean with the sign shown.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from accounts.models import User
from authoring.models import DraftPackage
from tests.browser.helpers import SignIn, axe_violations, eventually, second_person_page
from tests.factories import PASSWORD, AuthorFactory, DraftPackageFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")
HEARTBEAT_MS = 20_000


def shared_draft() -> tuple[DraftPackage, User]:
    draft = DraftPackageFactory(owner=AuthorFactory(display_name="Maria Lopez"))
    colleague = AuthorFactory(display_name="Lena Berg")
    draft.collaborators.add(colleague)
    return draft, colleague


def sign_in_on(page: Page, user: User) -> None:
    """The staff login form, on a page of another browser context than the ``sign_in`` one."""
    page.goto("/accounts/login/")
    page.locator("#id_username").fill(user.username)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("form button[type=submit]").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def presence_sign(page: Page) -> Locator:
    return page.locator("#studio-presence")


def open_studio(page: Page, draft: DraftPackage) -> Locator:
    """The studio on ``draft`` once its first heartbeat was answered; returns the sign."""
    with page.expect_response(lambda r: r.url.endswith("/presence/") and r.ok):
        page.goto(f"/studio/{draft.id}/")
    return presence_sign(page)


def next_heartbeat_shows(page: Page, text: str) -> bool:
    """Bring the page's next heartbeat forward until its sign reads ``text`` (a "left" sent by
    the other page may still be on its way when the first one is answered)."""

    def probe() -> bool:
        with page.expect_response(lambda r: r.url.endswith("/presence/")):
            page.clock.fast_forward(HEARTBEAT_MS)
        return presence_sign(page).text_content() == text

    return bool(eventually(probe, timeout=10))


def test_two_authors_see_each_other_until_one_leaves(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    draft, colleague = shared_draft()
    page.clock.install()  # runs normally; fast_forward brings the next heartbeat forward
    sign_in(draft.owner)
    owner_sign = open_studio(page, draft)
    expect(owner_sign).to_have_attribute("aria-live", "polite")
    expect(owner_sign).to_have_text("")  # alone on the draft
    with second_person_page(browser, live_asgi_server) as other:
        sign_in_on(other, colleague)
        colleague_sign = open_studio(other, draft)
        expect(colleague_sign).to_have_text("Maria Lopez is also editing this package")
        assert next_heartbeat_shows(page, "Lena Berg is also editing this package")
        expect(page.get_by_role("status").filter(has_text="Lena Berg")).to_be_visible()
        for person in (page, other):
            violations = axe_violations(person, impacts=ALL_IMPACTS)
            assert violations == [], violations
        # Lena leaves the editor: her page says so on its way out.
        other.goto("/studio/")
        expect(other.get_by_role("heading", name="Authoring studio")).to_be_visible()
    assert next_heartbeat_shows(page, "")
    expect(owner_sign).to_have_text("")


def test_a_german_co_author_reads_the_sign_in_german(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    draft, colleague = shared_draft()
    sign_in(draft.owner)
    open_studio(page, draft)
    context = browser.new_context(
        base_url=live_asgi_server, viewport={"width": 1280, "height": 900}, locale="de-DE"
    )
    try:
        german = context.new_page()
        sign_in_on(german, colleague)
        sign = open_studio(german, draft)
        expect(german.locator("html")).to_have_attribute("lang", "de")
        expect(sign).to_have_text("Maria Lopez bearbeitet dieses Paket gerade auch")
        violations = axe_violations(german, impacts=ALL_IMPACTS)
        assert violations == [], violations
    finally:
        context.close()


def open_node(page: Page, node_id: str) -> None:
    """Open ``node_id``'s form from the outline, as an author clicks it."""
    page.get_by_role("navigation", name="Outline").get_by_role(
        "button", name=re.compile(rf"· {re.escape(node_id)}\b")
    ).click()


def test_each_author_sees_which_node_the_other_is_editing(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    """ "Lena is editing node q2": the sign names the node the other author has open, and says
    when it is the one this author has open too, so two people do not edit one node unawares."""
    draft, colleague = shared_draft()
    page.clock.install()
    sign_in(draft.owner)
    owner_sign = open_studio(page, draft)
    with page.expect_response(lambda r: r.url.endswith("/presence/") and r.ok):
        open_node(page, "q-dijkstra")  # told to the others half a second later
    with second_person_page(browser, live_asgi_server) as other:
        sign_in_on(other, colleague)
        colleague_sign = open_studio(other, draft)
        expect(colleague_sign).to_have_text(
            "Maria Lopez is also editing this package, in node q-dijkstra"
        )
        open_node(other, "q-dijkstra")
        # Her own sign changes at once; Maria's at her next heartbeat.
        expect(colleague_sign).to_have_text("Maria Lopez is also editing this node (q-dijkstra)")
        assert next_heartbeat_shows(page, "Lena Berg is also editing this node (q-dijkstra)")
        open_node(other, "warmup")
        assert next_heartbeat_shows(page, "Lena Berg is also editing this package, in node warmup")
        violations = axe_violations(other, impacts=ALL_IMPACTS)
        assert violations == [], violations
    expect(owner_sign).to_have_attribute("aria-live", "polite")


def test_a_co_author_s_saved_change_comes_into_the_other_editor(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    """Live updates (issue #34): Lena renames question q-dijkstra and her page saves it; Maria,
    who has the same node open with nothing unsaved, sees the new title in her form at her next
    heartbeat, told in the action status, without reloading and without saving anything herself."""
    draft, colleague = shared_draft()
    renamed = "Dijkstra's algorithm with a binary heap"
    page.clock.install()
    sign_in(draft.owner)
    open_studio(page, draft)
    open_node(page, "q-dijkstra")
    owner_title = node_form(page).get_by_label("Title", exact=True)
    expect(owner_title).not_to_have_value(renamed)
    with second_person_page(browser, live_asgi_server) as other:
        sign_in_on(other, colleague)
        open_studio(other, draft)
        open_node(other, "q-dijkstra")
        title = node_form(other).get_by_label("Title", exact=True)
        title.click()
        title.press("Control+a")
        title.press_sequentially(renamed, delay=40)
        expect(other.locator("#autosave-status")).to_have_text("All changes saved", timeout=15_000)
        expect(other.locator("#revision")).to_have_text("2")

        def caught_up() -> bool:
            with page.expect_response(lambda r: r.url.endswith("/presence/")):
                page.clock.fast_forward(HEARTBEAT_MS)
            return page.locator("#revision").text_content() == "2"

        assert eventually(caught_up, timeout=15)
        expect(owner_title).to_have_value(renamed)
        expect(page.locator("#action-status")).to_contain_text(
            "Someone else saved changes to this package; they are shown here (revision 2)."
        )
        expect(page.locator("#autosave-status")).to_have_text("All changes saved")
        # Maria's page saved nothing of its own: the stored draft is Lena's save.
        stored = DraftPackage.objects.get(pk=draft.pk)
        assert stored.revision == 2
        node = next(n for n in stored.document["nodes"] if n["nodeId"] == "q-dijkstra")
        assert node["title"] == renamed
        violations = axe_violations(page, impacts=ALL_IMPACTS)
        assert violations == [], violations


def node_form(page: Page) -> Locator:
    """The studio's form region (the selected node's fields)."""
    return page.get_by_role("region", name="Edit", exact=False)
