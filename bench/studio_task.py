#!/usr/bin/env python
"""A lecturer's task in the studio, counted (issue #34): "write a three-question viva with a
rubric and publish it" in Chromium through the forms, every form action counted (a click, a
field filled, a choice made), printed per step with the total against the target (40).

The task and its counting are ``tests/browser/studio_task.py`` (the browser test
``tests/browser/test_studio_task.py`` runs the same steps and fails above the target). A fresh
daphne (the embedded default) on a throw-away database (``test_<name>_studio_task``).

Needs Postgres (``DATABASE_URL``) and Chromium.
Usage: ``DATABASE_URL=postgres://... python bench/studio_task.py``
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM beside sync Playwright

import django  # noqa: E402

django.setup()

from django.db import connections  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from bench.chromium import CHROMIUM, database_url  # noqa: E402
from bench.scratch import scratch_database  # noqa: E402
from tests.browser.studio_task import TARGET_ACTIONS, CountedActions, write_and_publish_a_viva  # noqa: E402
from tests.factories import PASSWORD, AuthorFactory  # noqa: E402
from tests.support.processes import asgi_server  # noqa: E402


def run() -> CountedActions:
    author = AuthorFactory()
    server = asgi_server(DATABASE_URL=database_url(), DJANGO_ALLOW_ASYNC_UNSAFE="")
    with server as address, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(base_url=f"http://{address}", locale="en-GB")
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill(author.username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(lambda url: "/accounts/login/" not in url)
        started = time.monotonic()
        actions = write_and_publish_a_viva(page)
        print(f"(the browser script took {time.monotonic() - started:.1f} s)")
        browser.close()
    return actions


def main() -> int:
    with scratch_database("studio_task"):
        actions = run()
        connections.close_all()
        time.sleep(1.0)  # the server's backends close after its process
    print("form actions per step of 'write a three-question viva with a rubric and publish it':")
    for step, count in actions.counts.items():
        print(f"  {step:22} {count:3d}")
    ok = actions.total <= TARGET_ACTIONS
    verdict = "met" if ok else "NOT met"
    print(f"  {'total':22} {actions.total:3d}  (target at most {TARGET_ACTIONS}: {verdict})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
