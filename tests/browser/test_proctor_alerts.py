"""Alerts a proctor can read (issue #31), in a real browser: a session whose examiner keeps
hitting the same guardrail (a looping exam) is one "Repeated guardrail hits xN" alert (a
multiplication sign on the page) on the live overview, updated in place with the latest time
as the hits stream in; it is announced once, not once per hit; dismissed, it stays away until
the next hit brings it back with the new count. axe-core finds no serious or critical
violation.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from ioa.events import EventFactory
from ioa.events import payloads as p
from sessions.event_store import append_events
from sessions.models import ExamSession
from tests.bot.conftest import publish_example
from tests.browser.helpers import axe_violations, screenshot
from tests.factories import ProctorFactory
from tests.sessions.factories import ExamSessionFactory, SittingFactory, exam_started

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TIMES = "\u00d7"
"""The multiplication sign before an alert's count."""


def hit(session: ExamSession, n: int, pause: float = 0.3) -> None:
    """``n`` refused completions, one stored event each, ``pause`` seconds apart."""
    make = EventFactory(session_id=str(session.pk))
    for _ in range(n):
        guardrail = p.GuardrailTriggered(
            guardrailId="g",
            guardrailType="blocked_action",
            severity="block",
            description="completion refused: required evidence missing",
            actionTaken="event_only",
        )
        append_events(session=session, events=[make(guardrail)])
        time.sleep(pause)


def check(page: Page, name: str) -> None:
    violations = axe_violations(page)
    assert violations == [], f"{name}: {json.dumps(violations, indent=2)}"
    screenshot(page, name)


def test_repeated_guardrails_are_one_alert_with_a_count(page: Page, sign_in: Any) -> None:
    proctor = ProctorFactory()
    sitting = SittingFactory(version=publish_example(), proctors=[proctor])
    session = ExamSessionFactory(sitting=sitting)
    append_events(session=session, events=exam_started(session))
    who = session.candidate.name

    sign_in(proctor)
    page.goto(f"/proctor/sittings/{sitting.pk}/")
    expect(page.locator("body[data-overview-live=true]")).to_have_count(1)
    alerts = page.get_by_role("list", name="Alerts needing attention").get_by_role("listitem")

    hit(session, 6)
    expect(alerts).to_have_count(1)
    expect(alerts.first).to_contain_text(f"Repeated guardrail hits {TIMES}6: {who}")
    expect(alerts.first).to_contain_text("blocked_action")
    expect(alerts.first).to_contain_text(re.compile(r"latest \d"))
    # Announced once (the first occurrence), not once per hit.
    announced = page.locator("#alert-announcer p", has_text="Repeated guardrail hits")
    expect(announced).to_have_count(1)
    expect(page.locator("#alert-updates p")).to_have_count(0)  # a repeat: at most once a minute
    check(page, "proctor-alerts-01-counted")

    # Dismissed, it stays away; the next hit brings it back with the new count.
    alerts.first.get_by_role("button", name=re.compile("^Dismiss alert")).click()
    expect(alerts).to_have_count(0)
    hit(session, 1, pause=0)
    expect(alerts).to_have_count(1)
    expect(alerts.first).to_contain_text(f"Repeated guardrail hits {TIMES}7: {who}")
    expect(alerts.first).to_contain_text("1 since you dismissed it")

    # A reload shows the same single alert from the snapshot.
    page.reload()
    expect(page.locator("body[data-overview-live=true]")).to_have_count(1)
    expect(alerts).to_have_count(1)
    expect(alerts.first).to_contain_text(f"Repeated guardrail hits {TIMES}7")
    check(page, "proctor-alerts-02-reloaded")

    # The session's own page: the same one alert, updated live as another hit streams in.
    page.goto(f"/proctor/sessions/{session.pk}/")
    expect(page.locator("body[data-session-live=true]")).to_have_count(1)
    mine = page.get_by_role("list", name="Alerts on this session").get_by_role("listitem")
    expect(mine).to_have_count(1)
    expect(mine.first).to_contain_text(f"Repeated guardrail hits {TIMES}7")
    hit(session, 2)
    expect(mine.first).to_contain_text(f"Repeated guardrail hits {TIMES}9")
    expect(mine).to_have_count(1)
    check(page, "proctor-alerts-03-session-page")
