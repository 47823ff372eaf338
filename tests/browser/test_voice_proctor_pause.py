"""A proctor's pause and an instruction sent during it, in a voice exam (issue 15): the
candidate in Chromium with a fake microphone (SmallWebRTC, the bot inline in daphne, eSpeak NG
speaking), the proctor in a second browser.

Seen live: an immediate instruction sent while the exam was paused was never spoken but shown
as applied, and after the resume it took the candidate's next turn. Here the candidate is
silent at the warm-up when the proctor pauses; the candidate is told why they wait and offered
no resume; the instruction sent meanwhile is reported as waiting for the resume; after the
resume its audio plays once (an ``examiner_utterance_final`` with the instruction's text and a
duration), after the welcome back; nothing is said while the exam is paused.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.exam_journey import EXAMINER_TIMEOUT, Exam, schedule_exam, start_voice_exam
from tests.browser.helpers import eventually, second_person_page
from tests.browser.microphone import Timeline, microphone_wav
from tests.browser.test_proctor_pause import open_session_page, proctor_act
from tests.browser.test_voice_turn_taking import of, stored, summary, voice_page
from tests.factories import ProctorFactory
from tests.support.processes import asgi_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INSTRUCTION = "Please keep your camera pointed at your desk."
TIMEOUT_MS = EXAMINER_TIMEOUT * 1000


@pytest.fixture(scope="module")
def voice_server(django_db_setup: None) -> Iterator[str]:
    """daphne with the bots inline: SmallWebRTC's peer lives in the web process."""
    with asgi_server(DJANGO_ALLOW_ASYNC_UNSAFE="", VIVA_BOT_RUNNER="inline") as address:
        yield f"http://{address}"


@pytest.fixture
def candidate(browser: Any, voice_server: str, tmp_path: Path) -> Iterator[Page]:
    silence: Timeline = microphone_wav(tmp_path / "silence.wav", [30.0])
    yield from voice_page(browser, voice_server, str(silence.path), "voice_proctor_pause")


@pytest.fixture
def proctor_page(browser: Browser, voice_server: str) -> Iterator[Page]:
    with second_person_page(browser, voice_server) as page:
        yield page


def test_an_instruction_sent_while_a_voice_exam_is_paused_is_spoken_after_the_resume(
    candidate: Page, proctor_page: Page
) -> None:
    exam: Exam = schedule_exam()
    proctor = ProctorFactory(display_name="Priya Proctor")
    exam.session.sitting.proctors.add(proctor)
    start_voice_exam(candidate, exam)
    assert eventually(
        lambda: of(stored(exam), "examiner_utterance_final", nodeId="warmup"), EXAMINER_TIMEOUT
    ), summary(stored(exam))
    open_session_page(proctor_page, exam, proctor)

    proctor_act(proctor_page, "Pause or resume", "Pause the exam", "Noise.", "Pause: done.")
    expect(
        candidate.get_by_text(re.compile("Only your proctor can resume it: please wait."))
    ).to_be_visible(timeout=TIMEOUT_MS)
    expect(candidate.get_by_role("button", name="Resume the exam")).to_have_count(0)

    instruct = proctor_page.get_by_role("form", name="Instruct the examiner", exact=True)
    instruct.get_by_role("textbox", name="Instruction", exact=True).fill(INSTRUCTION)
    instruct.get_by_role("radio", name=re.compile("^Now: spoken at once")).check()
    proctor_act(
        proctor_page,
        "Instruct the examiner",
        "Send the instruction",
        "The camera shows the ceiling.",
        re.compile(
            "^Instruction sent: the exam is paused, so the examiner delivers it right after"
        ),
    )
    time.sleep(3)
    events = stored(exam)
    paused = [e for e in of(events, "exam_state_changed") if e.payload["toState"] == "paused"][-1]
    said_while_paused = [
        e.payload["text"] for e in of(events, "examiner_utterance_final") if e.seq > paused.seq
    ]
    assert INSTRUCTION not in said_while_paused, summary(events)

    proctor_act(proctor_page, "Pause or resume", "Resume the exam", "Quiet.", "Resume: done.")
    assert eventually(
        lambda: of(stored(exam), "examiner_utterance_final", text=INSTRUCTION), EXAMINER_TIMEOUT
    ), summary(stored(exam))
    events = stored(exam)
    resumed = [e for e in of(events, "exam_state_changed") if e.payload["toState"] == "in_progress"]
    spoken = of(events, "examiner_utterance_final", text=INSTRUCTION)
    assert len(spoken) == 1 and spoken[0].seq > resumed[-1].seq, summary(events)
    assert spoken[0].payload["durationMs"] > 500, summary(events)  # its audio played
    assert [e.payload["status"] for e in of(events, "proctor_instruction")] == [
        "issued",
        "delivered",
    ], summary(events)
    assert not [
        e for e in of(events, "candidate_command_received") if not e.payload.get("accepted")
    ], summary(events)
