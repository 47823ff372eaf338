"""A German voice exam whose recogniser is down goes on typed, in Chromium (issue #30).

The offline recogniser hears English only, so a German exam has no recogniser in reserve. Seen
before: with the hosted recogniser down, the exam paused and resumed at every answer for as long
as the outage lasted, and the candidate had no way to answer.

The German demo exam in the voice room (German pages), OpenAI's transcription and speech
endpoints served by the local peer; the transcription endpoint refuses every request once the
exam has started, and the candidate keeps talking (Chromium's fake microphone). Once the outage
has lasted ``VIVA_SPEECH_FALLBACK_SECONDS`` the room must say, in German, that answers are typed
now, show its answer box with the focus in it (axe clean), and a typed answer must be stored and
answered by the examiner while the voice still speaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from bot.examiner_faults import TYPING_CODE
from ioa.runtime.texts import GERMAN
from sessions.models import ExamSession, SessionEvent
from tests.browser.exam_journey import EXAMINER_TIMEOUT, Exam, schedule_exam
from tests.browser.helpers import axe_violations, eventually, fake_microphone_page
from tests.browser.microphone import microphone_wav
from tests.browser.test_voice_providers import HOSTED
from tests.support.processes import asgi_server
from tests.support.speech_server import SpeechServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SAID = "Am meisten Freude hat mir das Thema kürzeste Wege gemacht."
TYPED = "Am meisten Freude hat mir das Thema Graphalgorithmen gemacht, vor allem kürzeste Wege."
FALLBACK_SECONDS = 6


@pytest.fixture
def exam() -> Exam:
    return schedule_exam(package="cs201-graph-algorithms.de", title="CS201 Mündliche Prüfungen")


@pytest.fixture
def peer() -> Iterator[SpeechServer]:
    with SpeechServer() as server:
        yield server


@pytest.fixture
def page(browser: Any, django_db_setup: None, peer: SpeechServer, tmp_path: Path) -> Iterator[Page]:
    env = HOSTED["openai_compatible"].environment(peer)
    with asgi_server(
        DJANGO_ALLOW_ASYNC_UNSAFE="",
        VIVA_BOT_RUNNER="inline",
        VIVA_BOT_FAULT_RETRY_SECONDS="2",
        VIVA_SPEECH_FALLBACK_SECONDS=str(FALLBACK_SECONDS),
        **env,
    ) as address:
        wav = microphone_wav(tmp_path / "said.wav", [11.0, SAID, 3.0]).path
        with fake_microphone_page(
            browser, wav, f"http://{address}", "test_typing_fallback"
        ) as opened:
            yield opened


def _codes(exam: Exam) -> list[str]:
    return [
        str(e.payload.get("code"))
        for e in SessionEvent.objects.filter(session=exam.session, type="system_error")
    ]


@pytest.mark.timeout(300)
def test_a_german_voice_exam_with_its_recogniser_down_goes_on_typed(
    page: Page, exam: Exam, peer: SpeechServer
) -> None:
    page.goto(exam.invitation_path)
    page.get_by_role("button", name="Weiter zu meiner Prüfung").click()
    page.get_by_role("checkbox", name=re.compile("Ich bin Ada Lovelace")).check()
    page.get_by_role("checkbox", name=re.compile("Ich verstehe, was aufgezeichnet")).check()
    page.get_by_role("button", name="Weiter zur Einweisung").click()
    page.get_by_role("button", name="Ich habe die Einweisung gelesen").click()
    page.get_by_role("radio", name="Sprache: Antworten sprechen").check()
    page.get_by_role("checkbox", name=re.compile("Mein Mikrofon hat den Pegelbalken")).check()
    page.get_by_role("button", name="Zum Prüfungsraum").click()
    start = page.get_by_role("button", name="Prüfung beginnen")
    expect(start).to_be_enabled(timeout=EXAMINER_TIMEOUT * 1000)
    # Voice: no answer box while the recogniser works.
    expect(page.get_by_role("textbox", name="Ihre Antwort eingeben")).to_be_hidden()
    peer.fail_for("transcriptions", 600)  # down from the start of the exam, for good
    start.click()

    box = page.get_by_role("textbox", name="Ihre Antwort eingeben")
    expect(box).to_be_visible(timeout=120_000)
    expect(page.locator("#request-feedback")).to_have_text(GERMAN.typing_fallback)
    expect(box).to_be_focused()
    assert axe_violations(page) == []
    assert TYPING_CODE in _codes(exam) and "stt_fault" in _codes(exam)
    assert peer.refused, "the outage was not met"

    box.fill(TYPED)
    page.get_by_role("button", name="Antwort senden").click()
    expect(page.locator(".turn-candidate .turn-text").filter(has_text=TYPED)).to_have_count(1)

    def answered() -> bool:
        events = list(
            SessionEvent.objects.filter(session=exam.session)
            .order_by("seq")
            .values_list("seq", "type", "payload")
        )
        typed = [s for s, t, p in events if t == "transcript_final" and p.get("text") == TYPED]
        return bool(typed) and any(
            s > typed[0] and t == "examiner_utterance_final" for s, t, _ in events
        )

    assert eventually(answered, EXAMINER_TIMEOUT), "the typed answer was not answered"
    # The exam carried on: in progress, not paused again by the still-failing recogniser.
    session = ExamSession.objects.get(pk=exam.session.pk)
    assert session.state == "in_progress", session.state
