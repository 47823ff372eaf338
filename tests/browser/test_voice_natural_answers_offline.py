"""The whole demo exam by voice with natural answers, offline, with Whisper tiny.en (issue #30).

``test_voice_natural_answers.py`` runs the same candidate against Deepgram's protocol (a peer
that hears exactly the words said). Here nothing hears them but the product's own offline
recogniser, chosen with ``VIVA_OFFLINE_STT=whisper`` (the packaged Whisper tiny.en weights),
and the examiner is the offline one: the embedded demo, without a key. The candidate answers
each question in another eSpeak NG voice and speed, with fillers and thinking pauses of 2-5 s
inside answers, through the exam room's microphone and WebRTC.

The recogniser does not hear every word right, so the words are not compared with what was
said; what must hold is what the candidate meets: the exam completes normally with every node
visited, nobody spoke into a thinking pause, no question was prompted for silence or skipped,
and the answers were heard well enough that the exam never paused itself for recognition.

Not yet met (issue #30): the examiner sometimes speaks into a thinking pause after words that
read as a finished sentence. Until session 31 it happened at the Dijkstra question in every run:
Whisper heard the request for time "let me think," as "let me sing." because the test's
microphone sent no packet in a pause and the end of each answer (~100 ms) reached the bot only
after it (``test_candidate_microphone.py``); with a microphone that sends through pauses Whisper
hears "let me think." (0.94). What remains (1 run of 1 since): "I would make each office a
vertex, and each network link" heard as "... and each network link." (0.74), a sentence that
reads as finished and, in eSpeak's voice, sounds finished; a follow-up came 2.2 s into the
3.5-s pause. Only the meaning says it is unfinished (a semantic end-of-turn model, which needs
weights this machine cannot fetch). The test then reports an expected failure with that
evidence, after every other assertion has held.

Seen on the way (load 4-10 on 2 cores): with the exam phrases in Whisper's prompt,
answers began with words never said ("answer. Okay, so...", "question. I think...") and one
answer was asked for twice and then the exam paused itself; with the node's question alone as
the prompt, the exam completed in 187 s and 190 s, with 3 and 4 requests to say it again (one
short answer asked for twice in the second run), and never paused. Whisper also once wrote a
repetition loop into a thinking pause ("He's a snake! He's a snake!"); the runtime took it as a
low-confidence piece.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.candidate_voice import Answer, Fragment, SpokenScript, say
from tests.browser.exam_journey import Exam, current_node, schedule_exam, start_voice_exam
from tests.browser.helpers import eventually
from tests.browser.test_voice_natural_answers import (
    EXAM_TIMEOUT,
    NATURAL,
    VOICES,
    _answer,
    _events,
    examiner_waits,
    voice_exam_page,
)
from tests.browser.test_voice_providers import NODES, Stored, completed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def exam() -> Exam:
    return schedule_exam()


@pytest.fixture
def page(browser: Any, django_db_setup: None) -> Iterator[Page]:
    with voice_exam_page(
        browser, "test_voice_natural_answers_offline", VIVA_OFFLINE_STT="whisper"
    ) as opened:
        yield opened


def _turns(exam: Exam) -> int:
    return len([e for e in _events(exam) if e.type == "transcript_final"])


def answer_every_question(page: Page, exam: Exam) -> list[tuple[str, float, float]]:
    """Answer each question as it is asked (module docstring) until the exam completes or
    :data:`EXAM_TIMEOUT` passes; each thinking pause as (node, started, ended)."""
    script = SpokenScript()  # the offline recogniser reads none of it; ``say`` records times
    pauses: list[tuple[str, float, float]] = []
    used: dict[str, int] = {}
    given = 0
    deadline = time.monotonic() + EXAM_TIMEOUT
    while not completed(exam) and time.monotonic() < deadline:
        if not eventually(lambda: examiner_waits(exam) or completed(exam), 60):
            break
        if completed(exam):
            break
        node = current_node(exam.session) or "warmup"
        options = NATURAL.get(node, [_answer("That is my answer.")])
        parts = options[min(used.get(node, 0), len(options) - 1)]
        used[node] = used.get(node, 0) + 1
        answer = Answer(
            tuple(Fragment(text, pause) for text, pause in parts), VOICES[given % len(VOICES)]
        )
        given += 1
        turns = _turns(exam)
        said = say(page, script, answer)
        for before, after in itertools.pairwise(said):
            assert before.ended is not None
            pauses.append((node, before.ended, after.started))
        eventually(lambda n=turns: completed(exam) or _turns(exam) > n, 30)
    return pauses


def around(exam: Exam, begun: float, ended: float) -> list[str]:
    """The events from 10 s before a thinking pause to its end, with their offsets and the
    words heard or said (what a failure needs to show)."""
    return [
        f"{e.timestamp.timestamp() - begun:+.2f} {e.type} "
        f"{e.payload.get('text') or e.payload.get('purpose') or e.payload.get('reason') or ''}"
        f" {e.payload.get('confidence', '')}"
        for e in _events(exam)
        if begun - 10 < e.timestamp.timestamp() < ended
    ]


@pytest.mark.timeout(420)
def test_the_offline_demo_exam_is_finished_by_voice_with_natural_answers(
    page: Page, exam: Exam
) -> None:
    start_voice_exam(page, exam)
    pauses = answer_every_question(page, exam)

    log = Stored.of(exam)
    assert completed(exam), f"not completed by voice:\n{log.summary()}"
    (completion,) = log.payloads("exam_completed")
    assert completion["reason"] == "all_nodes_visited", log.summary()
    assert len([p["nodeId"] for p in log.payloads("node_entered")]) == len(NODES)
    assert {p["reason"] for p in log.payloads("node_exited")} <= {
        "completed",
        "follow_ups_exhausted",
    }, log.summary()
    heard = [p for p in log.payloads("transcript_final") if p.get("speaker") == "candidate"]
    assert heard and all(p.get("text", "").strip() for p in heard), log.summary()
    # No question was prompted for silence. Heard well enough: where the recogniser was unsure
    # the candidate may be asked to say it again (and can correct it on screen), but the exam
    # never paused itself for recognition trouble (seen with PocketSphinx, and with Whisper
    # while its prompt held the exam phrases: 'recovery_escalation:stt_low_confidence').
    assert not log.payloads("recovery_started", recoveryType="silence"), log.summary()
    states = [p["toState"] for p in log.payloads("exam_state_changed")]
    assert "paused" not in states, log.summary()
    # Nobody spoke into a thinking pause.
    started = [e for e in _events(exam) if e.type == "examiner_utterance_started"]  # type: list[SessionEvent]
    talked_into = [
        (node, [e.payload for e in talk], around(exam, begun, ended))
        for node, begun, ended in pauses
        if (talk := [e for e in started if begun < e.timestamp.timestamp() < ended])
    ]
    if talked_into:
        # Known defect (issue #30, open): words that read as a finished sentence and sound
        # finished ("... and each network link.") end the turn although the candidate is only
        # pausing (module docstring); the evidence is in the reason. Everything above must
        # hold regardless.
        pytest.xfail(f"the examiner spoke into a thinking pause: {talked_into}")
