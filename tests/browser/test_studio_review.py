"""Review before publish in the studio (issue #34): the owner requires an approval and comments
on a node; a co-author sees the comment, resolves it and approves; the owner publishes. The
comments section is keyboard-operable, labelled and axe-clean.

Elements are found by role, label and accessible name; every wait is on the page's state.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from accounts.models import User
from authoring.models import DraftPackage
from authoring.services import draft_create, draft_set_collaborators
from tests.browser.helpers import SignIn, axe_violations
from tests.factories import PASSWORD, AuthorFactory, example_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")


def outline_node(page: Page, node_id: str) -> Locator:
    outline = page.get_by_role("navigation", name="Outline")
    return outline.get_by_role("button", name=re.compile(rf"· {re.escape(node_id)}$"))


@contextmanager
def page_of(browser: Browser, server: str, user: User) -> Iterator[Page]:
    """A page of a browser context of its own, signed in as ``user`` through the login form."""
    context = browser.new_context(
        base_url=server, viewport={"width": 1280, "height": 900}, locale="en-GB"
    )
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill(user.username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(lambda url: "/accounts/login/" not in url)
        yield page
    finally:
        context.close()


def test_a_coauthor_resolves_and_approves_and_the_owner_publishes(
    page: Page, sign_in: SignIn, browser: Browser, live_asgi_server: str
) -> None:
    owner, coauthor = AuthorFactory(), AuthorFactory()
    draft = draft_create(owner=owner, document=example_document())
    draft_set_collaborators(draft=draft, usernames=[coauthor.username])
    sign_in(owner)

    # The owner requires an approval and comments on the Dijkstra question.
    page.goto(f"/studio/{draft.id}/")
    review = page.get_by_role("region", name="Review before publish")
    expect(review.get_by_role("status").first).to_have_text(
        "No approval is required to publish this package."
    )
    review.get_by_label("Publishing needs an approval").check()
    expect(review.get_by_text("Not approved yet.")).to_be_visible()
    outline_node(page, "q-dijkstra").click()
    comments = page.get_by_role("region", name="Comments")
    expect(comments.get_by_text("On node q-dijkstra")).to_be_visible()
    comments.get_by_label("Your comment").fill("Ask for the complexity too.")
    comments.get_by_role("button", name="Add comment", exact=True).click()
    expect(comments.get_by_text("1 comment, 1 unresolved")).to_be_visible()
    expect(comments.get_by_role("listitem")).to_contain_text("Ask for the complexity too.")

    # The co-author sees it, resolves it with the keyboard and approves.
    with page_of(browser, live_asgi_server, coauthor) as other:
        other.goto(f"/studio/{draft.id}/")
        outline_node(other, "q-dijkstra").click()
        their_comments = other.get_by_role("region", name="Comments")
        expect(their_comments.get_by_role("listitem")).to_contain_text(
            "Ask for the complexity too."
        )
        resolve = their_comments.get_by_role("button", name=re.compile("^Resolve the comment"))
        resolve.focus()
        other.keyboard.press("Enter")
        expect(their_comments.get_by_text("1 comment, 0 unresolved")).to_be_visible()
        expect(their_comments.get_by_role("button", name=re.compile("^Reopen"))).to_be_visible()
        violations = axe_violations(other, impacts=ALL_IMPACTS)
        assert violations == [], violations
        their_review = other.get_by_role("region", name="Review before publish")
        their_review.get_by_role("button", name="Approve the current revision").click()
        expect(
            their_review.get_by_text(re.compile(r"^Approved by .+ at revision \d+\.$"))
        ).to_be_visible()

    # The owner publishes.
    page.goto(f"/studio/{draft.id}/publish/")
    expect(page.get_by_text(re.compile(r"^Approved by .+ at revision \d+\.$"))).to_be_visible()
    page.get_by_role("button", name=re.compile(r"^Publish revision \d+$")).click()
    expect(page.get_by_text("Published as version 1.")).to_be_visible()
    assert DraftPackage.objects.get(pk=draft.pk).versions.filter(is_preview=False).count() == 1
