"""A German exam whose recogniser is down for good goes on typed (issue #30).

The offline recogniser hears English only, so a German or Spanish exam has no recogniser in
reserve. Seen before: with the hosted recogniser down, such an exam paused, resumed after the
back-off, paused again at the candidate's next words, and so on for as long as the outage
lasted; the candidate could not answer at all. The issue asks for a fallback "to the offline
recogniser/voice or to text mode with a message".

The whole bot core runs the German demo exam with OpenAI's transcription endpoint on the local
peer, which refuses every request (HTTP 503) once the opening has been heard. The candidate
talks through the outage as a person would. After ``VIVA_SPEECH_FALLBACK_SECONDS`` the
candidate must be told, in German, to type; the exam must carry on (no pause after it, even
though the recogniser keeps failing), and a typed answer must be stored and answered.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.audio import read_wav, voice_io
from bot.examiner_faults import TYPING_CODE
from bot.runners import run_bot
from bot.session_runner import BotOptions
from bot.voice.espeak import Voice
from ioa.runtime.texts import GERMAN
from tests.bot.conftest import Candidate, Watcher, new_session, publish_example
from tests.bot.voice.support import spoken_wav
from tests.bot.voice.test_provider_outage import _talk
from tests.bot.voice.test_speech_peers import configure
from tests.bot.voice.test_voice_exam import Loudspeaker, Microphone
from tests.support.speech_server import SpeechServer

pytestmark = pytest.mark.django_db(transaction=True)

FALLBACK_SECONDS = 6.0
SAID = "Am meisten Freude hat mir das Thema kürzeste Wege gemacht."
TYPED = "Am meisten Freude hat mir das Thema Graphalgorithmen gemacht, vor allem kürzeste Wege."


def test_a_german_exam_with_its_recogniser_down_goes_on_typed(
    bot_settings: Any, tmp_path: Path
) -> None:
    bot_settings.VIVA_BOT_FAULT_RETRY_SECONDS = 2.0
    bot_settings.VIVA_SPEECH_FALLBACK_SECONDS = FALLBACK_SECONDS
    session = new_session(publish_example("cs201-graph-algorithms.de"))
    watcher = Watcher()
    with SpeechServer() as peer:
        configure(bot_settings, peer, stt="openai_compatible", tts="openai_compatible")

        async def main() -> None:
            watcher.bind()
            microphone = Microphone()
            pcm, _ = read_wav(
                await spoken_wav(tmp_path / "said.wav", SAID, Voice(name="de", rate_wpm=140))
            )
            options = BotOptions(
                io_factory=lambda: voice_io(input=microphone, output=Loudspeaker(), language="de"),
                on_stored=watcher,
            )
            bot = asyncio.create_task(run_bot(session.pk, options=options))
            try:
                await watcher.until_count("bot_ready", 1)
                candidate = Candidate(session.pk, watcher)
                await candidate.ready()
                await watcher.until_count("examiner_utterance_final", 1, timeout=30)
                peer.fail_for("transcriptions", 600)
                await _talk(microphone, pcm, 16)
                await watcher.until(
                    lambda w: any(
                        e["payload"]["code"] == TYPING_CODE for e in w.of("system_error")
                    ),
                    timeout=30,
                    what="the switch to typing",
                )
                await candidate.answer(TYPED, timeout=30)
                await _talk(microphone, pcm, 8)  # the recogniser still fails: no new pause
                await asyncio.sleep(1)
            finally:
                bot.cancel()
                await asyncio.gather(bot, return_exceptions=True)

        asyncio.run(asyncio.wait_for(main(), 120))
        refused = len(peer.refused)

    assert refused >= 2, "the outage was not met"
    errors = [e for e in watcher.events if e["type"] == "system_error"]
    codes = [e["payload"]["code"] for e in errors]
    assert codes.count(TYPING_CODE) == 1 and set(codes) == {"stt_fault", TYPING_CODE}, codes
    (switched,) = [e for e in errors if e["payload"]["code"] == TYPING_CODE]
    assert switched["payload"]["details"]["provider"] == "typing"
    assert switched["payload"]["userMessage"] == GERMAN.typing_fallback  # the exam's language
    assert watcher.of("exam_completed") == []
    # After the switch: in progress, never paused again, though the recogniser kept failing.
    after = [e for e in watcher.of("exam_state_changed") if e["seq"] > switched["seq"]]
    assert after and after[0]["payload"]["toState"] == "in_progress", after
    assert [e for e in after if e["payload"]["toState"] == "paused"] == [], after
    # The typed answer is the candidate's answer, and the examiner answered it.
    (typed,) = [
        e
        for e in watcher.of("transcript_final")
        if e["payload"]["speaker"] == "candidate" and e["seq"] > switched["seq"]
    ]
    assert typed["payload"]["text"] == TYPED
    replies = [e for e in watcher.of("examiner_utterance_final") if e["seq"] > typed["seq"]]
    assert replies, [(e["seq"], e["type"]) for e in watcher.events[-20:]]
