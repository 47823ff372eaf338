"""The API tokens page in a real browser: issued, shown once, listed and revoked with the keyboard
alone, axe-clean (every impact) at each step; the key it shows works against the API."""

from __future__ import annotations

import json
import urllib.request

import pytest
from playwright.sync_api import Page, expect

from accounts.models import ApiToken
from tests.browser.helpers import SignIn, axe_violations, screenshot
from tests.factories import AuthorFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ALL_IMPACTS = ("minor", "moderate", "serious", "critical")


def assert_axe_clean(page: Page, name: str) -> None:
    violations = axe_violations(page, impacts=ALL_IMPACTS)
    screenshot(page, name)
    assert violations == [], f"{name}: {json.dumps(violations, indent=2)}"


def me_status(base_url: str, key: str) -> int:
    request = urllib.request.Request(  # noqa: S310 - the live server on loopback
        f"{base_url}/api/v1/me/", headers={"Authorization": f"Token {key}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)


def test_issue_copy_and_revoke_a_token_with_the_keyboard(
    page: Page, sign_in: SignIn, live_asgi_server: str
) -> None:
    sign_in(AuthorFactory())
    page.goto("/accounts/tokens/")
    expect(page.get_by_role("heading", level=1)).to_have_text("API tokens")
    expect(page.get_by_text("No token yet.")).to_be_visible()
    assert_axe_clean(page, "empty")

    name = page.get_by_label("Name", exact=True)
    name.focus()
    page.keyboard.type("gradebook sync")
    page.keyboard.press("Enter")
    key_field = page.get_by_label("Your new key (copy it now: it will not be shown again)")
    expect(key_field).to_be_visible()
    key = key_field.input_value()
    assert key.startswith("viva_")
    expect(page.get_by_role("row", name="gradebook sync")).to_contain_text(key[:12])
    assert_axe_clean(page, "issued")
    assert me_status(live_asgi_server, key) == 200

    page.reload()  # the browser sends the form again: nothing more is issued, no key shown
    expect(page.get_by_role("alert")).to_contain_text("This form was already sent")
    assert key not in page.content()
    assert ApiToken.objects.count() == 1
    page.goto("/accounts/tokens/")
    expect(page.get_by_role("row", name="gradebook sync")).to_have_count(1)
    assert key not in page.content()

    revoke = page.get_by_role("button", name="Revoke gradebook sync")
    revoke.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("revoked")
    expect(page.get_by_role("row", name="gradebook sync")).to_contain_text("Revoked")
    assert_axe_clean(page, "revoked")
    assert me_status(live_asgi_server, key) == 401


def test_a_blank_name_is_announced_beside_the_field(page: Page, sign_in: SignIn) -> None:
    sign_in(AuthorFactory())
    page.goto("/accounts/tokens/")
    page.get_by_role("button", name="Issue token").press("Enter")
    expect(page.get_by_role("alert")).to_have_text("Give the token a name of 1 to 100 characters.")
    expect(page.get_by_label("Name", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Name", exact=True)).to_be_focused()
    assert_axe_clean(page, "refused")
