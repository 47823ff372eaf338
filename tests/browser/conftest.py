"""Browser tests: Debian's Chromium, driven by Playwright, against a real daphne server.

How to write one::

    pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

    def test_something(page: Page, sign_in: SignIn) -> None:
        sign_in(AuthorFactory())                    # through the real login form
        page.goto("/studio/")                       # relative to the live server
        expect(page.get_by_role("heading", name="Authoring studio")).to_be_visible()

``transaction=True`` matters: the server is another process reading the test database, so what a
test creates must be committed (and is flushed after the test).

Fixtures (all in this file):

``live_asgi_server``
    ``http://127.0.0.1:PORT`` of a daphne process (``tests/support/processes.py:asgi_server``) on
    the test database, started once for the ``tests/browser`` package.
``browser``
    Debian's ``/usr/bin/chromium`` (never a Playwright download), headless, started once for the
    package. Missing Chromium skips the browser tests with a reason, except under ``CI=true``,
    where it fails them (``.ci/run`` installs it). ``VIVA_CHROMIUM`` may name another binary.
``page``
    A fresh browser context (own cookies) and page per test, with ``base_url`` set to the live
    server. The test fails if the page threw an uncaught exception or the browser reported a
    Content Security Policy violation. A screenshot of the last state of every test is saved as
    ``test-artifacts/screens/<module>__<test>.png`` (gitignored);
    ``helpers.screenshot(page, "step")`` saves intermediate ones next to it.
``sign_in``
    ``sign_in(user, password=PASSWORD)`` signs in through the staff login form.

Helpers that are not fixtures live in ``tests/browser/helpers.py``: ``screenshot``,
``eventually``, ``axe_violations`` (axe-core from ``tests/browser/vendor/axe.min.js``, vendored by
``make frontend``).

The site's CSP has no 'unsafe-eval': ``page.wait_for_function("…")`` evaluates its predicate with
eval in the page and fails once it has to poll. Use ``expect(locator)`` assertions, or poll
``page.evaluate`` from Python (``helpers.eventually``); ``page.evaluate`` and
``add_init_script`` go through the DevTools protocol and are not subject to CSP.

Playwright's sync API keeps an asyncio loop running in this thread, which makes Django refuse
ORM calls from the test ("SynchronousOnlyOperation"). While the browser is up,
DJANGO_ALLOW_ASYNC_UNSAFE is set for this process only: the test's own ORM calls are plain
synchronous code; the application runs in the server process, which never gets the flag.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Error, Page, expect, sync_playwright

from tests.browser.helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    SCREENS,
    SignIn,
    artifact_name,
    remember_artifact_name,
)
from tests.factories import PASSWORD
from tests.support.processes import asgi_server

CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

expect.set_options(timeout=10_000)


@pytest.fixture(autouse=True)
def _fast_password_hashing() -> None:
    """Overrides the suite-wide fast hasher: the server process checks passwords with the real
    hashers, so users made here must have hashes it understands."""


@pytest.fixture(scope="package")
def live_asgi_server(django_db_setup: None) -> Iterator[str]:
    """A daphne server on the test database, for the whole browser test package."""
    # Explicitly off in the server, whatever this process has (see the module docstring).
    with asgi_server(DJANGO_ALLOW_ASYNC_UNSAFE="") as address:
        yield f"http://{address}"


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not os.access(CHROMIUM, os.X_OK):
        message = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
        if CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    with pytest.MonkeyPatch.context() as mp, sync_playwright() as playwright:
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Browser, live_asgi_server: str, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(
        base_url=live_asgi_server, viewport={"width": 1280, "height": 900}, locale="en-GB"
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    name = artifact_name(request.node)
    remember_artifact_name(page, name)
    problems: list[str] = []
    console: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        console.append(f"{message.type}: {message.text}")
        if message.type == "error" and "Content Security Policy" in message.text:
            problems.append(f"CSP violation: {message.text}")

    def on_page_error(error: Error) -> None:
        problems.append(f"uncaught exception: {error}")

    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    try:
        yield page
    finally:
        SCREENS.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(Error):  # the page may be gone; the test's failure says why
            page.screenshot(path=SCREENS / f"{name}.png", full_page=True)
        remember_artifact_name(page, None)
        context.close()
    if problems:
        pytest.fail(
            "the browser reported problems:\n  "
            + "\n  ".join(problems)
            + "\nconsole:\n  "
            + "\n  ".join(console),
            pytrace=False,
        )


@pytest.fixture
def sign_in(page: Page) -> SignIn:
    """Sign ``user`` in through the staff login form (``password`` defaults to the factories')."""

    def _sign_in(user: Any, password: str = PASSWORD) -> None:
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill(user.username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(lambda url: "/accounts/login/" not in url)

    return _sign_in
