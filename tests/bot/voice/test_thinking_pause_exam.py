"""A candidate who stops to think in the middle of an answer keeps their question (issue #30).

Seen before: a 2.5-4 s pause inside the warm-up answer ended the spoken turn, the examiner moved
on to the Dijkstra question, and the rest of the warm-up answer was taken as the answer to it.

The whole bot core runs a real session (``bot.runners.run_bot``, the offline examiner, Postgres
or SQLite), with the recogniser and the voice served by the local protocol peers (OpenAI's
transcription and speech endpoints). The candidate's answer is spoken by eSpeak NG and played
at the wire's pace, with a thinking pause inside it. Both parts of the answer must be stored at
the warm-up node, and the examiner must say nothing until the answer is over.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pipecat.audio.utils import create_file_resampler

from bot.audio import VOICE_IN_SAMPLE_RATE
from bot.voice.espeak import Voice, engine
from publishing.services import version_publish
from tests.bot.conftest import Watcher, new_session
from tests.bot.voice.test_speech_peers import configure
from tests.bot.voice.test_voice_exam import Loudspeaker, Microphone, voice_exam_under_way
from tests.factories import DraftPackageFactory, example_document
from tests.support.speech_server import SpeechServer

pytestmark = pytest.mark.django_db(transaction=True)

ANSWERS = [
    pytest.param(
        ("I enjoyed graph algorithms most, especially, um,", 4.0, "shortest paths."),
        Voice(name="en-us+f2", rate_wpm=150),
        id="filler-4s",
    ),
    pytest.param(
        ("The part I liked best was the one about", 3.0, "minimum spanning trees."),
        Voice(name="en-gb", rate_wpm=140),
        id="open-word-3s",
    ),
]


async def _said(text: str, voice: Voice) -> bytes:
    espeak = engine()
    pcm = await asyncio.to_thread(espeak.synthesize, text, voice)
    return await create_file_resampler().resample(pcm, espeak.sample_rate, VOICE_IN_SAMPLE_RATE)


def _answer_at_the_warm_up(
    exam_session: Any,
    bot_settings: Any,
    parts: tuple[str, float, str],
    voice: Voice,
    until: tuple[str, int],
) -> Watcher:
    """A voice exam (the whole bot core, the speech peers): once the warm-up question was
    spoken, the candidate says ``first``, pauses ``pause`` s and says ``rest``; the events
    stored until ``until`` (type, count) is reached."""
    first, pause, rest = parts
    watcher = Watcher()
    microphone = Microphone()
    loudspeaker = Loudspeaker()
    with SpeechServer() as peer:
        configure(bot_settings, peer, stt="openai_compatible", tts="openai_compatible")
        peer.script(first, rest)

        async def main() -> None:
            watcher.bind()
            async with voice_exam_under_way(exam_session.pk, watcher, microphone, loudspeaker):
                silence = bytes(int(pause * VOICE_IN_SAMPLE_RATE) * 2)
                pcm = await _said(first, voice) + silence + await _said(rest, voice)
                await microphone.speak(pcm + bytes(VOICE_IN_SAMPLE_RATE * 2), VOICE_IN_SAMPLE_RATE)
                await watcher.until_count(*until, timeout=30)

        asyncio.run(asyncio.wait_for(main(), 120))
    return watcher


@pytest.mark.parametrize(("answer", "voice"), ANSWERS)
def test_a_thinking_pause_inside_the_warm_up_answer_keeps_the_warm_up_question(
    exam_session: Any,
    bot_settings: Any,
    answer: tuple[str, float, str],
    voice: Voice,
) -> None:
    first, _, rest = answer
    watcher = _answer_at_the_warm_up(
        exam_session, bot_settings, answer, voice, ("examiner_utterance_final", 2)
    )

    finals = [e["payload"] for e in watcher.of("transcript_final")]
    candidate = [t for t in finals if t["speaker"] == "candidate"]
    # Both parts of the answer were heard at the warm-up, the question it answers.
    assert [t["text"] for t in candidate] == [first, rest], candidate
    assert {t["nodeId"] for t in candidate} == {"warmup"}, candidate
    # The examiner waited for the whole answer: its reply began after the second part.
    started = watcher.of("examiner_utterance_started")
    assert len(started) >= 2
    second_part = next(e for e in watcher.of("transcript_final") if e["payload"]["text"] == rest)
    assert started[1]["seq"] > second_part["seq"], [e["payload"] for e in started]


GOES_ON_WITHIN_SECS = 2.4
"""How long the candidate of the going-on test waits, at most, for the examiner's bridge before
going on anyway: below the test package's 3-s finished pause, so the turn cannot settle first."""


def _answer_going_on_at_the_bridge(
    exam_session: Any, bot_settings: Any, first: str, rest: str, voice: Voice
) -> tuple[Watcher, float]:
    """A voice exam whose candidate says ``first``, stays silent until the examiner holds the
    warm-up's completion (its bridge begins) and then goes on with ``rest``; the events stored
    until the warm-up is left, and the silence the candidate left (seconds)."""
    watcher = Watcher()
    microphone = Microphone()
    breath = 0.0
    with SpeechServer() as peer:
        configure(bot_settings, peer, stt="openai_compatible", tts="openai_compatible")
        peer.script(first, rest)

        async def main() -> None:
            nonlocal breath
            watcher.bind()
            async with voice_exam_under_way(exam_session.pk, watcher, microphone, Loudspeaker()):
                await microphone.speak(await _said(first, voice), VOICE_IN_SAMPLE_RATE)
                tick = bytes(int(0.1 * VOICE_IN_SAMPLE_RATE) * 2)
                while not watcher.of("transition_held") and breath < GOES_ON_WITHIN_SECS:
                    await microphone.speak(tick, VOICE_IN_SAMPLE_RATE)
                    breath += 0.1
                pcm = await _said(rest, voice) + bytes(VOICE_IN_SAMPLE_RATE * 2)
                await microphone.speak(pcm, VOICE_IN_SAMPLE_RATE)
                await watcher.until_count("transition_decision", 1, timeout=30)

        asyncio.run(asyncio.wait_for(main(), 120))
    return watcher, breath


@pytest.fixture
def reply_pause_session(db: Any) -> Any:
    """A session of the demo exam whose package opts in to the 0.7-s reply pause (runtime
    semantics §18) and waits 3 s for a finished answer to be over (``finishedPauseSec``), so
    that a candidate who goes on after the examiner began its bridge is heard before the turn
    settles, however loaded the machine."""
    document = example_document("cs201-graph-algorithms")
    extensions = document["metadata"].setdefault("extensions", {})
    extensions["voice"] = {
        "replyPauseSec": 0.7,
        "finishedPauseSec": 3.0,
        "hesitantPauseSec": 3.5,
        "thinkingPauseSec": 6.0,
    }
    draft = DraftPackageFactory(document=document)
    return new_session(version_publish(draft=draft, user=draft.owner).version)


def test_an_answer_that_goes_on_after_the_bridge_began_stays_at_its_question(
    reply_pause_session: Any, bot_settings: Any
) -> None:
    # Runtime semantics §18: the first sentence is a finished answer, so the turn ends on the
    # reply pause and the examiner (the offline one finds the warm-up complete) begins its
    # bridge at once, holding the move to the Dijkstra question. The candidate goes on as the
    # bridge begins: the move is dropped, and the second sentence is the warm-up's.
    first = "I enjoyed graph algorithms most."
    rest = "Shortest paths in particular, because of a project on route planning."
    voice = Voice(name="en-us", rate_wpm=160)
    watcher, breath = _answer_going_on_at_the_bridge(
        reply_pause_session, bot_settings, first, rest, voice
    )

    candidate = [
        e for e in watcher.of("transcript_final") if e["payload"]["speaker"] == "candidate"
    ]
    assert [e["payload"]["text"] for e in candidate] == [first, rest]
    assert {e["payload"]["nodeId"] for e in candidate} == {"warmup"}, candidate
    (moved,) = watcher.of("transition_decision")
    assert moved["seq"] > candidate[1]["seq"], "the warm-up was left before the answer ended"
    held = [e for e in watcher.of("transition_held") if e["seq"] < candidate[1]["seq"]]
    # Held after the first sentence, within the reply pause's reach (not the finished pause's),
    # and dropped when the candidate went on; exactly one such pair.
    assert [e["payload"]["phase"] for e in held] == ["held", "dropped"], (breath, held)
    assert breath < GOES_ON_WITHIN_SECS, f"no bridge began within {breath:.1f} s of silence"
    bridges = [
        e
        for e in watcher.of("examiner_utterance_started")
        if e["payload"].get("purpose") == "bridge"
    ]
    assert bridges and bridges[0]["seq"] > held[0]["seq"], [e["payload"] for e in bridges]
