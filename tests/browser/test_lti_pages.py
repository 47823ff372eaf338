"""The LTI pages a person sees in a real browser, axe-clean and keyboard-operable: the page that
refuses a launch, and the instructor's exam picker (Deep Linking) with its return form."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from lti.dynamic_registration import registration_token_issue
from tests.browser.helpers import axe_violations, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def assert_axe_clean(page: Page, name: str) -> None:
    violations = axe_violations(page)
    screenshot(page, name)
    assert violations == [], f"{name}: {json.dumps(violations, indent=2)}"


def test_a_refused_launch_is_a_clear_accessible_page(page: Page) -> None:
    page.goto("/lti/login/00000000-0000-4000-8000-000000000000/")
    expect(page.get_by_role("heading", level=1)).to_have_text("This link could not be opened")
    expect(page.get_by_role("alert")).to_contain_text("names no target")
    assert_axe_clean(page, "lti-refused")


def test_dynamic_registration_by_a_stranger_is_refused(page: Page) -> None:
    page.goto("/lti/register/?openid_configuration=https://lms.example/.well-known/config")
    expect(page.get_by_role("alert")).to_contain_text("needs the registration URL")
    assert_axe_clean(page, "lti-register-not-allowed")


def test_dynamic_registration_without_a_configuration_is_refused(page: Page) -> None:
    page.goto(f"/lti/register/?viva_token={registration_token_issue()}")
    expect(page.get_by_role("alert")).to_contain_text("sent no configuration")
    assert_axe_clean(page, "lti-register-refused")


def test_exam_picker_without_a_launch_refuses_accessibly(page: Page) -> None:
    """The picker needs a deep-linking launch (covered against a real platform in tests/lti);
    opened directly it refuses with a clear, keyboard-reachable page."""
    page.goto("/lti/deep-link/")
    expect(page.get_by_role("alert")).to_contain_text("Open the exam picker again")
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to main content")
    assert_axe_clean(page, "lti-picker-refused")
