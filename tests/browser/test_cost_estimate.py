"""The dry run's cost estimate on the publish page, in a browser: the sitting size is entered
and submitted with the keyboard alone, and the page has no accessibility violation of any
impact. (The figures for a known price table: tests/publishing/test_cost_estimate_page.py.)"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import SignIn, axe_violations
from tests.factories import DraftPackageFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALL_IMPACTS = ("minor", "moderate", "serious", "critical")


def test_an_author_estimates_a_sitting_with_the_keyboard(page: Page, sign_in: SignIn) -> None:
    draft = DraftPackageFactory()
    sign_in(draft.owner)
    page.goto(f"/studio/{draft.id}/publish/")
    estimate = page.get_by_role("region", name="Estimated cost")
    expect(estimate).to_contain_text("For 100 candidates")
    expect(estimate).to_contain_text("examiner turns an exam")
    assert axe_violations(page, impacts=ALL_IMPACTS) == []
    size = estimate.get_by_label("Candidates in the sitting")
    size.focus()
    page.keyboard.press("Control+A")
    page.keyboard.type("50")
    page.keyboard.press("Tab")
    expect(estimate.get_by_role("button", name="Estimate")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"/studio/{draft.id}/publish/?candidates=50")
    estimate = page.get_by_role("region", name="Estimated cost")
    expect(estimate).to_contain_text("For 50 candidates")
    expect(estimate.get_by_label("Candidates in the sitting")).to_have_value("50")
    assert axe_violations(page, impacts=ALL_IMPACTS) == []
