"""A whole voice exam in Chromium through hosted speech providers served by local protocol peers
(``tests/support/speech_server.py``): Deepgram's live WebSocket recogniser (interim results) and
OpenAI's speech endpoint, chosen by the server's settings (``VIVA_STT_PROVIDER=deepgram``,
``VIVA_TTS_PROVIDER=openai`` with base URLs on 127.0.0.1), exactly as a deployment chooses them.

Chromium's fake microphone loops a spoken answer (eSpeak NG, made at test time) with a pause
after it; every utterance reaches the recogniser over its real protocol, which answers with the
text a candidate would give at the current question (``ANSWERS``, as the text journey does):
the exam is driven by voice alone. While the candidate
speaks, the interim results are shown as the live caption in the exam room.

The test asks for the exam to reach its third question by voice (the whole exam, about fifteen
spoken answers, finishes too when the machine is not loaded; under load the looped microphone
talking over a long question and the examiner's per-turn deadline can make it repeat a question
for minutes: turn-taking's business, not the providers').
"""

from __future__ import annotations

import itertools
import os
import re
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from playwright.sync_api import Page, expect

from sessions.models import SessionEvent
from tests.browser.exam_journey import (
    ANSWERS,
    EXAMINER_TIMEOUT,
    VOICE_MODE,
    Exam,
    candidate_turns,
    choose_answer_mode,
    current_node,
    finished,
    schedule_exam,
)
from tests.browser.helpers import eventually, fake_microphone_page
from tests.support.processes import asgi_server
from tests.support.speech_server import SpeechServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
SPOKEN = "That is my answer."
EXAM_TIMEOUT = 240.0
QUESTIONS = 3
"""Questions the exam must have reached, the earlier ones answered by voice."""


def looped_answer_wav(path: Path) -> Path:
    """A short spoken sentence, then 12 s of silence (Chromium loops the file as the
    microphone): the examiner has time to finish a question before the candidate speaks again
    (a candidate talking over every question would be interrupting, a different test)."""
    from bot.voice.espeak import Voice, engine

    espeak = engine()
    pcm = espeak.synthesize(SPOKEN, Voice(name="en-us+f2", rate_wpm=150))
    rate = espeak.sample_rate
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(bytes(2 * rate) + pcm + bytes(2 * rate * 12))
    return path


class ExamCandidate:
    """What the candidate says at each question (the recogniser's answer for an utterance)."""

    def __init__(self, exam: Exam) -> None:
        self.exam = exam
        self.used: dict[str, int] = {}
        self.said: list[str] = []

    def _next(self) -> tuple[str, str]:
        try:
            node = current_node(self.exam.session) or "warmup"
        finally:
            connection.close()  # a peer thread: no connection left behind
        options = ANSWERS.get(node, ["That is my answer."])
        return node, options[min(self.used.get(node, 0), len(options) - 1)]

    def upcoming(self) -> str:
        return self._next()[1]

    def __call__(self, pcm16k: bytes) -> str:
        node, text = self._next()
        self.used[node] = self.used.get(node, 0) + 1
        self.said.append(text)
        return text


@pytest.fixture
def exam() -> Exam:
    return schedule_exam()


@pytest.fixture
def peer(exam: Exam) -> Iterator[SpeechServer]:
    with SpeechServer() as server:
        candidate = ExamCandidate(exam)
        server.transcribe, server.upcoming = candidate, candidate.upcoming
        yield server


@pytest.fixture
def provider_server(live_asgi_server: str, peer: SpeechServer) -> Iterator[str]:
    """daphne with the bot inline (SmallWebRTC) and the hosted providers pointed at the peer."""
    with asgi_server(
        DJANGO_ALLOW_ASYNC_UNSAFE="",
        VIVA_BOT_RUNNER="inline",
        VIVA_STT_PROVIDER="deepgram",
        VIVA_STT_BASE_URL=peer.deepgram_url,
        VIVA_STT_API_KEY="peer-key",
        VIVA_TTS_PROVIDER="openai",
        VIVA_TTS_BASE_URL=peer.base_url,
        VIVA_TTS_API_KEY="peer-key",
        VIVA_TTS_VOICE="alloy",
    ) as address:
        yield f"http://{address}"


@pytest.fixture
def voice_page(browser: Any, provider_server: str, tmp_path: Path) -> Iterator[Page]:
    wav = looped_answer_wav(tmp_path / "answer.wav")
    with fake_microphone_page(browser, wav, provider_server, "test_voice_providers") as page:
        yield page


def last_events(exam: Exam) -> list[str]:
    rows = SessionEvent.objects.filter(session=exam.session).order_by("-seq")[:30]
    return [
        f"{r.type}:{str(r.payload.get('text') or r.payload.get('message') or '')[:60]}"
        for r in reversed(rows)
    ]


def enter_voice_room(page: Page, exam: Exam) -> None:
    choose_answer_mode(page, exam, VOICE_MODE)
    page.get_by_role("button", name="Test my microphone").click()
    expect(page.get_by_text("We can hear you. Now play the test sound.")).to_be_visible()
    page.get_by_role("button", name="Play a test sound").click()
    expect(page.get_by_role("checkbox", name=re.compile("My microphone moved"))).to_be_checked()
    page.get_by_role("button", name="Go to the exam room").click()


@pytest.mark.timeout(420)
def test_a_voice_exam_on_hosted_providers_with_live_captions(
    voice_page: Page, exam: Exam, peer: SpeechServer
) -> None:
    page = voice_page
    enter_voice_room(page, exam)
    room_loaded = time.monotonic()
    start = page.get_by_role("button", name="Start the exam")
    expect(start).to_be_enabled(timeout=EXAMINER_TIMEOUT * 1000)
    start_enabled_after = time.monotonic() - room_loaded
    start.click()

    captions: list[str] = []

    def progress() -> bool:
        text = page.locator("#live-caption").text_content() or ""
        if text and (not captions or captions[-1] != text):
            captions.append(text)
        entered = SessionEvent.objects.filter(session=exam.session, type="node_entered").count()
        return finished(page) or entered >= QUESTIONS

    assert eventually(progress, EXAM_TIMEOUT), (
        f"the exam did not reach question {QUESTIONS} by voice: "
        f"{len(candidate_turns(page))} answers heard, node {current_node(exam.session)}; "
        f"last events: {last_events(exam)}"
    )

    # Every answer went through the recogniser's live protocol and became the candidate's turn.
    assert peer.sockets and peer.sockets[0].query["interim_results"] == "true"
    stored = [
        row.payload["text"]
        for row in SessionEvent.objects.filter(session=exam.session, type="transcript_final")
        if row.payload["speaker"] == "candidate"
    ]
    said = peer.transcribe.said  # type: ignore[attr-defined]
    assert stored and set(stored) <= set(said)
    # The candidate's spoken answers moved the exam on, question after question.
    entered = SessionEvent.objects.filter(session=exam.session, type="node_entered").count()
    assert finished(page) or entered >= QUESTIONS
    # Live captions: the interim results were shown while the candidate spoke.
    assert captions, "no live caption was shown"
    possible = [text for options in ANSWERS.values() for text in options]
    assert all(any(text.startswith(c) for text in possible) for c in captions), captions
    grew = [b for a, b in itertools.pairwise(captions) if b.startswith(a) and b != a]
    assert grew, f"no caption grew word by word: {captions}"
    # The examiner's voice came from the speech endpoint, in the configured voice.
    assert len(peer.speeches) >= 3 and {s["voice"] for s in peer.speeches} == {"alloy"}
    print(f"Start enabled {start_enabled_after:.2f} s after the room loaded")
