"""Two parts of the proctor's pages in a real browser, against a daphne server configured for
them (LiveKit voice pointing at a port where nothing listens — there is no LiveKit server on
this machine — and a 2 s disconnection alert):

* the candidate's connection: the candidate's exam-room socket (a real WebSocket client) opens,
  closes and comes back; the overview row and the session page follow live, the alert appears
  and is cleared;
* *Listen in*: the player's bundle loads without a console error, the button asks for a
  listen-only token, tries the room, never touches the microphone, and reports the failed
  connection in words; a text session shows the reason instead of the control.

Elements are found by role and accessible name; axe-core runs on each page.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from playwright.sync_api import Browser, ConsoleMessage, Error, Page, Request, expect
from websockets.sync.client import ClientConnection, connect

from sessions.event_store import append_events
from sessions.models import ExamSession, Sitting
from tests.bot.conftest import publish_example
from tests.browser.helpers import (
    SCREENS,
    axe_violations,
    remember_artifact_name,
    screenshot,
)
from tests.factories import PASSWORD, CandidateFactory, ProctorFactory
from tests.sessions.factories import exam_started
from tests.support.processes import asgi_server, free_port

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOWHERE = free_port()
"""A port with no LiveKit server behind it."""
LIVEKIT_URL = f"ws://127.0.0.1:{NOWHERE}"
ALERT_SECONDS = 6
"""How long the last tab may be gone before the row says disconnected and alerts: long enough
for the "Reconnecting" state to be seen when the close reaches the page a few seconds late on a
loaded machine (at 2 s, CI saw the row go from "Connected" straight to "Disconnected")."""
ALERTED_MS = (ALERT_SECONDS + 10) * 1000


@pytest.fixture(scope="module")
def server(django_db_setup: None) -> Iterator[str]:
    with asgi_server(
        DJANGO_ALLOW_ASYNC_UNSAFE="",
        VIVA_VOICE_TRANSPORT="livekit",
        VIVA_LIVEKIT_URL=LIVEKIT_URL,
        LIVEKIT_API_KEY="devkey",
        LIVEKIT_API_SECRET="secret-for-tests-only-0123456789abcdef",
        VIVA_CANDIDATE_DISCONNECT_ALERT_SECONDS=str(ALERT_SECONDS),
    ) as address:
        yield address


class Watched:
    """A page and what its browser reported."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.console: list[str] = []
        self.errors: list[str] = []
        self.requests: list[Request] = []
        self.sockets: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught exception: {error}"))
        page.on("request", lambda request: self.requests.append(request))
        page.on("websocket", lambda ws: self.sockets.append(ws.url))

    def _console(self, message: ConsoleMessage) -> None:
        self.console.append(f"{message.type}: {message.text}")
        if message.type == "error" and "Content Security Policy" in message.text:
            self.errors.append(f"CSP violation: {message.text}")

    def console_errors(self) -> list[str]:
        return [m for m in self.console if m.startswith("error:")]


@pytest.fixture
def watched(browser: Browser, server: str, request: pytest.FixtureRequest) -> Iterator[Watched]:
    context = browser.new_context(
        base_url=f"http://{server}", viewport={"width": 1280, "height": 900}, locale="en-GB"
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    name = re.sub(
        r"[^A-Za-z0-9_.-]+", "_", f"test_proctor_connection_and_listen__{request.node.name}"
    )
    remember_artifact_name(page, name)
    seen = Watched(page)
    try:
        yield seen
    finally:
        SCREENS.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(Error):
            page.screenshot(path=SCREENS / f"{name}.png", full_page=True)
        remember_artifact_name(page, None)
        context.close()
    assert seen.errors == [], "\n".join(seen.errors + seen.console)


def sign_in(page: Page, user: Any) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def check(page: Page, step: str) -> None:
    violations = axe_violations(page)
    assert violations == [], f"{step}: {json.dumps(violations, indent=2)}"
    screenshot(page, step)


def new_session(mode: str, name: str = "Ada Lovelace") -> tuple[ExamSession, Any]:
    version = publish_example()
    proctor = ProctorFactory(display_name="Priya Proctor")
    sitting = Sitting.objects.create(version=version, title="Morning", created_by=proctor)
    sitting.proctors.add(proctor)
    candidate = CandidateFactory(display_name=name)
    session = ExamSession.objects.create(sitting=sitting, candidate=candidate, exam_mode=mode)
    return session, proctor


def start_exam(session: ExamSession) -> None:
    """The exam is in progress (stored in a thread of its own: this one runs Playwright's loop,
    in which the store's after-commit publishing could not run)."""

    def store() -> None:
        try:
            append_events(session=session, events=exam_started(session))
        finally:
            connection.close()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(store).result()


def exam_room_socket(server: str, session: ExamSession) -> ClientConnection:
    """The candidate's exam-room socket, as the room page opens it (live once caught up)."""
    client = Client()
    client.force_login(session.candidate)
    ws = connect(
        f"ws://{server}/ws/sessions/{session.pk}/events/",
        origin=f"http://{server}",  # type: ignore[arg-type]
        additional_headers={"Cookie": f"sessionid={client.cookies['sessionid'].value}"},
        open_timeout=15,
    )
    while json.loads(ws.recv(timeout=15))["kind"] != "caught_up":
        pass
    return ws


# --- the candidate's connection ------------------------------------------------------------------


def test_the_dashboard_shows_the_candidates_connection_live(watched: Watched, server: str) -> None:
    session, proctor = new_session("text")
    start_exam(session)
    page = watched.page
    sign_in(page, proctor)
    page.goto(f"/proctor/sittings/{session.sitting_id}/")
    row = page.get_by_role("table", name=re.compile("Candidates of")).get_by_role(
        "row", name=re.compile("Ada Lovelace")
    )
    expect(page.get_by_role("status", name="Live updates", exact=True)).to_have_text(
        re.compile("^Live: 1 candidate")
    )
    expect(row).to_contain_text("Candidate: Not connected yet")

    first = exam_room_socket(server, session)
    expect(row).to_contain_text("Candidate: Connected")
    second = exam_room_socket(server, session)
    expect(row).to_contain_text("Candidate: Connected in 2 tabs")
    first.close()
    expect(row).to_contain_text(re.compile(r"Candidate: Connected(?! in)"))

    # The last tab goes: reconnecting, then disconnected with an alert.
    second.close()
    expect(row).to_contain_text("Candidate: Reconnecting (offline since")
    alerts = page.get_by_role("list", name="Alerts needing attention", exact=True)
    alert = alerts.get_by_role("listitem").filter(has_text="Candidate disconnected: Ada Lovelace")
    expect(alert).to_be_visible(timeout=ALERTED_MS)
    expect(page.get_by_role("alert", name="New alerts")).to_contain_text(
        "Candidate disconnected: Ada Lovelace."
    )
    expect(row).to_contain_text("Candidate: Disconnected since")
    page.get_by_role("combobox", name="Show", exact=True).select_option(label="Needs attention")
    expect(row).to_be_visible()
    check(page, "01-overview-candidate-disconnected")

    # The session page says the same.
    session_page = page.context.new_page()
    remember_artifact_name(session_page, "test_proctor_connection_and_listen__session")
    session_page.goto(f"/proctor/sessions/{session.pk}/")
    summary = session_page.get_by_role("definition").filter(has_text="Disconnected since")
    expect(summary).to_be_visible()

    # Back: the alert is cleared on both pages' terms, one reconnect counted.
    back = exam_room_socket(server, session)
    expect(alert).to_have_count(0)
    expect(page.get_by_role("alert", name="New alerts")).to_contain_text(
        "Reconnected: Ada Lovelace."
    )
    page.get_by_role("combobox", name="Show", exact=True).select_option(label="All candidates")
    expect(row).to_contain_text("Candidate: Connected · 1 reconnect")
    expect(
        session_page.get_by_role("definition").filter(has_text="Connected · 1 reconnect")
    ).to_be_visible()
    expect(session_page.get_by_role("status", name="Session changes")).to_contain_text(
        "The candidate is connected again."
    )
    expect(session_page.get_by_role("list", name="Event timeline")).to_contain_text(
        "candidate_connection_changed — candidate connected after"
    )
    check(session_page, "02-session-candidate-back")
    back.close()
    session_page.close()


# --- listen in ---------------------------------------------------------------------------------


def test_listen_in_asks_a_listen_only_token_and_reports_an_unreachable_room(
    watched: Watched,
) -> None:
    session, proctor = new_session("voice")
    start_exam(session)
    page = watched.page
    # Count microphone requests: listening must never ask for one.
    page.add_init_script(
        "window.__micRequests = 0;"
        "if (navigator.mediaDevices) { const gum = navigator.mediaDevices.getUserMedia.bind("
        "navigator.mediaDevices); navigator.mediaDevices.getUserMedia = (c) => {"
        " window.__micRequests += 1; return gum(c); }; }"
    )
    sign_in(page, proctor)
    page.goto(f"/proctor/sessions/{session.pk}/")
    listen = page.get_by_role("region", name="Listen in")
    start = listen.get_by_role("button", name="Listen in", exact=True)
    expect(start).to_be_visible()
    assert page.evaluate("() => typeof window.VivaProctorListen.create") == "function"
    assert watched.console_errors() == []  # the bundle loads cleanly
    state = listen.get_by_role("status", name="Listening")
    expect(state).to_have_text("Not listening.")
    speakers = listen.get_by_role("list", name="Who is speaking")
    expect(speakers).to_contain_text("Ada Lovelace (candidate): not listening")
    check(page, "03-listen-in-offered")

    # Keyboard only: focus the button, press Enter.
    with page.expect_response(re.compile(r"/livekit/token$")) as answered:
        start.focus()
        page.keyboard.press("Enter")
    token = answered.value
    assert token.request.method == "POST"
    assert token.request.headers.get("x-csrftoken")
    grant = token.json()
    assert token.status == 200 and grant["role"] == "proctor"
    assert grant["url"] == LIVEKIT_URL and grant["room"] == f"viva-session-{session.pk}"

    # Nothing listens there: a visible, spoken error; back to the start button, focused.
    expect(state).to_have_text(
        re.compile(
            rf"^Could not listen in: Could not connect to the LiveKit server at {LIVEKIT_URL}"
        ),
        timeout=30_000,
    )
    expect(start).to_be_visible()
    expect(start).to_be_focused()
    expect(listen.get_by_role("button", name="Stop listening")).to_be_hidden()
    assert any(url.startswith(f"{LIVEKIT_URL}/rtc") for url in watched.sockets), watched.sockets
    assert page.evaluate("() => window.__micRequests") == 0
    assert page.evaluate("() => window.vivaProctorListen.state") == "failed"
    check(page, "04-listen-in-unreachable")


def test_listen_in_is_explained_not_offered_for_a_text_session(watched: Watched) -> None:
    session, proctor = new_session("text", name="Grace Hopper")
    page = watched.page
    sign_in(page, proctor)
    page.goto(f"/proctor/sessions/{session.pk}/")
    listen = page.get_by_role("region", name="Listen in")
    expect(listen).to_contain_text("This candidate answers in writing")
    expect(listen.get_by_role("button")).to_have_count(0)
    assert not any("proctor-listen.js" in r.url for r in watched.requests)
    assert watched.console_errors() == []
