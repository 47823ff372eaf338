"""Leaving a voice exam and coming back (issue 15), in Chromium, on the embedded default:
daphne with the examiner bot inline (SmallWebRTC), the offline examiner, eSpeak NG.

Seen live: the candidate closed the browser; the bot kept speaking into the dead connection,
silence recovery skipped two parts, and the exam was stored as a normal completion.

Here the candidate's fake microphone plays silence. Once the examiner has asked the opening
question, the candidate closes the exam room: the media connection and the room's socket go.
After the grace period (3 s in this module's server) the exam pauses itself; nothing is spoken
into the empty room and no part is skipped while they are away. The candidate comes back to
the room within the absence window: the audio reconnects, the exam resumes at the same part and
the examiner asks the question again. A candidate who never comes back: after the absence
limit (45 s here) the exam ends ``aborted`` (``candidate_absent``), with nothing spoken, never
as a normal completion.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.exam_journey import EXAMINER_TIMEOUT, Exam, schedule_exam, start_voice_exam
from tests.browser.helpers import eventually
from tests.browser.microphone import Timeline, microphone_wav
from tests.browser.test_voice_turn_taking import of, stored, summary, voice_page
from tests.support.processes import asgi_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GRACE_SEC = 3
ABSENCE_LIMIT_SEC = 45
WINDOWS = {
    "VIVA_CONNECTION_GRACE_SECONDS": str(GRACE_SEC),
    "VIVA_ABSENCE_LIMIT_SECONDS": str(ABSENCE_LIMIT_SEC),
}


@pytest.fixture(scope="module")
def voice_server(django_db_setup: None) -> Iterator[str]:
    """daphne with the bots inline (SmallWebRTC's peer lives in the web process) and short
    connection windows."""
    with asgi_server(DJANGO_ALLOW_ASYNC_UNSAFE="", VIVA_BOT_RUNNER="inline", **WINDOWS) as address:
        yield f"http://{address}"


@pytest.fixture
def silent_microphone(tmp_path: Path) -> Timeline:
    return microphone_wav(tmp_path / "silence.wav", [30.0])


@pytest.fixture
def silent_page(browser: Any, voice_server: str, silent_microphone: Timeline) -> Iterator[Page]:
    yield from voice_page(browser, voice_server, str(silent_microphone.path), "voice_leaving")


def _warmup_asked(exam: Exam, after_seq: int = 0) -> list[str]:
    """What the examiner finished saying at the warm-up after ``after_seq``."""
    return [
        str(e.payload["text"])
        for e in of(stored(exam), "examiner_utterance_final", nodeId="warmup")
        if e.seq > after_seq
    ]


def _at_the_warmup_question(page: Page) -> tuple[Exam, str]:
    """A voice exam started, its warm-up question asked in full; the exam and the question."""
    exam = schedule_exam()
    start_voice_exam(page, exam)
    assert eventually(lambda: _warmup_asked(exam), EXAMINER_TIMEOUT), summary(stored(exam))
    return exam, _warmup_asked(exam)[-1]


def test_a_voice_candidate_who_never_comes_back_is_ended_aborted_after_the_absence_limit(
    silent_page: Page,
) -> None:
    exam, _ = _at_the_warmup_question(silent_page)
    spoken = len(of(stored(exam), "examiner_utterance_started"))
    left = time.monotonic()
    silent_page.goto("about:blank")  # the candidate closes the exam room for good
    assert eventually(
        lambda: of(stored(exam), "exam_completed"), ABSENCE_LIMIT_SEC + GRACE_SEC + 30
    ), summary(stored(exam))
    assert time.monotonic() - left >= ABSENCE_LIMIT_SEC - 1
    events = stored(exam)
    assert of(events, "exam_completed")[-1].payload["reason"] == "candidate_absent", summary(events)
    states = [e.payload["toState"] for e in of(events, "exam_state_changed")]
    assert states[-2:] == ["paused", "aborted"], summary(events)
    assert len(of(events, "examiner_utterance_started")) == spoken, summary(events)
    # No part was asked meanwhile: the warm-up, then only the end node the abort leads to.
    entered = [(e.payload["nodeId"], e.payload["nodeKind"]) for e in of(events, "node_entered")]
    assert entered[0] == ("warmup", "warmup"), summary(events)
    assert [kind for _, kind in entered[1:]] in ([], ["end"]), summary(events)


def test_leaving_a_voice_exam_pauses_it_and_coming_back_asks_the_question_again(
    silent_page: Page,
) -> None:
    page = silent_page
    exam, asked = _at_the_warmup_question(page)
    room = page.url
    page.goto("about:blank")  # the candidate closes the exam room: audio and socket go
    left_at = stored(exam)[-1].seq

    def paused() -> bool:
        return any(
            e.payload.get("reason") == "candidate_disconnected"
            for e in of(stored(exam), "exam_state_changed")
        )

    assert eventually(paused, GRACE_SEC + 20), summary(stored(exam))
    events = stored(exam)
    pause = next(
        e
        for e in of(events, "exam_state_changed")
        if e.payload.get("reason") == "candidate_disconnected"
    )
    # Nothing started into the empty room once the exam paused; no part skipped meanwhile.
    time.sleep(5)
    events = stored(exam)
    assert not [e for e in of(events, "examiner_utterance_started") if e.seq > pause.seq], summary(
        events
    )
    assert [e.payload["nodeId"] for e in of(events, "node_entered")][-1] == "warmup"
    assert not [e for e in of(events, "recovery_started") if e.seq > left_at], summary(events)
    assert of(events, "candidate_connection_changed", status="disconnected"), summary(events)

    # Back within the window: the audio reconnects, the exam resumes at the same part.
    page.goto(room)
    expect(page.get_by_text("Microphone: on")).to_be_visible(timeout=EXAMINER_TIMEOUT * 1000)

    def resumed() -> bool:
        return any(
            e.payload.get("reason") == "candidate_returned"
            for e in of(stored(exam), "exam_state_changed")
        )

    assert eventually(resumed, EXAMINER_TIMEOUT), summary(stored(exam))
    returned = next(
        e
        for e in of(stored(exam), "exam_state_changed")
        if e.payload.get("reason") == "candidate_returned"
    )
    assert eventually(lambda: asked in _warmup_asked(exam, returned.seq), EXAMINER_TIMEOUT), (
        summary(stored(exam))
    )
    events = stored(exam)
    assert asked in _warmup_asked(exam, returned.seq), summary(events)
    assert [e.payload["nodeId"] for e in of(events, "node_entered")][-1] == "warmup"
    assert not of(events, "exam_completed"), summary(events)
    time.sleep(3)
    events = stored(exam)
    faults = [
        e for e in events if e.seq > left_at and e.type in {"recovery_started", "system_error"}
    ]
    assert faults == [], summary(events)
