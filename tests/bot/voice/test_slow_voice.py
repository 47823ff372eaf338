"""A voice slow to give its first audio is a slow voice, never a failed one (issue #30).

Seen before (CI, a loaded two-core machine): the examiner's follow-up was played to the candidate
but stored as cut, with nothing heard, and the exam paused for a fault of the voice. The hosted
voice had taken more than 3 s to send the first audio of the sentence; Pipecat's TTS service
closes an audio context that stays quiet for its stop-frame timeout (3 s by default), so the
utterance ended before its audio arrived, and the speech reporter took an utterance that ended
without audio for a failed request.

The whole bot core runs a session (``bot.runners.run_bot``, the offline examiner) with OpenAI's
speech endpoint on the local peer, which waits 4.5 s before the first audio of every sentence,
as a provider under load does. Every utterance must be heard whole: started, stored with the
audio's length, not cut, and no fault of the voice on record.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.audio import voice_io
from bot.runners import run_bot
from bot.session_runner import BotOptions
from tests.bot.conftest import Candidate, Watcher
from tests.bot.voice.support import ANSWER
from tests.bot.voice.test_speech_peers import configure
from tests.bot.voice.test_voice_exam import Loudspeaker, Microphone
from tests.support.speech_server import SpeechServer

pytestmark = pytest.mark.django_db(transaction=True)

FIRST_AUDIO_DELAY = 4.5
"""Seconds before the peer's first audio of a sentence: past Pipecat's default 3-s timeout."""


def test_a_voice_slow_to_start_is_heard_whole_and_is_no_fault(
    exam_session: Any, bot_settings: Any, tmp_path: Path
) -> None:
    watcher = Watcher()
    loudspeaker = Loudspeaker()
    with SpeechServer() as peer:
        configure(bot_settings, peer, stt="openai_compatible", tts="openai_compatible")
        peer.script(ANSWER)
        peer.speech_delay = FIRST_AUDIO_DELAY

        async def main() -> None:
            watcher.bind()
            options = BotOptions(
                io_factory=lambda: voice_io(input=Microphone(), output=loudspeaker),
                on_stored=watcher,
            )
            bot = asyncio.create_task(run_bot(exam_session.pk, options=options))
            try:
                await watcher.until_count("bot_ready", 1)
                await Candidate(exam_session.pk, watcher).ready()
                await watcher.until_count("examiner_utterance_final", 1, timeout=40)
            finally:
                bot.cancel()
                await asyncio.gather(bot, return_exceptions=True)

        asyncio.run(asyncio.wait_for(main(), 90))
        requests = len(peer.speeches)

    assert requests >= 1, "the voice was never asked"
    assert watcher.of("system_error") == [], [e["payload"] for e in watcher.of("system_error")]
    (started,) = watcher.of("examiner_utterance_started")[:1]
    (final,) = watcher.of("examiner_utterance_final")[:1]
    payload = final["payload"]
    assert payload["utteranceId"] == started["payload"]["utteranceId"]
    assert not payload.get("interrupted"), payload
    # Stored with the audio's length (seconds of speech), as the candidate heard it.
    assert payload["durationMs"] > 1500, payload
    assert loudspeaker.seconds() * 1000 >= payload["durationMs"] - 100, loudspeaker.seconds()
    paused = [e for e in watcher.of("exam_state_changed") if e["payload"]["toState"] == "paused"]
    assert paused == [], paused
