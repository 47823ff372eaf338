"""The candidate's exam room in a real browser, end to end: invitation link → identity and
consent → briefing → text mode → waiting for the examiner → the exam with the offline examiner
(the bot runs inline in the live daphne server, the embedded default) → the completion page.

Elements are found by role, label and accessible name only. Every WebSocket frame the page
receives is captured (``page.on("websocket")``) and checked against the package's evidence
target ids, descriptions and rubric level texts. axe-core runs on every step; screenshots of
every step are written to ``test-artifacts/screens/`` and, with ``VIVA_SCREENS_DOCS=1``, copied
to ``docs/screens/`` (the reviewed set).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import Locator, Page, WebSocket, WebSocketRoute, expect

from sessions.models import SessionEvent
from sessions.selectors import verify_log
from tests.browser.exam_journey import (  # noqa: F401 (re-exported for other browser tests)
    ANSWERS,
    EXAMINER_TIMEOUT,
    VOICE_MODE,
    Exam,
    answer,
    bot_runner,
    candidate_turns,
    check_step,
    choose_answer_mode,
    current_node,
    examiner_turns,
    finished,
    go_through_the_journey,
    schedule_exam,
    take_the_exam,
    transcript,
    wait_for_examiner,
    wait_until_quiet,
)
from tests.browser.helpers import (
    eventually,
    fake_microphone_page,
    screenshot,
)
from tests.factories import example_document
from tests.support.processes import asgi_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture(scope="module", autouse=True)
def bot_runner_process(live_asgi_server: str) -> Iterator[str]:
    with bot_runner() as name:
        yield name


@pytest.fixture
def exam() -> Exam:
    """A published CS201 exam, one candidate's session, and their invitation link."""
    return schedule_exam()


@dataclass
class Frames:
    """Every WebSocket frame the page received, as text."""

    received: list[str] = field(default_factory=list)

    def events(self) -> list[dict[str, Any]]:
        out = []
        for raw in self.received:
            frame = json.loads(raw)
            if frame.get("kind") == "event":
                out.append(frame["event"])
        return out


@pytest.fixture
def frames(page: Page) -> Frames:
    captured = Frames()

    def on_socket(socket: WebSocket) -> None:
        socket.on(
            "framereceived",
            lambda payload: captured.received.append(
                payload if isinstance(payload, str) else payload.decode()
            ),
        )

    page.on("websocket", on_socket)
    return captured


def package_secrets() -> list[str]:
    """Evidence target ids, descriptions and rubric level texts of the package."""
    secrets: list[str] = []
    for node in example_document()["nodes"]:
        for target in node.get("evidenceTargets", []):
            secrets += [target["id"], target["description"]]
            for level in target.get("rubricDescriptor", {}).get("levels", {}).values():
                secrets.append(level["description"])
        if node.get("promptSeed"):
            secrets.append(node["promptSeed"])
    return secrets


FORBIDDEN_TYPES = {
    "evidence_signal",
    "follow_up_used",
    "transition_decision",
    "guardrail_triggered",
    "hesitation_detected",
    "self_correction_detected",
    "misconception_detected",
    "proctor_instruction",
    "usage_reported",
}


# --- the tests ------------------------------------------------------------------------------------


def test_text_mode_exam_from_invitation_to_completion(
    page: Page, exam: Exam, frames: Frames
) -> None:
    go_through_the_journey(page, exam)
    expect(page.get_by_text("Part 1 of 4: Warm-up", exact=True)).to_be_visible()
    # Screen readers hear the examiner's words and the changes as they happen.
    announcements = page.get_by_role("status", name="Announcements")
    expect(announcements).to_contain_text("Dr. Lee: Hello, and welcome.")
    expect(announcements).to_contain_text("Part 1 of 4: Warm-up.")
    expect(page.get_by_role("timer").first).not_to_have_text("--:--")
    check_step(page, "06-exam-first-question")

    def midway(turn: int) -> None:
        if turn == 1:
            check_step(page, "07-exam-answering")

    sent = take_the_exam(page, exam, after_each=midway)
    expect(page.get_by_text("The exam has finished. Thank you.")).to_be_visible()
    check_step(page, "08-exam-finished")
    page.get_by_role("link", name="Continue to the completion page").click()
    expect(page.get_by_role("heading", level=1, name="Your exam is complete")).to_be_visible(
        timeout=EXAMINER_TIMEOUT * 1000
    )
    check_step(page, "09-completion")

    # The stored log: the whole exam, intact, and the page showed each answer once.
    exam.session.refresh_from_db()
    assert exam.session.state == "completed"
    assert verify_log(session_id=exam.session.pk) == []
    types = list(
        SessionEvent.objects.filter(session=exam.session)
        .order_by("seq")
        .values_list("type", flat=True)
    )
    for expected in ("bot_ready", "exam_state_changed", "node_entered", "transcript_final"):
        assert expected in types
    assert types.count("exam_completed") == 1
    answers = [
        row.payload["text"]
        for row in SessionEvent.objects.filter(session=exam.session, type="transcript_final")
        if row.payload["speaker"] == "candidate"
    ]
    assert answers == sent

    # Nothing the page received carried evidence, rubric text or guardrail internals.
    events = frames.events()
    assert events, "no event frames were captured"
    assert not {e["type"] for e in events} & FORBIDDEN_TYPES
    everything = "\n".join(frames.received)
    for secret in package_secrets():
        assert secret not in everything, f"the page received {secret!r}"
    for event in events:
        assert "rubricItemIds" not in event["payload"]
        assert "confidence" not in event["payload"]


def test_reload_mid_exam_shows_the_transcript_once(page: Page, exam: Exam) -> None:
    go_through_the_journey(page, exam, shots=False)
    wait_for_examiner(page, 0)
    answer(page, ANSWERS["warmup"][0])
    wait_for_examiner(page, 1)
    answer(page, ANSWERS["q-dijkstra"][0])
    wait_for_examiner(page, 2)
    wait_until_quiet(page)
    before_examiner = examiner_turns(page)
    before_candidate = candidate_turns(page)
    assert len(before_candidate) == 2

    page.reload()
    expect(page.get_by_role("heading", level=1, name="Exam room")).to_be_visible()
    assert eventually(
        lambda: page.evaluate("() => window.vivaExamRoom && window.vivaExamRoom.live")
    )
    assert examiner_turns(page) == before_examiner
    assert candidate_turns(page) == before_candidate
    # Still live after the reload: the next answer gets the examiner's next turn, once.
    answer(page, ANSWERS["q-dijkstra"][1])
    wait_for_examiner(page, len(before_examiner))
    after = transcript(page).all_inner_texts()
    assert len(after) == len(set(after)), "a turn is shown twice"
    assert candidate_turns(page)[-1].endswith(ANSWERS["q-dijkstra"][1])
    screenshot(page, "after-reload")


def test_pause_and_resume(page: Page, exam: Exam) -> None:
    go_through_the_journey(page, exam, shots=False)
    wait_for_examiner(page, 0)
    page.get_by_role("button", name="Pause the exam").click()
    banner = page.get_by_text(
        "The exam is paused. Both clocks have stopped. Resume when you are ready.", exact=True
    )
    expect(banner).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    expect(page.get_by_role("textbox", name="Type your answer")).to_be_disabled()
    expect(page.get_by_role("link", name="Continue to the completion page")).to_be_hidden()
    timer = page.get_by_role("timer", name="Time left in the exam")
    frozen = timer.inner_text()
    time.sleep(2.2)
    assert timer.inner_text() == frozen, "the exam clock kept running while paused"
    larger = page.get_by_role("button", name="Larger text")
    larger.click()
    expect(larger).to_have_attribute("aria-pressed", "true")
    check_step(page, "10-paused")
    larger.click()
    expect(larger).to_have_attribute("aria-pressed", "false")

    page.get_by_role("button", name="Resume the exam").first.click()
    expect(banner).to_be_hidden(timeout=EXAMINER_TIMEOUT * 1000)
    expect(page.get_by_role("textbox", name="Type your answer")).to_be_enabled()
    types = list(
        SessionEvent.objects.filter(session=exam.session, type="exam_state_changed")
        .order_by("seq")
        .values_list("payload__toState", flat=True)
    )
    assert types[-2:] == ["paused", "in_progress"]
    commands = [
        (row.payload["command"], row.payload["accepted"])
        for row in SessionEvent.objects.filter(
            session=exam.session, type="candidate_command_received"
        ).order_by("seq")
    ]
    assert commands == [("pause", True), ("resume", True)]


def test_dropped_connection_reconnects_without_loss_or_duplicates(page: Page, exam: Exam) -> None:
    go_through_the_journey(page, exam, shots=False)
    wait_for_examiner(page, 0)
    # The network goes away: new sockets are refused until it is back.
    network = {"up": False}

    def route(socket: WebSocketRoute) -> None:
        if network["up"]:
            socket.connect_to_server()
        else:
            socket.close()

    page.route_web_socket(re.compile(r"/ws/sessions/"), route)
    page.evaluate("() => window.vivaExamRoom.dropConnection()")
    banner = page.get_by_text(
        "Connection lost. Reconnecting… Nothing you said or typed is lost.", exact=True
    )
    expect(banner).to_be_visible()
    expect(page.get_by_role("button", name="Send answer")).to_be_disabled()
    check_step(page, "11-reconnecting")
    network["up"] = True
    expect(banner).to_be_hidden(timeout=15_000)
    answer(page, ANSWERS["warmup"][0])
    wait_for_examiner(page, 1)
    # Dropped while the examiner's next turn is on its way: caught up on reconnection, once.
    page.evaluate("() => window.vivaExamRoom.dropConnection()")
    answer(page, ANSWERS["q-dijkstra"][0])  # Send waits for the socket to be back; sent once
    wait_for_examiner(page, len(examiner_turns(page)))
    texts = transcript(page).all_inner_texts()
    assert len(texts) == len(set(texts)), "a turn is shown twice"
    stored = [
        row.payload["text"]
        for row in SessionEvent.objects.filter(session=exam.session, type="transcript_final")
        if row.payload["speaker"] == "candidate"
    ]
    assert stored == [ANSWERS["warmup"][0], ANSWERS["q-dijkstra"][0]]


def test_keyboard_only_requests_end_and_emergency_stop(page: Page, exam: Exam) -> None:
    go_through_the_journey(page, exam, shots=False)
    wait_for_examiner(page, 0)
    box = page.get_by_role("textbox", name="Type your answer")
    box.focus()
    page.keyboard.type(ANSWERS["warmup"][0])
    page.keyboard.press("Control+Enter")
    wait_for_examiner(page, 1)
    expect(box).to_be_focused()

    # Every request is answered visibly: "Repeat the question" by Tab and Enter.
    repeat = page.get_by_role("button", name="Repeat the question")
    tab_to(page, repeat)
    page.keyboard.press("Enter")
    expect(page.get_by_role("status", name="Request status")).to_have_text(
        "The examiner will repeat the question.", timeout=EXAMINER_TIMEOUT * 1000
    )

    # End the exam asks first; Escape keeps the exam going and focus comes back.
    end = page.get_by_role("button", name="End the exam")
    tab_to(page, end)
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="End the exam now?")
    expect(dialog).to_be_visible()
    expect(page.get_by_role("button", name="No, continue the exam")).to_be_focused()
    check_step(page, "12-end-exam-confirmation")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(end).to_be_focused()

    # Emergency stop: confirmed with Enter (the confirm button has focus), the exam stops.
    tab_to(page, page.get_by_role("button", name="Emergency stop"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Stop the exam now")).to_be_focused()
    page.keyboard.press("Enter")
    done = page.get_by_role("link", name="Continue to the completion page")
    expect(done).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    expect(done).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/done/$"), timeout=EXAMINER_TIMEOUT * 1000)
    expect(page.get_by_role("heading", level=1, name="Your exam has ended")).to_be_visible(
        timeout=EXAMINER_TIMEOUT * 1000
    )
    exam.session.refresh_from_db()
    assert exam.session.state == "aborted"
    commands = [
        row.payload["command"]
        for row in SessionEvent.objects.filter(
            session=exam.session, type="candidate_command_received"
        ).order_by("seq")
    ]
    assert commands == ["repeat", "emergency_stop"]


def tab_to(page: Page, target: Locator, limit: int = 40) -> None:
    """Press Tab until ``target`` has focus (keyboard-only navigation)."""
    for _ in range(limit):
        if target.evaluate("(el) => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{target} is not reachable with Tab")


# --- voice ----------------------------------------------------------------------------------------

SPOKEN_ANSWER = "I think the answer is one hundred."


def spoken_answer_wav(path: Path) -> Path:
    """``SPOKEN_ANSWER`` spoken by eSpeak NG (the bot's own binding: the espeakng-loader wheel),
    with silence around it: Chromium loops the file as the fake microphone."""
    import wave

    from bot.voice.espeak import Voice, engine

    espeak = engine()
    pcm = espeak.synthesize(SPOKEN_ANSWER, Voice(name="en-us+f2", rate_wpm=140))
    silence = bytes(2 * espeak.sample_rate * 2)  # 2 s of 16-bit mono silence
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(espeak.sample_rate)
        out.writeframes(silence + pcm + silence)
    return path


def voice_prerequisites() -> str | None:
    """Why the voice test cannot run here, or ``None``."""
    from django.urls import NoReverseMatch, reverse

    try:
        reverse("voice:webrtc-offer", kwargs={"session_id": "00000000-0000-0000-0000-000000000000"})
    except NoReverseMatch:
        return "the voice signalling URLs (bot.urls, namespace 'voice') are not mounted"
    try:
        from bot.voice.webrtc import resolve_bot_starter

        resolve_bot_starter()
    except Exception as error:
        return f"no SmallWebRTC bot starter: {error}"
    return None


@pytest.fixture
def voice_server(live_asgi_server: str) -> Iterator[str]:
    """The server the voice test talks to. SmallWebRTC needs the bot in the web process (the
    aiortc peer lives there), so where bots otherwise run on Celery a second daphne on the same
    database runs them inline."""
    if settings.VIVA_BOT_RUNNER == "inline":
        yield live_asgi_server
        return
    with asgi_server(DJANGO_ALLOW_ASYNC_UNSAFE="", VIVA_BOT_RUNNER="inline") as address:
        yield f"http://{address}"


@pytest.fixture
def voice_page(browser: Any, voice_server: str, tmp_path: Path) -> Iterator[Page]:
    """A Chromium whose microphone is a WAV of a spoken answer (fake capture device)."""
    reason = voice_prerequisites()
    if reason:
        if CI:
            pytest.fail(f"CI=true: {reason}", pytrace=False)
        pytest.skip(reason)
    wav = spoken_answer_wav(tmp_path / "answer.wav")
    with fake_microphone_page(
        browser, wav, voice_server, "test_exam_room__test_voice_mode"
    ) as page:
        yield page


def test_voice_mode_spoken_answer_becomes_the_candidates_transcript(
    voice_page: Page, exam: Exam
) -> None:
    page = voice_page
    choose_answer_mode(page, exam, VOICE_MODE)
    page.get_by_role("button", name="Test my microphone").click()
    expect(page.get_by_text("We can hear you. Now play the test sound.")).to_be_visible()
    page.get_by_role("button", name="Play a test sound").click()
    expect(page.get_by_role("checkbox", name=re.compile("My microphone moved"))).to_be_checked()
    check_step(page, "04b-voice-audio-check")
    page.get_by_role("button", name="Go to the exam room").click()

    expect(page.get_by_text("Audio connected.")).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)
    start = page.get_by_role("button", name="Start the exam")
    expect(start).to_be_enabled(timeout=EXAMINER_TIMEOUT * 1000)
    start.click()
    expect(page.get_by_role("heading", name="Your answer")).to_be_visible(
        timeout=EXAMINER_TIMEOUT * 1000
    )
    wait_for_examiner(page, 0)
    # The fake microphone keeps saying the answer; the offline STT turns it into a transcript.
    assert eventually(lambda: candidate_turns(page), 60.0), "no spoken answer was transcribed"
    check_step(page, "06b-voice-exam")
    heard = candidate_turns(page)[0].removeprefix("You").strip().lower()
    assert heard, "an empty transcript"
    stored = [
        row.payload
        for row in SessionEvent.objects.filter(session=exam.session, type="transcript_final")
        if row.payload["speaker"] == "candidate"
    ]
    assert stored and stored[0]["text"].strip().lower() == heard
    assert set(heard.split()) & set(SPOKEN_ANSWER.lower().rstrip(".").split())
