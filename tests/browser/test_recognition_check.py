"""A misheard spoken answer, checked and corrected by the candidate in Chromium (issue #30).

Seen before: an answer the recogniser was unsure of got "Could you say it again?" and nothing
else. The candidate could not see what had been heard, nor type what they had said.

A whole voice exam on Deepgram's live protocol (the local peer) with Chromium's fake microphone.
The peer mishears the first answer to the Dijkstra question: garbled words at confidence 0.42, as
a recogniser does with an unfamiliar voice. The exam room must then show what was heard, and let
the candidate type what they said. The typed words become the answer: the examiner goes on from
them, the log keeps both, and the exam is finished by voice.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from ioa.runtime.texts import ENGLISH
from tests.browser.exam_journey import ANSWERS, Exam, schedule_exam, start_voice_exam
from tests.browser.helpers import axe_violations, eventually, fake_microphone_page
from tests.browser.microphone import microphone_wav
from tests.browser.test_voice_providers import (
    EXAM_TIMEOUT,
    HOSTED,
    LEAD_SECS,
    LOOP_TAIL_SECS,
    SPOKEN,
    ExamCandidate,
    Stored,
    check_the_exam_log,
    completed,
)
from tests.support.processes import asgi_server
from tests.support.speech_server import SpeechServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEARD = "it keeps a ten to have distance for every vortex and repeatedly sells the unvisited"
"""What the recogniser made of the candidate's first answer to the Dijkstra question."""
CLEAR = 0.95


class MishearingCandidate(ExamCandidate):
    """The exam's answers, except that the first one at the Dijkstra question is misheard."""

    def __init__(self, exam: Exam, peer: SpeechServer) -> None:
        super().__init__(exam)
        self.peer = peer
        self.misheard = False

    def __call__(self, pcm16k: bytes) -> str:
        if not self.misheard and self._next()[0] == "q-dijkstra":
            self.misheard = True
            self.peer.confidence = 0.42
            return HEARD
        self.peer.confidence = CLEAR
        return super().__call__(pcm16k)


@pytest.fixture
def exam() -> Exam:
    return schedule_exam()


@pytest.fixture
def peer(exam: Exam) -> Iterator[SpeechServer]:
    with SpeechServer(confidence=CLEAR) as server:
        candidate = MishearingCandidate(exam, server)
        server.transcribe, server.upcoming = candidate, candidate.upcoming
        yield server


@pytest.fixture
def page(browser: Any, django_db_setup: None, peer: SpeechServer, tmp_path: Path) -> Iterator[Page]:
    env = HOSTED["deepgram"].environment(peer)
    with asgi_server(DJANGO_ALLOW_ASYNC_UNSAFE="", VIVA_BOT_RUNNER="inline", **env) as address:
        wav = microphone_wav(tmp_path / "answer.wav", [LEAD_SECS, SPOKEN, LOOP_TAIL_SECS]).path
        with fake_microphone_page(
            browser, wav, f"http://{address}", "test_recognition_check"
        ) as opened:
            yield opened


@pytest.mark.timeout(300)
def test_a_misheard_answer_is_shown_and_corrected_by_typing(
    page: Page, exam: Exam, peer: SpeechServer
) -> None:
    start_voice_exam(page, exam)
    check = page.get_by_role("region", name="Check what was heard")
    expect(check).to_be_visible(timeout=EXAM_TIMEOUT * 1000)
    # What was heard is shown, the examiner says why, and focus is on the check.
    expect(page.locator("#recognition-heard")).to_have_text(HEARD)
    expect(page.get_by_role("heading", name="Check what was heard")).to_be_focused()
    assert eventually(
        lambda: any(
            p["text"] == ENGLISH.stt_check
            for p in Stored.of(exam).payloads("examiner_utterance_final")
        ),
        15,
    ), "the examiner did not say why"
    assert axe_violations(page) == []

    said = ANSWERS["q-dijkstra"][0]
    box = page.get_by_role("textbox", name="Type what you said")
    expect(box).to_have_value(HEARD)  # the heard words, ready to be edited
    box.fill(said)
    box.press("Control+Enter")
    peer.transcribe.used["q-dijkstra"] = 1  # type: ignore[attr-defined]  # it was said now
    expect(check).to_be_hidden(timeout=15_000)
    # The misheard turn stays on screen, struck through, above the candidate's words.
    expect(page.locator(".turn.is-superseded .turn-text")).to_have_text(HEARD)
    expect(page.locator(".turn-candidate .turn-text").filter(has_text=said)).to_have_count(1)

    started = time.monotonic()
    done = eventually(lambda: completed(exam), EXAM_TIMEOUT)
    log = Stored.of(exam)
    assert done, (
        f"not completed {time.monotonic() - started:.0f} s after the correction:\n{log.summary()}"
    )
    check_the_exam_log(log)
    (corrected,) = log.payloads("transcript_corrected")
    assert (corrected["how"], corrected["originalText"]) == ("typed", HEARD)
    (misheard,) = log.payloads("transcript_final", text=HEARD)
    assert corrected["turnId"] == misheard["turnId"]
    (correction,) = log.payloads("transcript_final", turnId=corrected["correctionTurnId"])
    assert (correction["text"], correction["confidence"]) == (said, 1.0)
    # The examiner went on from the typed words: its next line is not another re-prompt, and
    # whatever evidence it found at the question cites the candidate's words, never the
    # misheard ones.
    cited = {t for p in log.payloads("evidence_signal", nodeId="q-dijkstra") for t in p["turnIds"]}
    assert misheard["turnId"] not in cited
    assert log.payloads("recognition_check") == [
        {"type": "recognition_check", "nodeId": "q-dijkstra", "turnIds": [misheard["turnId"]]}
    ]
