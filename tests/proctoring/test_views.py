"""The proctor dashboard's pages without JavaScript: scheduling from the home page, the roster
(add, CSV report, invitation links, accommodations), the overview's filters, the session page
and its action forms."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.test import Client

from sessions.models import ExamSession, ProctorActionRequest, SessionEvent, Sitting
from tests.bot.conftest import publish_example
from tests.factories import ProctorFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def proctor() -> Any:
    return ProctorFactory()


@pytest.fixture
def browser(proctor: Any) -> Client:
    client = Client()
    client.force_login(proctor)
    return client


@pytest.fixture
def sitting(browser: Client, proctor: Any) -> Sitting:
    version = publish_example()
    response = browser.post(
        "/proctor/",
        {
            "version": str(version.pk),
            "title": "Resit",
            "scheduled_for": "2026-06-01T09:30",
            "proctor_authorises_start": "on",
        },
    )
    sitting = Sitting.objects.get(title="Resit")
    assert response.status_code == 302
    assert response.url == f"/proctor/sittings/{sitting.pk}/candidates/"
    return sitting


def text(response: Any) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def test_scheduling_from_the_home_page(browser: Client, sitting: Sitting, proctor: Any) -> None:
    assert sitting.proctor_authorises_start is True
    assert sitting.scheduled_for is not None and sitting.scheduled_for.hour == 9
    assert list(sitting.proctors.all()) == [proctor]
    home = text(browser.get("/proctor/"))
    assert "Resit" in home and "Schedule a sitting" in home
    refused = browser.post("/proctor/", {"version": "", "title": "x"})
    assert refused.status_code == 400
    assert "Choose a published assessment." in text(refused)


def test_the_roster_adds_imports_invites_and_sets_accommodations(
    browser: Client, sitting: Sitting
) -> None:
    url = f"/proctor/sittings/{sitting.pk}/candidates/"
    added = browser.post(url, {"email": "ada@example.test", "name": "Ada", "extra_time": "1.25"})
    assert added.status_code == 302
    session = ExamSession.objects.get(sitting=sitting)
    assert float(session.extra_time_multiplier) == 1.25
    duplicate = browser.post(url, {"email": "ada@example.test"})
    assert duplicate.status_code == 400 and "already in this sitting" in text(duplicate)

    upload = io.BytesIO(b"email,name\nalan@example.test,Alan\nbad,Bad\n")
    upload.name = "c.csv"
    report = text(browser.post(f"{url}import/", {"file": upload}))
    assert "Import report" in report
    assert "2 rows read: 1 added, 0 already in the sitting, 1 with errors." in report

    invited = text(browser.post(f"/proctor/sittings/{sitting.pk}/invitations/", {}))
    assert invited.count("Invitation link for") == 2
    assert ExamSession.objects.filter(sitting=sitting, invitation__isnull=False).count() == 2
    # A second press invites nobody new.
    again = browser.post(f"/proctor/sittings/{sitting.pk}/invitations/", {}, follow=True)
    assert "Nobody to invite" in text(again)

    saved = browser.post(
        f"/proctor/sessions/{session.pk}/accommodations/",
        {"extra_time": "2", "text_mode": "on"},
        follow=True,
    )
    session.refresh_from_db()
    assert (float(session.extra_time_multiplier), session.text_mode_required) == (2.0, True)
    assert "Accommodations of Ada saved." in text(saved)
    ExamSession.objects.filter(pk=session.pk).update(state="in_progress")
    refused = browser.post(
        f"/proctor/sessions/{session.pk}/accommodations/", {"extra_time": "1"}, follow=True
    )
    assert "Accommodations not changed" in text(refused)


def test_the_overview_filters_without_javascript(browser: Client, sitting: Sitting) -> None:
    for email in ("ada@example.test", "alan@example.test"):
        browser.post(f"/proctor/sittings/{sitting.pk}/candidates/", {"email": email})
    ExamSession.objects.filter(candidate__username="ada@example.test").update(state="in_progress")
    base = f"/proctor/sittings/{sitting.pk}/"
    everyone = text(browser.get(base))
    assert "ada@example.test" in everyone and "alan@example.test" in everyone
    assert "(2 of 2 shown)" in everyone
    searched = text(browser.get(base, {"q": "alan"}))
    assert "(1 of 2 shown)" in searched and "ada@example.test" not in searched


def test_an_action_form_reports_its_outcome(browser: Client, sitting: Sitting) -> None:
    browser.post(f"/proctor/sittings/{sitting.pk}/candidates/", {"email": "ada@example.test"})
    session = ExamSession.objects.get(sitting=sitting)
    page = f"/proctor/sessions/{session.pk}/"
    shown = text(browser.get(page))
    for heading in ("Instruct the examiner", "Extend time", "Report an irregularity"):
        assert heading in shown
    refused = text(
        browser.post(f"{page}actions/", {"action": "pause", "reason": "Break."}, follow=True)
    )
    assert "No examiner bot is running for this session" in refused
    invalid = text(browser.post(f"{page}actions/", {"action": "pause", "reason": ""}, follow=True))
    assert "Not sent: Give a reason" in invalid
    recorded = text(
        browser.post(
            f"{page}actions/",
            {
                "action": "flag_irregularity",
                "category": "technical",
                "reason": "Camera off.",
                "idempotency_key": "form-1",
            },
            follow=True,
        )
    )
    assert "Irregularity recorded in the session log." in recorded
    # The same form sent twice (a double click) acts once.
    browser.post(
        f"{page}actions/",
        {
            "action": "flag_irregularity",
            "category": "technical",
            "reason": "Camera off.",
            "idempotency_key": "form-1",
        },
    )
    assert SessionEvent.objects.filter(session=session, type="proctor_action").count() == 1
    assert ProctorActionRequest.objects.filter(session=session).count() == 2
