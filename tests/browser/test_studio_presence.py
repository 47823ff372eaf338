"""A sign that someone else is editing this draft right now (issue #34, "working together").

Two authors (the owner and a co-author, each in a browser of their own) open the same draft:
each page's polite live region beside the Save bar names the other ("Maria Lopez is also
editing this package"), and the sign goes once the other has left the page (their page says
"left" on pagehide; the one that stays hears it at its next heartbeat, every 20 s, which the
test brings forward with Playwright's clock). A German co-author reads the sign in German.
Both pages are axe-clean with the sign shown.
"""

from __future__ import annotations

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
