"""Helpers for browser tests (the fixtures are in conftest.py, which explains the setup)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page

from tests.support.processes import ROOT

CHROMIUM = Path(os.environ.get("VIVA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENS = ROOT / "test-artifacts" / "screens"
AXE_JS = Path(__file__).resolve().parent / "vendor" / "axe.min.js"

SignIn = Callable[..., None]
"""The ``sign_in`` fixture: ``sign_in(user, password=PASSWORD)``."""

_names: dict[int, str] = {}


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def artifact_name(node: pytest.Item) -> str:
    """``<module>__<test name>``, safe as a file name."""
    return _safe(f"{Path(str(node.path)).stem}__{node.name}")


def remember_artifact_name(page: Page, name: str | None) -> None:
    """Name ``page``'s screenshots after the running test (None forgets the page)."""
    if name is None:
        _names.pop(id(page), None)
    else:
        _names[id(page)] = name


def screenshot(page: Page, step: str) -> Path:
    """Save a full-page screenshot of ``page`` as ``<module>__<test>--<step>.png``."""
    path = SCREENS / f"{_names.get(id(page), 'page')}--{_safe(step)}.png"
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=path, full_page=True)
    return path


def axe_violations(
    page: Page, impacts: tuple[str, ...] = ("serious", "critical")
) -> list[dict[str, Any]]:
    """Run axe-core on the current page; its violations with one of ``impacts``, summarised."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # Evaluated through the DevTools protocol, which the page's CSP (no inline script) allows.
        page.evaluate(AXE_JS.read_text(encoding="utf-8") + "\n;undefined")
    violations: list[dict[str, Any]] = page.evaluate(
        """async () => {
            const result = await window.axe.run(document, { resultTypes: ["violations"] });
            return result.violations.map((v) => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + ": " + n.failureSummary),
            }));
        }"""
    )
    return [v for v in violations if v["impact"] in impacts]


def eventually(probe: Any, timeout: float = 10.0) -> Any:
    """Poll ``probe()`` until it returns something truthy (page.wait_for_function needs eval,
    which the site's CSP forbids)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


@contextmanager
def second_person_page(browser: Browser, base_url: str) -> Iterator[Page]:
    """A page in a browser context of its own on ``base_url`` (another person beside the test's
    ``page``: the candidate next to a marker, a proctor next to the candidate): cookies and
    sign-in are not shared; 15-s default timeout."""
    context = browser.new_context(
        base_url=base_url, viewport={"width": 1280, "height": 900}, locale="en-GB"
    )
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@contextmanager
def fake_microphone_page(
    browser: Browser, wav: str | Path, base_url: str, name: str
) -> Iterator[Page]:
    """A page in a Chromium whose microphone plays ``wav`` (looped, unless the path ends with
    ``%noloop``), with microphone permission granted, on ``base_url``; its screenshots are named
    ``name``. On exit the test fails if the page threw an uncaught exception or reported a
    Content Security Policy violation."""
    voice_browser = browser.browser_type.launch(
        executable_path=str(CHROMIUM),
        args=[
            *CHROMIUM_ARGS,
            "--use-fake-device-for-media-stream",
            "--use-fake-ui-for-media-stream",
            f"--use-file-for-fake-audio-capture={wav}",
            "--autoplay-policy=no-user-gesture-required",
        ],
    )
    context = voice_browser.new_context(
        base_url=base_url, viewport={"width": 1280, "height": 900}, locale="en-GB"
    )
    context.grant_permissions(["microphone"])
    page = context.new_page()
    remember_artifact_name(page, name)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: _note_csp_violation(message, errors))
    try:
        yield page
    finally:
        remember_artifact_name(page, None)
        context.close()
        voice_browser.close()
    assert errors == [], f"the browser reported problems: {errors}"


def _note_csp_violation(message: ConsoleMessage, errors: list[str]) -> None:
    if message.type == "error" and "Content Security Policy" in message.text:
        errors.append(message.text)
