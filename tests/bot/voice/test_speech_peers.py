"""Voice exams through hosted speech providers, served by local protocol peers
(``tests.support.speech_server``): Deepgram's live WebSocket recogniser with interim results, and
OpenAI's transcription and speech endpoints over HTTP. The providers are chosen by configuration
(``VIVA_STT_PROVIDER`` …) exactly as a deployment chooses them; nothing inside Pipecat is patched.

Each test runs the whole bot core (``bot.runners.run_bot``, the offline examiner, a real session):
the opening is spoken by the TTS peer, the candidate's spoken answer goes to the STT peer, its
interim results are published as ``transcript_delta`` (live captions, never stored), the final is
stored as ``transcript_final`` with the provider's confidence, and the examiner answers aloud.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.audio import read_wav, voice_io
from bot.runners import run_bot
from bot.session_runner import BotOptions
from bot.voice.espeak import Voice
from sessions.models import SessionEvent
from tests.bot.conftest import Candidate, Watcher
from tests.bot.voice.support import ANSWER, ANSWER_VOICE, spoken_wav
from tests.bot.voice.test_voice_exam import Loudspeaker, Microphone
from tests.support.speech_server import SpeechServer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def peer() -> Iterator[SpeechServer]:
    with SpeechServer() as server:
        yield server


def configure(settings: Any, peer: SpeechServer, *, stt: str, tts: str) -> None:
    settings.VIVA_STT_PROVIDER = stt
    settings.VIVA_STT_API_KEY = "peer-key"
    settings.VIVA_STT_BASE_URL = peer.deepgram_url if stt == "deepgram" else peer.base_url
    settings.VIVA_TTS_PROVIDER = tts
    settings.VIVA_TTS_API_KEY = "peer-key"
    settings.VIVA_TTS_BASE_URL = peer.base_url
    settings.VIVA_TTS_VOICE = "alloy"


def run_voice_exam(
    session_id: Any,
    tmp_path: Path,
    *,
    answer_spoken: bool = True,
    answer: str = ANSWER,
    voice: Voice = ANSWER_VOICE,
    language: str = "en",
) -> tuple[Watcher, Loudspeaker]:
    """The exam started, its opening heard, ``answer`` spoken (eSpeak's ``voice``) and the
    examiner's reply to it; in ``language`` (the exam's, as the transport gives it)."""
    watcher = Watcher()
    microphone = Microphone()
    loudspeaker = Loudspeaker()

    async def main() -> None:
        watcher.bind()
        pcm, rate = read_wav(await spoken_wav(tmp_path / "answer.wav", answer, voice))
        options = BotOptions(
            io_factory=lambda: voice_io(input=microphone, output=loudspeaker, language=language),
            on_stored=watcher,
        )
        bot = asyncio.create_task(run_bot(session_id, options=options))
        try:
            await watcher.until_count("bot_ready", 1)
            await Candidate(session_id, watcher).ready()
            await watcher.until_count("examiner_utterance_final", 1, timeout=30)
            if answer_spoken:
                await microphone.speak(pcm, rate)
                await watcher.until(
                    lambda w: any(
                        e["payload"]["speaker"] == "candidate" for e in w.of("transcript_final")
                    ),
                    timeout=30,
                    what="the candidate's transcript",
                )
                await watcher.until_count("examiner_utterance_final", 2, timeout=30)
        finally:
            bot.cancel()
            await asyncio.gather(bot, return_exceptions=True)

    asyncio.run(asyncio.wait_for(main(), 90))
    return watcher, loudspeaker


def test_a_voice_exam_on_deepgram_live_and_openai_speech(
    exam_session: Any, bot_settings: Any, peer: SpeechServer, tmp_path: Path
) -> None:
    configure(bot_settings, peer, stt="deepgram", tts="openai")
    peer.script(ANSWER)

    watcher, loudspeaker = run_voice_exam(exam_session.pk, tmp_path)

    # The recogniser was reached over its live protocol, with interim results asked for.
    assert peer.sockets, "no Deepgram connection"
    query = peer.sockets[0].query
    assert (query["interim_results"], query["encoding"], query["sample_rate"]) == (
        "true",
        "linear16",
        "16000",
    )
    assert "Finalize" in peer.sockets[0].control  # the VAD's end of speech finalises
    # Interim results became live captions: growing prefixes of the answer, never stored.
    deltas = [e["payload"] for e in watcher.of("transcript_delta")]
    assert deltas, "no live caption was published"
    assert all(d["speaker"] == "candidate" and d["isPartial"] is True for d in deltas)
    assert all(ANSWER.startswith(d["text"]) for d in deltas)
    assert all(e.get("seq") is None for e in watcher.of("transcript_delta"))
    stored_types = set(
        SessionEvent.objects.filter(session=exam_session).values_list("type", flat=True)
    )
    assert "transcript_delta" not in stored_types
    # The final replaced them: stored with the provider's confidence.
    finals = [e["payload"] for e in watcher.of("transcript_final")]
    candidate = [t for t in finals if t["speaker"] == "candidate"]
    assert [t["text"] for t in candidate] == [ANSWER]
    assert candidate[0]["confidence"] == pytest.approx(0.95)
    # The examiner spoke through the speech endpoint: every utterance, in the chosen voice.
    spoken = [e["payload"]["text"] for e in watcher.of("examiner_utterance_final")]
    asked = " ".join(s["input"] for s in peer.speeches)
    assert len(spoken) >= 2
    assert all(text.split(".")[0] in asked for text in spoken), (spoken, asked)
    assert {s["voice"] for s in peer.speeches} == {"alloy"}
    assert {s["response_format"] for s in peer.speeches} == {"pcm"}
    assert loudspeaker.seconds() > 1.0
    usage = {
        (u["payload"]["component"], u["payload"]["provider"]) for u in watcher.of("usage_reported")
    }
    assert ("stt", "deepgram") in usage or not watcher.of("usage_reported")


def test_a_voice_exam_on_an_openai_compatible_transcription_endpoint(
    exam_session: Any, bot_settings: Any, peer: SpeechServer, tmp_path: Path
) -> None:
    configure(bot_settings, peer, stt="openai_compatible", tts="openai_compatible")
    peer.script(ANSWER)

    watcher, loudspeaker = run_voice_exam(exam_session.pk, tmp_path)

    assert len(peer.transcriptions) >= 1
    sent = peer.transcriptions[0]
    assert sent["model"] == "whisper-1" and sent["language"] == "en"
    assert sent["sample_rate"] == 16000 and sent["audio_bytes"] > 16000  # a whole segment
    candidate = [
        e["payload"]
        for e in watcher.of("transcript_final")
        if e["payload"]["speaker"] == "candidate"
    ]
    assert [t["text"] for t in candidate] == [ANSWER]
    assert len(watcher.of("examiner_utterance_final")) >= 2
    assert loudspeaker.seconds() > 1.0


def test_a_failing_speech_provider_is_a_recorded_recovered_fault(
    exam_session: Any, bot_settings: Any, peer: SpeechServer, tmp_path: Path
) -> None:
    configure(bot_settings, peer, stt="deepgram", tts="openai")
    # The opening's first sentence fails, the SDK's own retries included.
    peer.fail_next("speech", 503, times=3)

    watcher, _ = run_voice_exam(exam_session.pk, tmp_path, answer_spoken=False)

    faults = [e["payload"] for e in watcher.of("system_error")]
    assert faults and all(f["code"] == "tts_fault" for f in faults), faults
    assert "503" in faults[0]["message"]
    recoveries = [e["payload"] for e in watcher.of("recovery_started")]
    assert recoveries, "the fault was not handled by the runtime"
    # Never silence: the exam paused with a spoken message and resumed, aloud, after the fault.
    states = [e["payload"]["toState"] for e in watcher.of("exam_state_changed")]
    assert "paused" in states and states[states.index("paused") + 1] == "in_progress", states
    assert len(peer.speeches) > 3 and len(watcher.of("examiner_utterance_final")) >= 2
