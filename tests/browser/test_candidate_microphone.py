"""The voice tests' microphone sends through a pause as a real one does (issue #30).

A real microphone delivers audio between words (its own noise) and the exam room's WebRTC
connection sends a packet every 20 ms. The voice tests' microphone (``candidate_voice``) is a Web
Audio stream; when nothing played into it, Chromium delivered nothing and the connection sent no
packet in a pause. The bot's WebRTC stack holds the last packets it got until the next one comes,
so the end of each answer (~100 ms) reached the recogniser only after the pause: in the offline
exam Whisper heard "let me think," as "let me sing." (the same audio decoded whole: "think").
This test holds the microphone to a real one's behaviour: packets keep coming in a pause after
speech, at the rate they come while the candidate speaks.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.candidate_voice import Answer, Fragment, SpokenScript, say
from tests.browser.exam_journey import Exam, schedule_exam, start_voice_exam
from tests.browser.helpers import eventually
from tests.browser.test_voice_natural_answers import VOICES, examiner_waits, voice_exam_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PACKETS_SENT = """async () => {
  let sent = 0;
  for (const peer of window.__candidatePeers) {
    const report = await peer.getStats();
    report.forEach((entry) => {
      if (entry.type === "outbound-rtp" && entry.kind === "audio") sent += entry.packetsSent;
    });
  }
  return sent;
}"""
PAUSE_SECS = 2.0
PACKET_SECS = 0.02
"""Chromium's Opus packets carry 20 ms."""


@pytest.fixture
def exam() -> Exam:
    return schedule_exam()


@pytest.fixture
def page(browser: Any, django_db_setup: None) -> Iterator[Page]:
    with voice_exam_page(browser, "test_candidate_microphone") as opened:
        yield opened


def packets_sent(page: Page) -> int:
    return int(page.evaluate(PACKETS_SENT))


@pytest.mark.timeout(180)
def test_the_microphone_keeps_sending_in_a_pause_after_speech(page: Page, exam: Exam) -> None:
    start_voice_exam(page, exam)
    assert eventually(lambda: examiner_waits(exam), 90), "the examiner never asked"
    answer = Answer((Fragment("I liked the part on graph algorithms, let me think,"),), VOICES[2])
    said = say(page, SpokenScript(), answer)
    assert said[0].ended is not None
    before = packets_sent(page)
    time.sleep(PAUSE_SECS)
    in_the_pause = packets_sent(page) - before
    expected = PAUSE_SECS / PACKET_SECS
    assert in_the_pause >= 0.8 * expected, (
        f"{in_the_pause} packets sent in a {PAUSE_SECS:g}-s pause; a microphone sends "
        f"{expected:.0f}"
    )
