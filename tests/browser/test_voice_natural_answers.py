"""A whole demo exam by voice with answers as candidates give them (issue #30), in Chromium.

Seen before: a thinking pause of 2.5-4 s inside an answer ended the spoken turn; the rest of the
answer became the answer to the next question, which was then judged off-topic and skipped.

The candidate here waits for each question and then answers in natural, unscripted-sounding
phrasing, with fillers, and stops to think in mid-sentence for 2 to 5 s (after "um", a comma,
"and then", "let me think"). Each answer is in another eSpeak NG voice and speed. The speech goes
through the exam room's microphone and WebRTC (``tests/browser/candidate_voice.py``) to the bot,
and Deepgram's live protocol (the local peer) hears the words that were said. The stored log
must then show every answer as one candidate turn, whole, at the question it answered; no
examiner speech during a thinking pause; no silence prompt, no skip; a normal completion.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection
from playwright.sync_api import Page

from bot.voice.espeak import Voice
from sessions.models import SessionEvent
from tests.browser.candidate_voice import (
    MICROPHONE_SCRIPT,
    Answer,
    Fragment,
    Said,
    SpokenScript,
    say,
)
from tests.browser.exam_journey import Exam, current_node, schedule_exam, start_voice_exam
from tests.browser.helpers import CHROMIUM, CHROMIUM_ARGS, eventually, remember_artifact_name
from tests.browser.test_voice_providers import HOSTED, NODES, Stored, completed
from tests.support.processes import asgi_server
from tests.support.speech_server import SpeechServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VOICES = (
    Voice(name="en-us+f2", rate_wpm=140),
    Voice(name="en-gb+m3", rate_wpm=165),
    Voice(name="en-us+m1", rate_wpm=150),
    Voice(name="en-gb+f4", rate_wpm=130),
)
"""A different voice and speed for each answer, in turn."""


def _answer(*parts: str | float) -> list[tuple[str, float]]:
    """``("words", pause, "words", ...)`` as (words, pause after) pairs."""
    pairs: list[tuple[str, float]] = []
    for part in parts:
        if isinstance(part, str):
            pairs.append((part, 0.0))
        else:
            pairs[-1] = (pairs[-1][0], float(part))
    return pairs


NATURAL: dict[str, list[list[tuple[str, float]]]] = {
    "warmup": [
        _answer("Um, I think I liked the part on, uh,", 2.5, "graph algorithms the most, really."),
    ],
    "q-dijkstra": [
        _answer(
            "Okay, so it keeps a tentative distance for every vertex, and then",
            3.0,
            "it repeatedly picks the unvisited vertex with the smallest distance and relaxes "
            "all of its outgoing edges.",
        ),
        _answer(
            "With a binary heap as the priority queue the running time is, let me think,",
            4.0,
            "O of V plus E, times log V. With just an array it would be V squared.",
        ),
        _answer(
            "If an edge is negative, a distance that was already settled could, um,",
            5.0,
            "turn out to be wrong. So for negative weights I would use Bellman-Ford instead.",
        ),
        _answer("I think that is all I know about it."),
    ],
    "scn-delivery-routes": [
        _answer(
            "I would make the depot and each shop a vertex, and every road",
            3.5,
            "an edge, weighted by the travel time.",
        ),
        _answer(
            "The travel times can't be negative, so",
            2.0,
            "Dijkstra from the depot works, and it gives the fastest route to every shop.",
        ),
        _answer("Yes, that would be my whole approach."),
    ],
    "scn-network-latency": [
        _answer(
            "I would make each office a vertex, and each network link",
            3.5,
            "an edge, weighted by its latency.",
        ),
        _answer(
            "Latencies are never negative, so",
            2.0,
            "Dijkstra from headquarters gives the lowest latency path to every office.",
        ),
        _answer("Yes, that would be my whole approach."),
    ],
    "wrapup": [_answer("Hmm, no,", 2.0, "I don't think I have anything to add. Thank you.")],
}
REACTION_SECS = 0.8
"""How long after the examiner's last word the candidate starts to answer."""
EXAM_TIMEOUT = 300.0


@pytest.fixture
def exam() -> Exam:
    return schedule_exam()


@pytest.fixture
def script() -> SpokenScript:
    return SpokenScript()


@pytest.fixture
def peer(script: SpokenScript) -> Iterator[SpeechServer]:
    with SpeechServer(confidence=0.93) as server:
        server.transcribe, server.upcoming = script.heard, script.upcoming
        yield server


@contextmanager
def voice_exam_page(browser: Any, artifact: str, **env: str) -> Iterator[Page]:
    """A page of Chromium with a fake microphone (``MICROPHONE_SCRIPT``) on a live server with
    inline bots and ``env``; fails the test if the page raised an error."""
    with asgi_server(DJANGO_ALLOW_ASYNC_UNSAFE="", VIVA_BOT_RUNNER="inline", **env) as address:
        chromium = browser.browser_type.launch(
            executable_path=str(CHROMIUM),
            args=[
                *CHROMIUM_ARGS,
                "--use-fake-ui-for-media-stream",
                "--autoplay-policy=no-user-gesture-required",
            ],
        )
        context = chromium.new_context(
            base_url=f"http://{address}", viewport={"width": 1280, "height": 900}, locale="en-GB"
        )
        context.grant_permissions(["microphone"])
        context.add_init_script(MICROPHONE_SCRIPT)
        opened = context.new_page()
        remember_artifact_name(opened, artifact)
        errors: list[str] = []
        opened.on("pageerror", lambda error: errors.append(str(error)))
        try:
            yield opened
        finally:
            remember_artifact_name(opened, None)
            context.close()
            chromium.close()
        assert errors == [], errors


@pytest.fixture
def page(browser: Any, django_db_setup: None, peer: SpeechServer) -> Iterator[Page]:
    env = HOSTED["deepgram"].environment(peer)
    with voice_exam_page(browser, "test_voice_natural_answers", **env) as opened:
        yield opened


def _events(exam: Exam) -> list[SessionEvent]:
    try:
        return list(SessionEvent.objects.filter(session=exam.session).order_by("seq"))
    finally:
        connection.close()


def examiner_waits(exam: Exam) -> bool:
    """The examiner has spoken since the candidate's latest turn, its last utterance is over
    and nothing has been said for :data:`REACTION_SECS`."""
    events = _events(exam)
    spoken = [e for e in events if e.type.startswith("examiner_utterance_")]
    turns = [e for e in events if e.type == "transcript_final"]
    if not spoken or spoken[-1].type != "examiner_utterance_final":
        return False
    if turns and turns[-1].seq > spoken[-1].seq:
        return False
    return time.time() - spoken[-1].timestamp.timestamp() >= REACTION_SECS


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def answers_as_stored(log: Stored) -> list[tuple[str, list[str]]]:
    """The candidate's stored transcripts as answers: the pieces the recogniser cut an answer
    into at its pauses (one ``transcript_final`` each, stored as heard), joined up to the next
    time the examiner spoke; each with the node the first piece was stored at (all the
    pieces' nodes, when they differ)."""
    answers: list[tuple[str, list[str]]] = []
    pieces: list[dict[str, Any]] = []
    for event in [*log.events, None]:
        if event is None or event.type == "examiner_utterance_started":
            if pieces:
                nodes = "+".join(dict.fromkeys(p["nodeId"] for p in pieces))
                answers.append((nodes, [w for p in pieces for w in _words(p["text"])]))
            pieces = []
        elif event.type == "transcript_final" and event.payload.get("speaker") == "candidate":
            pieces.append(event.payload)
    return answers


@pytest.mark.timeout(420)
def test_natural_answers_with_thinking_pauses_finish_the_demo_exam_by_voice(
    page: Page, exam: Exam, script: SpokenScript
) -> None:
    start_voice_exam(page, exam)
    given: list[tuple[str, Answer, list[Said]]] = []
    used: dict[str, int] = {}
    deadline = time.monotonic() + EXAM_TIMEOUT
    while not completed(exam) and time.monotonic() < deadline:
        if not eventually(lambda: examiner_waits(exam) or completed(exam), 60):
            break
        if completed(exam):
            break
        node = current_node(exam.session) or "warmup"
        connection.close()
        options = NATURAL.get(node, [_answer("That is my answer.")])
        parts = options[min(used.get(node, 0), len(options) - 1)]
        used[node] = used.get(node, 0) + 1
        answer = Answer(
            tuple(Fragment(text, pause) for text, pause in parts),
            VOICES[len(given) % len(VOICES)],
        )
        given.append((node, answer, say(page, script, answer)))
        turns = len([e for e in _events(exam) if e.type == "transcript_final"])
        eventually(
            lambda n=turns: (
                completed(exam)
                or len([e for e in _events(exam) if e.type == "transcript_final"]) > n
            ),
            30,
        )
    log = Stored.of(exam)
    assert completed(exam), f"not completed by voice:\n{log.summary()}"
    (completion,) = log.payloads("exam_completed")
    assert completion["reason"] == "all_nodes_visited", log.summary()
    visited = [p["nodeId"] for p in log.payloads("node_entered")]
    assert len(visited) == len(NODES), visited

    # Every answer is heard whole, at the question it answered: the pieces the recogniser cut
    # it into at its pauses (one transcript each, stored as heard) are all of its words, and
    # the examiner replied once, after the last one.
    assert answers_as_stored(log) == [(node, _words(answer.text)) for node, answer, _ in given], (
        log.summary()
    )
    # Nobody spoke into a thinking pause, and no question was prompted for silence or skipped.
    pauses = [
        (said[index].ended, said[index + 1].started)
        for _, _, said in given
        for index in range(len(said) - 1)
    ]
    events = [e for e in _events(exam) if e.type == "examiner_utterance_started"]
    for started_pause, ended_pause in pauses:
        assert started_pause is not None
        talk = [
            e.payload.get("text")
            for e in events
            if started_pause < e.timestamp.timestamp() < ended_pause
        ]
        assert talk == [], (talk, log.summary())
    assert not log.payloads("recovery_started", recoveryType="silence"), log.summary()
    assert {p["reason"] for p in log.payloads("node_exited")} <= {
        "completed",
        "follow_ups_exhausted",
    }, log.summary()
